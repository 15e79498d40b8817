package dev.usnet.core.conntrack;

import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;

/**
 * A router r between 198.18.1.0/24 (r1, host H1 198.18.1.2) and 198.18.2.0/24 (r2, host H2 198.18.2.2) with
 * connection tracking running, a hook at forward priority 0 recording what each forwarded packet carried, and
 * frame builders for the hosts' side.
 */
final class CtRouter implements AutoCloseable {
    static final long R1 = 0x0200_0000_0101L;
    static final long R2 = 0x0200_0000_0102L;
    static final long H1 = 0x0200_0000_aa01L;
    static final long H2 = 0x0200_0000_bb02L;
    static final int A1 = Ipv4Addr.parse("198.18.1.2");
    static final int A2 = Ipv4Addr.parse("198.18.2.2");

    /** What the forward hook saw of one packet. */
    record Seen(ConntrackEntry ct, int ctinfo, int tcpState) {}

    final TestNet net = new TestNet();
    final NetStack r = net.ns("r");
    final TestNet.Wire w1 = net.wire(r, "r1", R1);
    final TestNet.Wire w2 = net.wire(r, "r2", R2);
    final ConntrackCore core;
    final List<Seen> seen = new ArrayList<>();
    private int ipId;

    CtRouter() {
        r.knobs().set("net.ipv4.ip_forward", "1");
        TestNet.addr(r, w1.dutEnd, "198.18.1.1/24");
        TestNet.addr(r, w2.dutEnd, "198.18.2.1/24");
        r.neigh().addPermanent(w1.dutEnd, A1, H1);
        r.neigh().addPermanent(w2.dutEnd, A2, H2);
        core = new ConntrackCore(r.ipv4());
        r.ipv4().netfilter().install(core, null);
        core.get();
        r.ipv4().netfilter().hooks().register(NfHook.FORWARD, NfIpPriority.FILTER, (p, st) -> {
            ConntrackEntry ct = p.nfct();
            seen.add(new Seen(ct, p.ctinfo(), ct == null ? -1 : ct.tcpState()));
            return NfVerdict.ACCEPT;
        });
    }

    ConntrackTable table() {
        return core.table();
    }

    Seen last() {
        return seen.getLast();
    }

    long now() {
        return r.now();
    }

    /** Sends from H1 (into r1) or from H2 (into r2) and lets the router handle it. */
    void fromH1(byte[] frame) {
        w1.send(frame);
        net.settle();
    }

    void fromH2(byte[] frame) {
        w2.send(frame);
        net.settle();
    }

    /** An IPv4 frame with {@code l4} as its payload; the transport checksum is the caller's. */
    byte[] ip(long srcMac, long dstMac, int src, int dst, int proto, byte[] l4, int frag) {
        return ip(srcMac, dstMac, src, dst, proto, l4, frag, ++ipId);
    }

    /** The same with IP identifier {@code id} (fragments of one datagram share it). */
    byte[] ip(long srcMac, long dstMac, int src, int dst, int proto, byte[] l4, int frag, int id) {
        int len = EthernetFrame.HEADER_LEN + 20 + l4.length;
        ByteBuf b = Unpooled.buffer(len).writerIndex(len);
        EthernetFrame.write(b, 0, dstMac, srcMac, EthernetFrame.ETH_P_IP);
        b.setBytes(34, l4);
        Ipv4Packet.writeHeader(b, 14, 0, 20 + l4.length, id, frag, 64, proto, src, dst);
        byte[] a = new byte[len];
        b.getBytes(0, a);
        return a;
    }

