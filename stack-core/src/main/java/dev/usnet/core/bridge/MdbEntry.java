package dev.usnet.core.bridge;

import java.util.Arrays;

/**
 * One IPv6 group in a snooping bridge's group table (net_bridge_mdb_entry): the ports that have a listener for
 * it and, when the bridge's own stack reported it, the bridge itself (host_joined). Each membership ends at its
 * own time (the port group's timer); a membership whose time has passed counts as gone. Changed on the
 * namespace thread only.
 */
public final class MdbEntry {
    final long groupHi;
    final long groupLo;
    private BridgePort[] ports = new BridgePort[2];
    private long[] until = new long[2];
    private int n;
    /** When the bridge's own membership ends; {@link Long#MIN_VALUE} when it has none. */
    long hostUntil = Long.MIN_VALUE;

    MdbEntry(long groupHi, long groupLo) {
        this.groupHi = groupHi;
        this.groupLo = groupLo;
    }

    public long groupHi() {
        return groupHi;
    }

    public long groupLo() {
        return groupLo;
    }

    /** Whether {@code port} has a listener at {@code now}. */
    public boolean hasMember(BridgePort port, long now) {
        int i = indexOf(port);
        return i >= 0 && until[i] > now;
    }

    /** Whether the bridge's own stack is a listener at {@code now}. */
    public boolean hostJoined(long now) {
        return hostUntil > now;
    }

    /** When {@code port}'s membership ends, or {@link Long#MIN_VALUE} when it has none. */
    public long memberUntil(BridgePort port) {
        int i = indexOf(port);
        return i < 0 ? Long.MIN_VALUE : until[i];
    }

    /** Starts or renews {@code port}'s membership until {@code time} (mod_timer: later or earlier). */
    void join(BridgePort port, long time) {
        int i = indexOf(port);
        if (i < 0) {
            if (n == ports.length) {
                ports = Arrays.copyOf(ports, n * 2);
                until = Arrays.copyOf(until, n * 2);
            }
            i = n++;
            ports[i] = port;
        }
        until[i] = time;
    }

    /** Brings {@code port}'s membership forward to {@code time} if it would last longer (a leave, a specific query). */
    void shorten(BridgePort port, long time, long now) {
        int i = indexOf(port);
        if (i >= 0 && until[i] > now && until[i] > time) {
            until[i] = time;
        }
    }

    /** Brings every membership, the bridge's own too, forward to {@code time} if it would last longer. */
    void shortenAll(long time, long now) {
        for (int i = 0; i < n; i++) {
            if (until[i] > now && until[i] > time) {
                until[i] = time;
            }
        }
        if (hostUntil > now && hostUntil > time) {
            hostUntil = time;
        }
    }

    void remove(BridgePort port) {
        int i = indexOf(port);
        if (i >= 0) {
            n--;
            ports[i] = ports[n];
            until[i] = until[n];
            ports[n] = null;
        }
    }

    /** Drops the memberships that ended; true when none is left (the group can go). */
    boolean expire(long now) {
        for (int i = n - 1; i >= 0; i--) {
            if (until[i] <= now) {
                remove(ports[i]);
            }
        }
        return n == 0 && hostUntil <= now;
    }

    int memberCount() {
        return n;
    }

    private int indexOf(BridgePort port) {
        for (int i = 0; i < n; i++) {
            if (ports[i] == port) {
                return i;
            }
        }
        return -1;
    }
}
