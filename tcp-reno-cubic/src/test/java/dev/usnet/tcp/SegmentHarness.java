package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;

/**
 * One TCP connection under test, with the other end scripted by hand in virtual time (packetdrill's idea): the
 * test injects segments it builds field by field into the namespace holding the socket and reads back, parsed,
 * every segment the socket sends. Sequence numbers are written relative to each side's initial sequence number.
 * The socket's namespace is {@code dut} (198.18.0.2); the scripted peer is 198.18.0.1 behind a wire with a
 * permanent neighbour entry, so no ARP is involved.
 */
final class SegmentHarness implements AutoCloseable {
    static final int DUT_ADDR = Ipv4Addr.parse("198.18.0.2");
    static final int PEER_ADDR = Ipv4Addr.parse("198.18.0.1");
    static final long DUT_MAC = 0x02_00_00_00_00_02L;
    static final int PEER_PORT = 40000;
    static final int DUT_PORT = 8080;
    /** The scripted peer's initial sequence number. */
    static final long PEER_ISN = 1_000_000L;

    /** Full segments of the DUT's flights: 1448 bytes (MSS 1460 less timestamps). */
    static final int MSS = 1448;

    /** The relative sequence number segment {@code i} (numbered from 1) starts at: [1 + 1448 (i - 1), 1 + 1448 i). */
    static long start(int i) {
        return 1 + (long) MSS * (i - 1);
    }

    /** Where segment {@code i} ends (the next one's start). */
    static long end(int i) {
        return start(i + 1);
    }

    /** An established connection that has sent {@code segments} full segments, none acknowledged yet. */
    TcpSock flight(int segments) {
        TcpSock s = accept(PeerSyn.linux());
        advance(1_000_000L);
        write(s, segments * MSS);
        java.util.List<Sent> sent = sent();
        org.junit.jupiter.api.Assertions.assertEquals(segments, sent.size(), sent::toString);
        return s;
    }

    final TestNet net = new TestNet();
    final NetStack dut = net.ns("dut");
    final TestNet.Wire wire;
    final Tcp tcp;
    /** The socket's initial sequence number, learned from its SYN or SYN-ACK. */
    long dutIss;
    private int readIndex;
    private final List<TcpError> closed = new ArrayList<>();
    private final ByteBuf readBuf = Unpooled.buffer(1 << 20);
    /** Bytes the application read from the socket so far (when reading is on). */
    long bytesRead;
    boolean readOnData = true;
    /**
     * When timestamps were negotiated, segments built without an explicit timestamp carry the peer's clock (1 ms
     * ticks from 1000) and echo the last TS value the socket sent, as a Linux peer would.
     */
    boolean autoTs;
    long lastDutTsVal;

    SegmentHarness(String... knobs) {
        for (int i = 0; i < knobs.length; i += 2) {
            dut.knobs().set(knobs[i], knobs[i + 1]);
        }
        wire = net.wire(dut, "eth0", DUT_MAC);
        TestNet.addr(dut, wire.dutEnd, "198.18.0.2/24");
        dut.neigh().addPermanent(wire.dutEnd, PEER_ADDR, wire.end.mac());
        tcp = Tcp.install(dut);
    }

    /** What the socket sent: the TCP header's fields and options, at the virtual time it left. */
    record Sent(long at, int flags, long seq, long ack, int window, int payload, boolean hasMss, int mss,
                boolean hasWscale, int wscale, boolean sackPermitted, boolean hasTs, long tsVal, long tsEcr,
                long[] sackStart, long[] sackEnd, int peerPort) {
        boolean has(int flag) {
            return (flags & flag) != 0;
        }

        int sackBlocks() {
            return sackStart.length;
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(String.format("%.3fms", at / 1e6));
            for (String[] f : new String[][] {{"S", "2"}, {"F", "1"}, {"R", "4"}, {"P", "8"}, {".", "16"}}) {
                if ((flags & Integer.parseInt(f[1])) != 0) {
                    b.append(' ').append(f[0]);
                }
            }
            b.append(" seq ").append(seq).append(" ack ").append(ack).append(" win ").append(window)
                    .append(" len ").append(payload);
            for (int i = 0; i < sackStart.length; i++) {
                b.append(" sack ").append(sackStart[i]).append('-').append(sackEnd[i]);
            }
            return b.toString();
        }
    }

