package dev.usnet.core.bridge;

import dev.usnet.core.wire.MacAddr;

/** One forwarding database entry (net_bridge_fdb_entry): where a MAC address was last seen. */
public final class FdbEntry {
    final long mac;
    volatile BridgePort port;
    volatile long updated;
    final boolean local;
    final boolean isStatic;

    FdbEntry(long mac, BridgePort port, long now, boolean local, boolean isStatic) {
        this.mac = mac;
        this.port = port;
        this.updated = now;
        this.local = local;
        this.isStatic = isStatic;
    }

    public long mac() {
        return mac;
    }

    /** The port behind which the address lives; null for the bridge device's own address. */
    public BridgePort port() {
        return port;
    }

    /** Addresses of the bridge itself and of its ports: frames to them go up to the bridge device. */
    public boolean isLocal() {
        return local;
    }

    public boolean isStatic() {
        return isStatic;
    }

    public long updatedNanos() {
        return updated;
    }

    /** {@code bridge fdb} syntax. */
    @Override
    public String toString() {
        return MacAddr.format(mac) + (port != null ? " dev " + port.dev().name() : "")
                + (local ? " master permanent" : isStatic ? " master static" : " master");
    }
}
