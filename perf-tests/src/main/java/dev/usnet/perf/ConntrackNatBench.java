package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.conntrack.ConntrackEntry;
import dev.usnet.core.nat.NatCore;
import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.netfilter.NfConntrack;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHookOps;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * An established flow forwarded through an IPv4 router with netfilter doing more and more: {@code nf=none} (no
 * hook registered), {@code conntrack} (tracking on, and a stateful forward filter at priority 0 that accepts
 * established and related packets, new ones only from the inside or to a published port, and drops the rest),
 * {@code masquerade} (that, and a masquerade chain at postrouting: the flow leaves with the router's outside
 * address), {@code dnat} (that, and a DNAT chain at prerouting publishing 198.19.2.1:8080 as 198.18.1.2:80; the
 * flow comes from outside to the published port, so each of its packets is rewritten twice: DNAT and masquerade on
 * the way in, both undone on the return).
 *
 * <p>One operation is one round trip: a datagram of the flow's original direction (for TCP a data segment whose
 * sequence number advances by its payload each time) and the answer (for TCP a pure ACK of it), each a fresh pooled
 * packet refilled from a template, received on its port, forwarded, and freed by the sink. The TCP connection is
 * opened in the setup (SYN, SYN-ACK, ACK through the router), so every measured packet finds its entry ESTABLISHED.
 * The packets arrive with their transport checksum marked verified (CHECKSUM_UNNECESSARY, what a NIC's receive
 * offload or a veth gives): the payload is never written, and conntrack's software check of it would otherwise
 * fail. The setup checks the addresses and ports each packet leaves with, and every iteration that every packet
 * came out, nothing was dropped, the table holds exactly the one entry, and NAT rewrote the packets it should.
 */
@State(Scope.Thread)
public class ConntrackNatBench extends UsnetBench {
    static final long MAC_H1 = RouterForwardBench.MAC_H1;
    static final long MAC_H2 = RouterForwardBench.MAC_H2;
    static final long MAC_R1 = RouterForwardBench.MAC_R1;
    static final long MAC_R2 = RouterForwardBench.MAC_R2;
    static final int INSIDE_HOST = Ipv4Addr.parse("198.18.1.2");
    static final int INSIDE_ROUTER = Ipv4Addr.parse("198.18.1.1");
    static final int OUTSIDE_HOST = Ipv4Addr.parse("198.19.2.2");
    static final int OUTSIDE_ROUTER = Ipv4Addr.parse("198.19.2.1");
    static final int PUBLISHED_PORT = 8080;
    static final int INSIDE_SERVICE_PORT = 80;
    static final int CLIENT_PORT = 40000;
    static final int SERVER_PORT = 5001;
    static final int CLIENT_ISN = 1000;
    static final int SERVER_ISN = 500_000;
    private static final int TCP_AT = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN;

    @Param({"none", "conntrack", "masquerade", "dnat"})
    String nf;

    @Param({"tcp", "udp"})
    String proto;

    /** IPv4 total length of the original direction's datagrams (the TCP answers are bare 40-byte ACKs). */
    @Param({"64"})
    int ipLen;

    NetStack router;
    SinkDevice r1;
    SinkDevice r2;
    private SinkDevice origIn;
    private SinkDevice replyIn;
    private Frames.Template origTemplate;
    private Frames.Template replyTemplate;
    /** TCP: the original direction's segments without payload (the handshake's SYN and ACK). */
    private Frames.Template origControlTemplate;
    private int origLen;
    private int replyLen;
    private boolean tcp;
    private int payload;
    /** The next original-direction sequence number (TCP). */
    private int seq;
    private long pairs;
    private long framesBaseline;
    private long natBaseline;
    private int rewritesPerPair;

