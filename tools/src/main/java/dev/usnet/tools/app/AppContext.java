package dev.usnet.tools.app;

import dev.usnet.tools.topology.build.Topology;

/**
 * What making an app needs besides its entry: the topology it runs in, whether it comes from the file (before the
 * run) or from {@code usnet ctl app start} (while the daemon runs), and the next free ICMP echo identifier.
 */
public final class AppContext {
    private final Topology topology;
    private final boolean live;
    private int nextEchoId;

    public AppContext(Topology topology, boolean live, int firstEchoId) {
        this.topology = topology;
        this.live = live;
        this.nextEchoId = firstEchoId;
    }

    public Topology topology() {
        return topology;
    }

    /** Started while the daemon runs ({@code usnet ctl app start}), not from the topology file. */
    public boolean live() {
        return live;
    }

    /** An ICMP echo identifier no other app made with this context uses. */
    public int takeEchoId() {
        return nextEchoId++;
    }
}