    /** A segment from the scripted peer, built field by field. Sequence and ACK numbers are relative. */
    final class Seg {
        int flags = TcpSegment.ACK_FLAG;
        int srcPort = PEER_PORT;
        long seq;
        long ack;
        int window = 65535;
        int payload;
        int mss = -1;
        int wscale = -1;
        boolean sackPermitted;
        long tsVal = -1;
        long tsEcr;
        final List<long[]> sacks = new ArrayList<>();

        Seg flags(int f) {
            flags = f;
            return this;
        }

        /** From another port of the peer's (a second connection, or a flood's spoofed ones). */
        Seg from(int port) {
            srcPort = port;
            return this;
        }

        Seg seq(long relative) {
            seq = relative;
            return this;
        }

        Seg ack(long relative) {
            ack = relative;
            return this;
        }

        Seg win(int w) {
            window = w;
            return this;
        }

        Seg payload(int n) {
            payload = n;
            return this;
        }

        Seg mss(int m) {
            mss = m;
            return this;
        }

        Seg wscale(int w) {
            wscale = w;
            return this;
        }

        Seg sackOk() {
            sackPermitted = true;
            return this;
        }

        /** A timestamp option; {@code ecr} is an absolute TS value the socket sent. */
        Seg ts(long val, long ecr) {
            tsVal = val;
            tsEcr = ecr;
            return this;
        }

        /** A SACK block over the socket's data, relative to its ISS. */
        Seg sack(long start, long end) {
            sacks.add(new long[] {start, end});
            return this;
        }

        /** Sends the segment into the socket's namespace and lets it run to quiescence at this instant. */
        void inject() {
            injectFrame(build());
            net.settle();
        }