    /** A TCP segment from {@code src}:{@code sport}; {@code opts} are raw option bytes (padded to 4). */
    static byte[] tcpSegment(int src, int dst, int sport, int dport, int seq, int ack, int flags, int win,
                             byte[] opts, int payload) {
        int olen = (opts.length + 3) & ~3;
        int hl = 20 + olen;
        ByteBuf b = Unpooled.buffer(hl + payload).writerIndex(hl + payload);
        TcpSegment.writeHeader(b, 0, sport, dport, seq & 0xffff_ffffL, ack & 0xffff_ffffL, hl, flags, win);
        b.setBytes(20, opts);
        for (int i = 20 + opts.length; i < hl; i++) {
            b.setByte(i, 1);
        }
        for (int i = 0; i < payload; i++) {
            b.setByte(hl + i, 'x');
        }
        b.setShort(TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, 0, hl + payload,
                Checksum.pseudoHeader(src, dst, Ipv4Packet.PROTO_TCP, hl + payload))));
        byte[] a = new byte[hl + payload];
        b.getBytes(0, a);
        return a;
    }

    /** H1 → H2 TCP. */
    byte[] tcp12(int sport, int dport, int seq, int ack, int flags, int win, byte[] opts, int payload) {
        return ip(H1, R1, A1, A2, Ipv4Packet.PROTO_TCP, tcpSegment(A1, A2, sport, dport, seq, ack, flags, win, opts,
                payload), 0);
    }

    /** H2 → H1 TCP. */
    byte[] tcp21(int sport, int dport, int seq, int ack, int flags, int win, byte[] opts, int payload) {
        return ip(H2, R2, A2, A1, Ipv4Packet.PROTO_TCP, tcpSegment(A2, A1, sport, dport, seq, ack, flags, win, opts,
                payload), 0);
    }

    static byte[] udpDatagram(int src, int dst, int sport, int dport, int payload) {
        ByteBuf b = Unpooled.buffer(8 + payload).writerIndex(8 + payload);
        for (int i = 0; i < payload; i++) {
            b.setByte(8 + i, 'u');
        }
        dev.usnet.core.wire.UdpDatagram.write(b, 0, sport, dport, payload, src, dst);
        byte[] a = new byte[8 + payload];
        b.getBytes(0, a);
        return a;
    }

    byte[] udp12(int sport, int dport, int payload) {
        return ip(H1, R1, A1, A2, Ipv4Packet.PROTO_UDP, udpDatagram(A1, A2, sport, dport, payload), 0);
    }

    byte[] udp21(int sport, int dport, int payload) {
        return ip(H2, R2, A2, A1, Ipv4Packet.PROTO_UDP, udpDatagram(A2, A1, sport, dport, payload), 0);
    }

    /** An ICMP message: type, code, the 4 bytes after the checksum, then {@code body}. */
    static byte[] icmp(int type, int code, int rest, byte[] body) {
        ByteBuf b = Unpooled.buffer(8 + body.length).writerIndex(8 + body.length);
        b.setByte(0, type);
        b.setByte(1, code);
        b.setInt(4, rest);
        b.setBytes(8, body);
        b.setShort(2, Checksum.compute(b, 0, 8 + body.length));
        byte[] a = new byte[8 + body.length];
        b.getBytes(0, a);
        return a;
    }

    byte[] echo12(int type, int id, int seq) {
        return ip(H1, R1, A1, A2, Ipv4Packet.PROTO_ICMP, icmp(type, 0, id << 16 | seq, new byte[16]), 0);
    }

    byte[] echo21(int type, int id, int seq) {
        return ip(H2, R2, A2, A1, Ipv4Packet.PROTO_ICMP, icmp(type, 0, id << 16 | seq, new byte[16]), 0);
    }

    /** An ICMP error from H2 to H1 quoting the IP header and first 8 transport bytes of {@code quotedFrame}. */
    byte[] error21(int type, int code, byte[] quotedFrame) {
        byte[] quote = java.util.Arrays.copyOfRange(quotedFrame, 14, 14 + 28);
        return ip(H2, R2, A2, A1, Ipv4Packet.PROTO_ICMP, icmp(type, code, 0, quote), 0);
    }

    static final byte[] NO_OPTS = {};

    /** MSS 1460, SACK permitted, window scale {@code ws}. */
    static byte[] synOpts(int ws) {
        return new byte[] {2, 4, 0x05, (byte) 0xb4, 4, 2, 3, 3, (byte) ws};
    }

    @Override
    public void close() {
        net.close();
    }
}
