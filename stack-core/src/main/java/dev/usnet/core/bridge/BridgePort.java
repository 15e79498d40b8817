package dev.usnet.core.bridge;

import dev.usnet.core.device.Device;
import dev.usnet.core.netem.LinkEmulation;
import dev.usnet.core.netem.NetemParams;

/** A device enslaved to a bridge (net_bridge_port) with its per-port flags. */
public final class BridgePort {
    private final Bridge bridge;
    private final Device dev;
    private volatile boolean learning = true;
    private volatile boolean unicastFlood = true;
    private volatile boolean multicastFlood = true;
    private volatile boolean broadcastFlood = true;
    private volatile boolean hairpin;
    /** Index in the bridge's port slots (changed under the bridge's lock). */
    int slot;
    /** FDB entries pointing here other than the port device's own local one (changed under the FDB's lock). */
    int fdbEntries;

    BridgePort(Bridge bridge, Device dev) {
        this.bridge = bridge;
        this.dev = dev;
    }

    public Bridge bridge() {
        return bridge;
    }

    public Device dev() {
        return dev;
    }

    /** Forwarding state: with STP off, a port forwards while its device is up and has carrier. */
    public boolean forwarding() {
        return dev.isUp() && dev.hasCarrier();
    }

    public boolean learning() {
        return learning;
    }

    public void setLearning(boolean v) {
        learning = v;
    }

    public boolean unicastFlood() {
        return unicastFlood;
    }

    public void setUnicastFlood(boolean v) {
        unicastFlood = v;
    }

    public boolean multicastFlood() {
        return multicastFlood;
    }

    public void setMulticastFlood(boolean v) {
        multicastFlood = v;
    }

    public boolean broadcastFlood() {
        return broadcastFlood;
    }

    public void setBroadcastFlood(boolean v) {
        broadcastFlood = v;
    }

    /**
     * Link emulation on the frames the bridge sends out of this port: the port device's own transmit-side
     * emulation ({@link Device#setNetem}, knobs {@code usnet.netem.<port>.*}).
     */
    public void setNetem(NetemParams params) {
        dev.setNetem(params);
    }

    /** The port device's link emulation with its counters, or null when it has none. */
    public LinkEmulation netem() {
        return dev.netem();
    }

    /** Reflective relay: may send a frame back out of the port it came in on. */
    public boolean hairpin() {
        return hairpin;
    }

    public void setHairpin(boolean v) {
        hairpin = v;
    }
}