        byte[] build() {
            if (tsVal < 0 && autoTs && (flags & TcpSegment.SYN) == 0) {
                ts(peerTsNow(), lastDutTsVal);
            }
            int opt = 0;
            if (mss >= 0) {
                opt += 4;
            }
            if (sackPermitted) {
                opt += 2;
            }
            if (tsVal >= 0) {
                opt += 10;
            }
            if (wscale >= 0) {
                opt += 3;
            }
            if (!sacks.isEmpty()) {
                opt += 2 + 8 * sacks.size();
            }
            int optPadded = (opt + 3) / 4 * 4;
            int tcpLen = TcpSegment.MIN_HEADER_LEN + optPadded + payload;
            int ipLen = Ipv4Packet.MIN_HEADER_LEN + tcpLen;
            ByteBuf b = Unpooled.buffer(EthernetFrame.HEADER_LEN + ipLen);
            b.writeMedium((int) (DUT_MAC >>> 24)).writeMedium((int) DUT_MAC);
            long src = wire.end.mac();
            b.writeMedium((int) (src >>> 24)).writeMedium((int) src);
            b.writeShort(EthernetFrame.ETH_P_IP);
            int ip = b.writerIndex();
            b.writeByte(0x45).writeByte(0).writeShort(ipLen).writeShort(0).writeShort(0x4000)
                    .writeByte(64).writeByte(Ipv4Packet.PROTO_TCP).writeShort(0).writeInt(PEER_ADDR).writeInt(DUT_ADDR);
            b.setShort(ip + Ipv4Packet.CHECKSUM, Checksum.compute(b, ip, Ipv4Packet.MIN_HEADER_LEN));
            int t = b.writerIndex();
            b.writerIndex(t + TcpSegment.MIN_HEADER_LEN);
            long absAck = (flags & TcpSegment.ACK_FLAG) != 0 ? Seq.add(dutIss, ack) : 0;
            TcpSegment.writeHeader(b, t, srcPort, DUT_PORT, Seq.add(PEER_ISN, seq), absAck,
                    TcpSegment.MIN_HEADER_LEN + optPadded, flags, window);
            if (mss >= 0) {
                b.writeByte(TcpOptions.MSS).writeByte(4).writeShort(mss);
            }
            if (sackPermitted) {
                b.writeByte(TcpOptions.SACK_PERM).writeByte(2);
            }
            if (tsVal >= 0) {
                b.writeByte(TcpOptions.TIMESTAMP).writeByte(10).writeInt((int) tsVal).writeInt((int) tsEcr);
            }
            if (wscale >= 0) {
                b.writeByte(TcpOptions.WSCALE).writeByte(3).writeByte(wscale);
            }
            if (!sacks.isEmpty()) {
                b.writeByte(TcpOptions.SACK).writeByte(2 + 8 * sacks.size());
                for (long[] s : sacks) {
                    b.writeInt((int) Seq.add(dutIss, s[0])).writeInt((int) Seq.add(dutIss, s[1]));
                }
            }
            while (b.writerIndex() < t + TcpSegment.MIN_HEADER_LEN + optPadded) {
                b.writeByte(TcpOptions.NOP);
            }
            for (int i = 0; i < payload; i++) {
                b.writeByte('a' + (int) ((seq + i) % 26));
            }
            long ph = Checksum.pseudoHeader(PEER_ADDR, DUT_ADDR, Ipv4Packet.PROTO_TCP, tcpLen);
            b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, tcpLen, ph)));
            byte[] a = new byte[b.readableBytes()];
            b.readBytes(a);
            return a;
        }
    }

    Seg seg() {
        return new Seg();
    }

    /** The scripted peer's timestamp clock: 1 ms ticks starting at 1000. */
    long peerTsNow() {
        return 1000 + now() / 1_000_000L;
    }

    void injectFrame(byte[] frame) {
        wire.send(frame);
    }

    /** Runs virtual time forward. */
    void advance(long nanos) {
        net.run(nanos);
    }

    long now() {
        return net.sched.nanoTime();
    }

    /** Every TCP segment the socket sent since the last call, parsed; sequence numbers relative to ISS/ISN. */
    List<Sent> sent() {
        List<Sent> l = new ArrayList<>();
        List<TestNet.Seen> seen = wire.received;
        for (; readIndex < seen.size(); readIndex++) {
            TestNet.Seen s = seen.get(readIndex);
            Sent p = parse(s.data(), s.at());
            if (p != null) {
                l.add(p);
            }
        }
        return l;
    }

    /** The one segment the socket sent since the last look (fails when it sent none or several). */
    Sent sentOne() {
        List<Sent> l = sent();
        assertEquals(1, l.size(), () -> "expected one segment, got " + l);
        return l.get(0);
    }

    /** Asserts the socket sent nothing since the last look. */
    void sentNothing() {
        List<Sent> l = sent();
        assertTrue(l.isEmpty(), () -> "expected nothing sent, got " + l);
    }

    private Sent parse(byte[] frame, long at) {
        ByteBuf b = Unpooled.wrappedBuffer(frame);
        if (b.getUnsignedShort(EthernetFrame.TYPE) != EthernetFrame.ETH_P_IP) {
            return null;
        }
        int ip = EthernetFrame.HEADER_LEN;
        if (b.getUnsignedByte(ip + Ipv4Packet.PROTOCOL) != Ipv4Packet.PROTO_TCP) {
            return null;
        }
        int ihl = (b.getUnsignedByte(ip) & 0xf) * 4;
        int total = b.getUnsignedShort(ip + Ipv4Packet.TOTAL_LEN);
        int t = ip + ihl;
        TcpSegment seg = new TcpSegment();
        if (seg.check(b, t, total - ihl) != null) {
            throw new AssertionError("malformed segment from the socket at " + at);
        }
        long ph = Checksum.pseudoHeader(DUT_ADDR, PEER_ADDR, Ipv4Packet.PROTO_TCP, total - ihl);
        assertEquals(0, Checksum.finish(Checksum.add(b, t, total - ihl, ph)), "TCP checksum of what the socket sent");
        TcpOptions o = new TcpOptions();
        int flags = seg.flags();
        o.parse(b, t, seg.headerLength(), (flags & TcpSegment.SYN) != 0);
        if ((flags & TcpSegment.SYN) != 0) {
            dutIss = seg.seq();
        }
        if (o.hasTimestamp) {
            lastDutTsVal = o.tsVal;
        }
        long[] ss = new long[o.sackBlocks];
        long[] se = new long[o.sackBlocks];
        for (int i = 0; i < o.sackBlocks; i++) {
            ss[i] = Seq.sub(o.sackStart[i], PEER_ISN);
            se[i] = Seq.sub(o.sackEnd[i], PEER_ISN);
        }
        return new Sent(at, flags, Seq.sub(seg.seq(), dutIss), (flags & TcpSegment.ACK_FLAG) != 0
                ? Seq.sub(seg.ack(), PEER_ISN) : 0, seg.window(), seg.payloadLength(), o.hasMss, o.mss, o.hasWscale,
                o.wscale, o.sackPermitted, o.hasTimestamp, o.tsVal, o.tsEcr, ss, se, seg.dstPort());
    }

    /** Callbacks of the socket under test: reads everything (unless {@link #readOnData} is off), records closes. */
    final TcpSock.Callbacks callbacks = new TcpSock.Callbacks() {
        @Override
        public void readable(TcpSock s) {
            if (!readOnData) {
                return;
            }
            int n;
            while ((n = s.read(readBuf.clear(), readBuf.capacity())) > 0) {
                bytesRead += n;
            }
        }

        @Override
        public void closed(TcpSock s, TcpError e) {
            closed.add(e);
        }
    };

    /** How the socket was closed, or null while it is open. */
    TcpError closedWith() {
        return closed.isEmpty() ? null : closed.get(closed.size() - 1);
    }

    /** The options the scripted peer offers in its SYN or SYN-ACK. */
    record PeerSyn(int mss, int wscale, boolean sack, boolean ts, int window) {
        static PeerSyn linux() {
            return new PeerSyn(1460, 7, true, true, 65535);
        }

        Seg applyTo(Seg s) {
            s.mss(mss).win(window);
            if (wscale >= 0) {
                s.wscale(wscale);
            }
            if (sack) {
                s.sackOk();
            }
            return s;
        }
    }

    private TcpSock accepted;
    private PeerSyn peerSyn;
    /** The listen backlog {@link #listenAndSendSyn} uses. */
    int backlog = 16;
    TcpListener listener;

    /** The last connection the listener handed over, or null. */
    TcpSock accepted() {
        return accepted;
    }

    /** Passive open: the socket listens, the peer's SYN arrives, the SYN-ACK is answered. Returns the child. */
    TcpSock accept(PeerSyn syn) {
        listenAndSendSyn(syn);
        Sent synAck = sentOne();
        return completeHandshake(synAck, syn.window);
    }

    /** The socket listens and the peer's SYN arrives; the SYN-ACK is left for the test to read. */
    void listenAndSendSyn(PeerSyn syn) {
        peerSyn = syn;
        listen();
        Seg first = syn.applyTo(seg().flags(TcpSegment.SYN).seq(0));
        if (syn.ts) {
            first.ts(peerTsNow(), 0);
        }
        first.inject();
    }

    /** The socket listens on {@link #DUT_PORT} with {@link #backlog}; accepted children get the harness's callbacks. */
    void listen() {
        listener = tcp.listen(0, DUT_PORT, backlog, c -> {
            accepted = c;
            c.setCallbacks(callbacks);
        });
    }

    /** The peer acknowledges {@code synAck} with {@code window}; returns the established child. */
    TcpSock completeHandshake(Sent synAck, int window) {
        assertTrue(synAck.has(TcpSegment.SYN) && synAck.has(TcpSegment.ACK_FLAG), synAck::toString);
        assertEquals(1, synAck.ack());
        Seg ack = seg().seq(1).ack(1).win(window);
        if (peerSyn.ts && synAck.hasTs()) {
            ack.ts(peerTsNow(), synAck.tsVal());
        }
        ack.inject();
        autoTs = peerSyn.ts && synAck.hasTs();
        assertTrue(accepted != null && accepted.state() == TcpState.ESTABLISHED, "handshake completed");
        return accepted;
    }

    /** Active open: the socket connects, the peer answers with a SYN-ACK. Returns the socket, established. */
    TcpSock connect(PeerSyn synAck) {
        TcpSock s = tcp.connect(DUT_ADDR, DUT_PORT, PEER_ADDR, PEER_PORT, callbacks);
        net.settle();
        Sent syn = sentOne();
        assertTrue(syn.has(TcpSegment.SYN) && !syn.has(TcpSegment.ACK_FLAG), syn::toString);
        Seg reply = synAck.applyTo(seg().flags(TcpSegment.SYN | TcpSegment.ACK_FLAG).seq(0).ack(1));
        if (synAck.ts && syn.hasTs()) {
            reply.ts(peerTsNow(), syn.tsVal());
        }
        reply.inject();
        autoTs = synAck.ts && syn.hasTs();
        assertEquals(TcpState.ESTABLISHED, s.state());
        Sent ack = sentOne();
        assertEquals(1, ack.seq());
        assertEquals(1, ack.ack());
        return s;
    }

    /** Writes {@code n} bytes into the socket (all must fit its send buffer). */
    void write(TcpSock s, int n) {
        ByteBuf b = Unpooled.wrappedBuffer(new byte[n]);
        assertEquals(n, s.write(b, 0, n));
        net.settle();
    }

    long drops(DropReason r) {
        return dut.drops().get(r);
    }

    @Override
    public void close() {
        net.run(200_000_000_000L);
        tcp.close();
        net.close();
    }
}
