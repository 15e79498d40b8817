package dev.usnet.tools.packetdrill;

import java.util.HashMap;
import java.util.Map;

/**
 * The connection the script plays the peer of, and how its numbers map between script and wire.
 *
 * <p>The remote side's sequence space (the script's own) is absolute: its ISN is what its first SYN says, and
 * outbound {@code ack}/SACK values are compared unchanged. The local side's space is relative: the stack's live
 * ISN is learned from its SYN or SYN-ACK, and the script's {@code seq} of that packet (normally 0) stands for it.
 * TS values the stack sends are remembered script value → live value, so an inbound {@code ecr} naming a script
 * value carries the live value the stack really sent.
 */
final class Flow {
    private static final long MASK = 0xFFFF_FFFFL;
    /** packetdrill's port for {@code bind(fd, ...)} and {@code connect(fd, ...)} when the address is {@code ...}. */
    static final int DEFAULT_PORT = 8080;
    /** The script's port for a connection it opens to a listening socket. */
    static final int DEFAULT_REMOTE_EPHEMERAL_PORT = 48_000;

    int localPort = DEFAULT_PORT;
    int remotePort = DEFAULT_REMOTE_EPHEMERAL_PORT;
    /** True once the stack's ports are known from a packet it sent (its SYN). */
    boolean portsFromWire;

    private boolean localIsnKnown;
    private long scriptLocalIsn;
    private long liveLocalIsn;

    private final Map<Long, Long> tsScriptToLive = new HashMap<>();
    private boolean tsBaseKnown;
    private long firstScriptTsVal;
    private long firstLiveTsVal;

    /** True once the script sent a SYN to a listener: the connection's ports are the script's. */
    boolean inboundSynSent;

    boolean localIsnKnown() {
        return localIsnKnown;
    }

    /** True once a packet went either way: a new socket then starts a new connection. */
    boolean used() {
        return portsFromWire || inboundSynSent || localIsnKnown;
    }

    /**
     * A new socket: the script's packets now belong to its connection (as packetdrill's socket under test),
     * from a fresh port of the script's so the old connection's packets are not mistaken for the new one's.
     */
    void startNew(int bindPort) {
        localPort = bindPort;
        remotePort++;
        portsFromWire = false;
        inboundSynSent = false;
        localIsnKnown = false;
        scriptLocalIsn = 0;
        liveLocalIsn = 0;
        tsScriptToLive.clear();
        tsBaseKnown = false;
    }

    /** The stack's SYN or SYN-ACK carried live ISN {@code live}; the script wrote {@code script} for it. */
    void learnLocalIsn(long script, long live) {
        scriptLocalIsn = script;
        liveLocalIsn = live;
        localIsnKnown = true;
    }

    /** The stack's SYN went from {@code localPort} to {@code remotePort}: the connection is now that one. */
    void learnPorts(int local, int remote) {
        localPort = local;
        remotePort = remote;
        portsFromWire = true;
    }

    /** A local sequence number on the wire, in the script's terms. */
    long localLiveToScript(long live) {
        return (live - liveLocalIsn + scriptLocalIsn) & MASK;
    }

    /** A local sequence number the script writes (an inbound ack or SACK edge), as the wire carries it. */
    long localScriptToLive(long script) {
        return (script - scriptLocalIsn + liveLocalIsn) & MASK;
    }

    /** The stack sent TS val {@code live} where the script expected {@code script}. */
    void recordTsVal(long script, long live) {
        tsScriptToLive.put(script, live);
        if (!tsBaseKnown) {
            tsBaseKnown = true;
            firstScriptTsVal = script;
            firstLiveTsVal = live;
        }
    }

    /** A live TS val in the script's terms: offset by the first pair seen. */
    long tsValLiveToScript(long live) {
        return tsBaseKnown ? (firstScriptTsVal + (live - firstLiveTsVal)) & MASK : live;
    }

    /**
     * The live value for a script's inbound TS ecr: the TS val the stack sent where the script wrote this value;
     * with {@code scaled} (script option {@code --tcp_ts_ecr_scaled}) an interpolation from the first pair.
     * Null when there is neither.
     */
    Long tsEcrScriptToLive(long script, boolean scaled) {
        Long live = tsScriptToLive.get(script);
        if (live != null) {
            return live;
        }
        if (scaled && tsBaseKnown) {
            return (script - firstScriptTsVal + firstLiveTsVal) & MASK;
        }
        return null;
    }
}