    @Setup(Level.Trial)
    public void setup() {
        VirtualScheduler sched = new VirtualScheduler(1_000_000_000L);
        router = new NetStack("ct-router", sched, 1);
        router.knobs().set("net.ipv4.ip_forward", "1");
        r1 = new SinkDevice("r1", MAC_R1);
        r2 = new SinkDevice("r2", MAC_R2);
        router.register(r1);
        router.register(r2);
        for (SinkDevice d : new SinkDevice[] {r1, r2}) {
            d.setMtu(65535);
            d.setUp(true);
        }
        router.devinet().add(r1, INSIDE_ROUTER, 24);
        router.devinet().add(r2, OUTSIDE_ROUTER, 24);
        router.neigh().addPermanent(r1, INSIDE_HOST, MAC_H1);
        router.neigh().addPermanent(r2, OUTSIDE_HOST, MAC_H2);
        tcp = switch (proto) {
            case "tcp" -> true;
            case "udp" -> false;
            default -> throw new IllegalArgumentException("proto " + proto + ": tcp or udp");
        };
        boolean dnat = nf.equals("dnat");
        boolean masquerade = dnat || nf.equals("masquerade");
        boolean tracked = masquerade || nf.equals("conntrack");
        if (!tracked && !nf.equals("none")) {
            throw new IllegalArgumentException("nf " + nf + ": none, conntrack, masquerade or dnat");
        }
        rewritesPerPair = dnat ? 4 : masquerade ? 2 : 0;
        if (tracked) {
            installFilter();
        }
        if (masquerade) {
            NatCore nat = NatCore.of(router.ipv4());
            nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC,
                    (p, st) -> nat.masquerade(p, NfNatRange.NONE, st.out()));
        }
        if (dnat) {
            NatCore nat = NatCore.of(router.ipv4());
            NfNatRange to = new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_SPECIFIED, INSIDE_HOST, INSIDE_HOST,
                    INSIDE_SERVICE_PORT, INSIDE_SERVICE_PORT);
            nat.registerChain(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, (p, st) -> {
                ByteBuf b = p.buf();
                int ip = p.network();
                int l4 = ip + (b.getUnsignedByte(ip) & 0xf) * 4;
                if (b.getInt(ip + 16) == OUTSIDE_ROUTER && b.getUnsignedShort(l4 + 2) == PUBLISHED_PORT) {
                    return nat.setup(p, to, false);
                }
                return NfVerdict.ACCEPT;
            });
        }

        // Who talks to whom, and how the packets look on the wire where they enter the router.
        int origSrc;
        int origDst;
        int origDport;
        int replySrc;
        int replyDst;
        int replySport;
        if (dnat) {
            origIn = r2;
            replyIn = r1;
            origSrc = OUTSIDE_HOST;
            origDst = OUTSIDE_ROUTER;
            origDport = PUBLISHED_PORT;
            replySrc = INSIDE_HOST;
            replyDst = INSIDE_ROUTER;
            replySport = INSIDE_SERVICE_PORT;
        } else {
            origIn = r1;
            replyIn = r2;
            origSrc = INSIDE_HOST;
            origDst = OUTSIDE_HOST;
            origDport = SERVER_PORT;
            replySrc = OUTSIDE_HOST;
            replyDst = masquerade ? OUTSIDE_ROUTER : INSIDE_HOST;
            replySport = SERVER_PORT;
        }
        long origDstMac = origIn.mac();
        long origSrcMac = origIn == r1 ? MAC_H1 : MAC_H2;
        long replyDstMac = replyIn.mac();
        long replySrcMac = replyIn == r1 ? MAC_H1 : MAC_H2;
        if (tcp) {
            payload = ipLen - Ipv4Packet.MIN_HEADER_LEN - TcpSegment.MIN_HEADER_LEN;
            check(payload > 0, "ipLen " + ipLen + " leaves no TCP payload");
            origLen = EthernetFrame.HEADER_LEN + ipLen;
            replyLen = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN + TcpSegment.MIN_HEADER_LEN;
            origTemplate = tcpHeaders(origDstMac, origSrcMac, origSrc, origDst, CLIENT_PORT, origDport, ipLen);
            replyTemplate = tcpHeaders(replyDstMac, replySrcMac, replySrc, replyDst, replySport, CLIENT_PORT,
                    replyLen - EthernetFrame.HEADER_LEN);
            origControlTemplate = tcpHeaders(origDstMac, origSrcMac, origSrc, origDst, CLIENT_PORT, origDport,
                    replyLen - EthernetFrame.HEADER_LEN);
        } else {
            origLen = EthernetFrame.HEADER_LEN + ipLen;
            replyLen = origLen;
            origTemplate = udpHeaders(origDstMac, origSrcMac, origSrc, origDst, CLIENT_PORT, origDport, ipLen);
            replyTemplate = udpHeaders(replyDstMac, replySrcMac, replySrc, replyDst, replySport, CLIENT_PORT, ipLen);
        }
        if (tcp) {
            // The three-way handshake, so the entry is ESTABLISHED before anything is measured.
            send(origIn, origControlTemplate, replyLen, TcpSegment.SYN, CLIENT_ISN, 0);
            send(replyIn, replyTemplate, replyLen, TcpSegment.SYN | TcpSegment.ACK_FLAG, SERVER_ISN, CLIENT_ISN + 1);
            send(origIn, origControlTemplate, replyLen, TcpSegment.ACK_FLAG, CLIENT_ISN + 1, SERVER_ISN + 1);
            seq = CLIENT_ISN + 1;
        }
        framesBaseline = r1.frames + r2.frames;
        natBaseline = router.cpu().natRewrites();
        verify(dnat, masquerade, tracked);
    }

    /** The stateful forward filter: what "ct state established,related accept; ct state new ... accept; drop" does. */
    private void installFilter() {
        ConntrackCore.of(router.ipv4()).get();
        NfHookOps filter = (p, st) -> {
            Object entry = p.nfct();
            if (entry == null) {
                return st.drop(DropReason.NETFILTER_DROP);
            }
            int ctinfo = p.ctinfo();
            if (ctinfo != IpConntrackInfo.NEW) {
                return NfVerdict.ACCEPT; // established or related, either direction
            }
            if (st.in() == r1 || (((NfConntrack) entry).status() & IpConntrackStatus.DST_NAT) != 0) {
                return NfVerdict.ACCEPT; // from the inside, or to a published port
            }
            return st.drop(DropReason.NETFILTER_DROP);
        };
        router.ipv4().netfilter().hooks().register(NfHook.FORWARD, NfIpPriority.FILTER, filter);
    }

    /** One round trip watched at the sinks: where each packet left and with which addresses and ports. */
    private void verify(boolean dnat, boolean masquerade, boolean tracked) {
        SinkDevice origOut = origIn == r1 ? r2 : r1;
        origOut.inspect = true;
        roundTrip();
        origOut.inspect = false;
        SinkDevice replyOut = origIn;
        int origFramesOut = (int) origOut.frames;
        replyOut.inspect = true;
        roundTrip();
        replyOut.inspect = false;
        check(r1.frames + r2.frames - framesBaseline == 4, "a round trip did not forward both packets");
        check(origOut.frames == origFramesOut + 1, "the original direction left by the wrong port");
        check(router.drops().total() == 0, "drops: " + router.drops().snapshot());
        int expSrc = dnat ? INSIDE_ROUTER : masquerade ? OUTSIDE_ROUTER : INSIDE_HOST;
        int expDst = dnat ? INSIDE_HOST : OUTSIDE_HOST;
        int expDport = dnat ? INSIDE_SERVICE_PORT : SERVER_PORT;
        check(origOut.lastIpSrc == expSrc && origOut.lastIpDst == expDst && origOut.lastSrcPort == CLIENT_PORT
                        && origOut.lastDstPort == expDport,
                "original direction left as " + Ipv4Addr.format(origOut.lastIpSrc) + ":" + origOut.lastSrcPort + " > "
                        + Ipv4Addr.format(origOut.lastIpDst) + ":" + origOut.lastDstPort);
        check(origOut.lastIpChecksumOk, "IPv4 header checksum invalid after forwarding");
        int backSrc = dnat ? OUTSIDE_ROUTER : OUTSIDE_HOST;
        int backDst = dnat ? OUTSIDE_HOST : INSIDE_HOST;
        int backSport = dnat ? PUBLISHED_PORT : SERVER_PORT;
        check(replyOut.lastIpSrc == backSrc && replyOut.lastIpDst == backDst && replyOut.lastSrcPort == backSport
                        && replyOut.lastDstPort == CLIENT_PORT,
                "answer left as " + Ipv4Addr.format(replyOut.lastIpSrc) + ":" + replyOut.lastSrcPort + " > "
                        + Ipv4Addr.format(replyOut.lastIpDst) + ":" + replyOut.lastDstPort);
        check(replyOut.lastIpChecksumOk, "IPv4 header checksum invalid on the answer");
        if (tracked) {
            ConntrackCore ct = ConntrackCore.of(router.ipv4());
            check(ct.active(), "connection tracking is not running");
            check(ct.table().count() == 1, "entries: " + ct.table().count());
            ConntrackEntry e = ct.table().entries().get(0);
            check(e.hasStatus(IpConntrackStatus.SEEN_REPLY), "entry not established: " + e.describe(0));
            if (tcp) {
                check(e.tcpStateName().equalsIgnoreCase("ESTABLISHED"), "TCP entry in " + e.tcpStateName());
            }
            check(e.hasStatus(IpConntrackStatus.SRC_NAT) == masquerade, "SNAT status: " + e.describe(0));
            check(e.hasStatus(IpConntrackStatus.DST_NAT) == dnat, "DNAT status: " + e.describe(0));
        }
        checkIteration();
    }

    @Benchmark
    public void roundTrip() {
        if (tcp) {
            int s = seq;
            seq = s + payload;
            send(origIn, origTemplate, origLen, TcpSegment.ACK_FLAG | TcpSegment.PSH, s, SERVER_ISN + 1);
            send(replyIn, replyTemplate, replyLen, TcpSegment.ACK_FLAG, SERVER_ISN + 1, s + payload);
        } else {
            send(origIn, origTemplate, origLen, 0, 0, 0);
            send(replyIn, replyTemplate, replyLen, 0, 0, 0);
        }
        pairs++;
    }

    /** A fresh packet from {@code t} (for TCP with these flags and numbers), received on {@code port}. */
    private void send(SinkDevice port, Frames.Template t, int frameLen, int flags, int seqNo, int ackNo) {
        Packet p = Frames.refill(t, frameLen);
        if (tcp) {
            ByteBuf b = p.buf();
            int at = p.start() + TCP_AT;
            b.setInt(at + TcpSegment.SEQ, seqNo);
            b.setInt(at + TcpSegment.ACK, ackNo);
            b.setByte(at + TcpSegment.FLAGS, flags);
        }
        p.setChecksum(ChecksumState.UNNECESSARY, 0, 0);
        port.receive(p);
    }

    /** Every packet sent in came out, none was dropped, and NAT rewrote each one it should have. */
    @TearDown(Level.Iteration)
    public void checkIteration() {
        long out = r1.frames + r2.frames - framesBaseline;
        check(out == 2 * pairs, out + " packets forwarded for " + pairs + " round trips");
        check(router.drops().total() == 0, "drops: " + router.drops().snapshot());
        long rewrites = router.cpu().natRewrites() - natBaseline;
        check(rewrites == rewritesPerPair * pairs, rewrites + " NAT rewrites for " + pairs + " round trips");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        router.close();
    }

    static Frames.Template tcpHeaders(long dstMac, long srcMac, int src, int dst, int sport, int dport, int ipTotal) {
        int len = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN + TcpSegment.MIN_HEADER_LEN;
        ByteBuf t = Unpooled.buffer(len).writerIndex(len);
        EthernetFrame.write(t, 0, dstMac, srcMac, EthernetFrame.ETH_P_IP);
        Ipv4Packet.writeHeader(t, EthernetFrame.HEADER_LEN, 0, ipTotal, 0x1234, Ipv4Packet.FLAG_DF, 64,
                Ipv4Packet.PROTO_TCP, src, dst);
        TcpSegment.writeHeader(t, TCP_AT, sport, dport, 0, 0, TcpSegment.MIN_HEADER_LEN, TcpSegment.ACK_FLAG, 65535);
        // A checksum that is not zero, so NAT's incremental update has something to update.
        t.setShort(TCP_AT + TcpSegment.CHECKSUM, 0x5a5a);
        return new Frames.Template(t.array());
    }

    static Frames.Template udpHeaders(long dstMac, long srcMac, int src, int dst, int sport, int dport, int ipTotal) {
        int len = Frames.ETH_IP_UDP;
        ByteBuf t = Unpooled.buffer(len).writerIndex(len);
        EthernetFrame.write(t, 0, dstMac, srcMac, EthernetFrame.ETH_P_IP);
        Ipv4Packet.writeHeader(t, EthernetFrame.HEADER_LEN, 0, ipTotal, 0x1234, Ipv4Packet.FLAG_DF, 64,
                Ipv4Packet.PROTO_UDP, src, dst);
        int udp = EthernetFrame.HEADER_LEN + Ipv4Packet.MIN_HEADER_LEN;
        t.setShort(udp, sport);
        t.setShort(udp + 2, dport);
        t.setShort(udp + 4, ipTotal - Ipv4Packet.MIN_HEADER_LEN);
        // A checksum, so NAT updates it (0 would mean "none" and stay 0).
        t.setShort(udp + 6, 0x5a5a);
        return new Frames.Template(t.array());
    }
}
