package dev.usnet.core.stats;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Per-device counters as {@code /proc/net/dev} and {@code ip -s link} show them. The packet and byte counts are
 * written only from the owning namespace's thread, by plain (opaque) stores: like Linux's per-CPU device stats they
 * need no atomic instruction, and a volatile store costs a full fence on every frame. Readers on other threads
 * see a recent value (the fields are volatile for them). Drops and errors can also be counted by another thread (a
 * veth peer finding this namespace's backlog full), so those add atomically.
 */
public final class DeviceStats {
    private static final VarHandle RX_PACKETS;
    private static final VarHandle RX_BYTES;
    private static final VarHandle RX_MULTICAST;
    private static final VarHandle TX_PACKETS;
    private static final VarHandle TX_BYTES;
    private static final VarHandle RX_ERRORS;
    private static final VarHandle RX_DROPPED;
    private static final VarHandle TX_DROPPED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            RX_PACKETS = l.findVarHandle(DeviceStats.class, "rxPackets", long.class);
            RX_BYTES = l.findVarHandle(DeviceStats.class, "rxBytes", long.class);
            RX_MULTICAST = l.findVarHandle(DeviceStats.class, "rxMulticast", long.class);
            TX_PACKETS = l.findVarHandle(DeviceStats.class, "txPackets", long.class);
            TX_BYTES = l.findVarHandle(DeviceStats.class, "txBytes", long.class);
            RX_ERRORS = l.findVarHandle(DeviceStats.class, "rxErrors", long.class);
            RX_DROPPED = l.findVarHandle(DeviceStats.class, "rxDropped", long.class);
            TX_DROPPED = l.findVarHandle(DeviceStats.class, "txDropped", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public volatile long rxPackets;
    public volatile long rxBytes;
    public volatile long rxErrors;
    public volatile long rxDropped;
    public volatile long rxMulticast;
    public volatile long txPackets;
    public volatile long txBytes;
    public volatile long txErrors;
    public volatile long txDropped;

    /** A frame received (owning namespace's thread only). */
    public void rx(int bytes, boolean multicast) {
        RX_PACKETS.setOpaque(this, (long) RX_PACKETS.getOpaque(this) + 1);
        RX_BYTES.setOpaque(this, (long) RX_BYTES.getOpaque(this) + bytes);
        if (multicast) {
            RX_MULTICAST.setOpaque(this, (long) RX_MULTICAST.getOpaque(this) + 1);
        }
    }

    /** A frame sent (owning namespace's thread only). */
    public void tx(int bytes) {
        TX_PACKETS.setOpaque(this, (long) TX_PACKETS.getOpaque(this) + 1);
        TX_BYTES.setOpaque(this, (long) TX_BYTES.getOpaque(this) + bytes);
    }

    public void rxDrop() {
        RX_DROPPED.getAndAdd(this, 1L);
    }

    public void txDrop() {
        TX_DROPPED.getAndAdd(this, 1L);
    }

    public void rxError() {
        RX_ERRORS.getAndAdd(this, 1L);
    }
}
