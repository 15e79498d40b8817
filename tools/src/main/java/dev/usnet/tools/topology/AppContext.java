package dev.usnet.tools.topology;

/**
 * What making an app needs besides its entry: the topology it runs in, whether it comes from the file (before the
 * run) or from {@code usnet ctl app start} (while the daemon runs), and the next free ICMP echo identifier.
 */
public final class AppContext {
    private final Topology topology;
    private final boolean live;
    private int nextEchoId;

    AppContext(Topology topology, boolean live, int firstEchoId) {
        this.topology = topology;
        this.live = live;
        this.nextEchoId = firstEchoId;
    }

    Topology topology() {
        return topology;
    }

    /** Started while the daemon runs ({@code usnet ctl app start}), not from the topology file. */
    boolean live() {
        return live;
    }

    /** An ICMP echo identifier no other app made with this context uses. */
    int takeEchoId() {
        return nextEchoId++;
    }
}
