package dev.usnet.tcp;

import dev.usnet.core.fuzz.FuzzBytes;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.LeakGuard;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A TCP listener, and connections to it, fed arbitrary segments by a scripted peer in virtual time. The input is a
 * script: segments from one of four peer ports with flags, sequence and acknowledgment numbers near what each side
 * has sent (or anywhere), window, options (MSS, window scale, SACK-permitted, timestamps echoing the socket's,
 * SACK blocks, raw bytes) and payload; raw TCP headers; pauses; and the application writing, reading or not,
 * shutting down, closing or aborting. Payload bytes are a function of their sequence number, so what the
 * application reads can be checked byte for byte. Checked after every step and at the end:
 * <ul>
 * <li>no exception escapes the stack;</li>
 * <li>every segment reached TCP or was counted as dropped under a reason;</li>
 * <li>each connection's state is coherent: snd_una ≤ snd_nxt, sacked_out + lost_out ≤ packets_out (Linux's
 *     tcp_verify_left_out), no negative counters, cwnd ≥ 1 once established, rcv_nxt never moves back;</li>
 * <li>the application reads exactly the bytes the peer sent, in order;</li>
 * <li>after the input, once every timer ran out, a new connection still completes and carries data intact;</li>
 * <li>no buffer leaks once the namespace is closed.</li>
 * </ul>
 */
final class TcpUnderFuzz implements AutoCloseable {
    static final int DUT_ADDR = Ipv4Addr.parse("198.18.0.2");
    static final int PEER_ADDR = Ipv4Addr.parse("198.18.0.1");
    static final long DUT_MAC = 0x02_00_00_00_00_02L;
    static final int DUT_PORT = 8080;
    static final int PORTS = 4;
    static final int PROBE_PORT = 40100;

    private final long liveBefore = LeakGuard.liveBuffers();
    private final TestNet net = new TestNet();
    private final NetStack dut = net.ns("dut");
    private final TestNet.Wire wire;
    private final Tcp tcp;
    private final Peer[] peers = new Peer[PORTS];
    private final Map<Integer, Peer> byPort = new HashMap<>();
    private final Map<TcpSock, Long> rcvNxtSeen = new HashMap<>();
    private final Map<TcpSock, Long> streamRead = new HashMap<>();
    private boolean reading = true;
    /** {@code -Dusnet.fuzz.trace=true}: every segment each way on stderr, to read a finding. */
    private static final boolean TRACE = Boolean.getBoolean("usnet.fuzz.trace");
    private int seen;
    private int step;

    /** What the scripted peer knows of one connection, sequence numbers absolute. */
    private final class Peer {
        final int port;
        final long isn;
        long nxt;
        long dutIss = -1;
        long dutNxt;
        long dutTsVal;
        TcpSock sock;

        Peer(int port, long isn) {
            this.port = port;
            this.isn = isn;
            this.nxt = isn;
        }
    }

    TcpUnderFuzz(int variant) {
        // Every socket allocates its whole send buffer up front; Linux's 4 MiB maximum is an unpooled allocation
        // zeroed per connection, which held fuzzing to ~150 inputs a second. 1 MiB comes from the pool.
        dut.knobs().set("net.ipv4.tcp_wmem", "4096 65536 1048576");
        if ((variant & 1) != 0) {
            dut.knobs().set("net.ipv4.tcp_timestamps", "0");
        }
        if ((variant & 2) != 0) {
            dut.knobs().set("net.ipv4.tcp_sack", "0");
        }
        if ((variant & 4) != 0) {
            dut.knobs().set("net.ipv4.tcp_window_scaling", "0");
        }
        if ((variant & 8) != 0) {
            dut.knobs().set("net.ipv4.tcp_congestion_control", "reno");
        }
        if ((variant & 16) != 0) {
            dut.knobs().set("net.ipv4.tcp_rmem", "4096 8192 8192");
        }
        wire = net.wire(dut, "eth0", DUT_MAC);
        TestNet.addr(dut, wire.dutEnd, "198.18.0.2/24");
        dut.neigh().addPermanent(wire.dutEnd, PEER_ADDR, wire.end.mac());
        tcp = Tcp.install(dut);
        for (int i = 0; i < PORTS; i++) {
            peers[i] = new Peer(40000 + i, 1_000_000L * (i + 1) + 0xfff0_0000L * (i & 1));
            byPort.put(peers[i].port, peers[i]);
        }
        Peer probe = new Peer(PROBE_PORT, 77_000L);
        byPort.put(PROBE_PORT, probe);
        tcp.listen(0, DUT_PORT, 2 + (variant >>> 5), c -> {
            Peer p = byPort.get(c.remotePort());
            if (p != null) {
                p.sock = c;
            }
            c.setCallbacks(callbacks);
        });
    }

    /** The listener target: every connection comes from the script. */
    static void fuzzListener(byte[] data) {
        FuzzBytes in = new FuzzBytes(data);
        try (TcpUnderFuzz t = new TcpUnderFuzz(in.u8())) {
            t.script(in);
            t.finish();
        }
    }

    /** The established target: port 40000 completes a handshake and the socket has data in flight first. */
    static void fuzzEstablished(byte[] data) {
        FuzzBytes in = new FuzzBytes(data);
        try (TcpUnderFuzz t = new TcpUnderFuzz(in.u8())) {
            Peer p = t.peers[0];
            t.handshake(p, in.u8());
            if (p.sock == null) {
                throw new AssertionError("the first handshake did not complete: " + t.tcp.sockets());
            }
            t.write(p, 30_000);
            t.script(in);
            t.finish();
        }
    }

    private void handshake(Peer p, int opts) {
        byte[] syn = new byte[] {2, 4, 5, (byte) 0xb4, 4, 2, 3, 3, 7, 1};
        segment(p, TcpSegment.SYN, p.nxt, 0, 65535, (opts & 1) != 0 ? syn : new byte[] {2, 4, 5, (byte) 0xb4}, 0);
        p.nxt = Seq.add(p.isn, 1);
        collect();
        segment(p, TcpSegment.ACK_FLAG, p.nxt, Seq.add(p.dutIss, 1), 65535, new byte[0], 0);
        collect();
    }

    private void script(FuzzBytes in) {
        while (in.hasMore() && step < 40) {
            step++;
            switch (in.u8() % 8) {
                case 0, 1, 2 -> fuzzSegment(in);
                case 3 -> {
                    net.run(1L << (in.u8() % 38));
                    collect();
                }
                case 4 -> write(peers[in.u8() % PORTS], in.u16() % 70_000);
                case 5 -> {
                    reading = (in.u8() & 1) == 0;
                    if (reading) {
                        for (Peer p : peers) {
                            if (p.sock != null) {
                                drain(p.sock);
                            }
                        }
                    }
                }
                case 6 -> {
                    Peer p = peers[in.u8() % PORTS];
                    int how = in.u8() % 3;
                    if (p.sock != null) {
                        switch (how) {
                            case 0 -> p.sock.shutdownOutput();
                            case 1 -> p.sock.close();
                            default -> p.sock.abort();
                        }
                        net.settle();
                        collect();
                    }
                }
                default -> rawSegment(in);
            }
            checkSockets();
        }
    }

    private void fuzzSegment(FuzzBytes in) {
        Peer p = peers[in.u8() % PORTS];
        int flags = in.u8();
        int seqMode = in.u8();
        long seq = seqMode < 200 ? Seq.add(p.nxt, (byte) in.u8() * (seqMode < 100 ? 1L : 1448L)) : in.u32() & 0xffff_ffffL;
        int ackMode = in.u8();
        long base = p.dutIss < 0 ? 0 : p.dutNxt;
        long ack = ackMode < 200 ? Seq.add(base, (byte) in.u8() * (ackMode < 100 ? 1L : 1448L)) : in.u32() & 0xffff_ffffL;
        int window = in.u16();
        byte[] options = options(in, p);
        int len = in.u16() % 1500;
        len = Math.max(0, Math.min(len, 1500 - 40 - options.length));
        segment(p, flags, seq, ack, window, options, len);
        if ((flags & TcpSegment.SYN) != 0 && Seq.after(Seq.add(seq, 1), p.nxt)) {
            p.nxt = Seq.add(seq, 1);
        }
        long end = Seq.add(seq, len + ((flags & TcpSegment.SYN) != 0 ? 1 : 0) + ((flags & TcpSegment.FIN) != 0 ? 1 : 0));
        if (Seq.after(end, p.nxt) && Seq.sub(end, p.nxt) < 1 << 20) {
            p.nxt = end;
        }
        collect();
    }

    private byte[] options(FuzzBytes in, Peer p) {
        ByteBuf o = Unpooled.buffer(40);
        int n = in.u8() % 6;
        for (int i = 0; i < n && o.writerIndex() < 40; i++) {
            switch (in.u8() % 8) {
                case 0 -> o.writeByte(2).writeByte(4).writeShort(in.u16());
                case 1 -> o.writeByte(3).writeByte(3).writeByte(in.u8() % 20);
                case 2 -> o.writeByte(4).writeByte(2);
                case 3 -> {
                    int mode = in.u8();
                    long ecr = mode < 200 ? p.dutTsVal : in.u32();
                    o.writeByte(8).writeByte(10).writeInt((int) (1000 + net.sched.nanoTime() / 1_000_000L)
                            + (mode < 128 ? 0 : (byte) in.u8())).writeInt((int) ecr);
                }
                case 4 -> {
                    int blocks = 1 + in.u8() % 4;
                    o.writeByte(5).writeByte(2 + 8 * blocks);
                    for (int b = 0; b < blocks; b++) {
                        long s = Seq.add(p.dutIss + 1, (in.u16() % 64) * 1448L - in.u8() % 3);
                        o.writeInt((int) s).writeInt((int) Seq.add(s, (long) (in.u8() % 8) * 1448 + in.u8() % 3));
                    }
                }
                case 5 -> o.writeByte(1);
                case 6 -> o.writeByte(0);
                default -> o.writeBytes(in.bytes(in.u8() % 12));
            }
        }
        int len = Math.min(40, (o.writerIndex() + 3) & ~3);
        byte[] a = new byte[len];
        o.getBytes(0, a, 0, Math.min(len, o.writerIndex()));
        return a;
    }

    /** A raw TCP header and payload from the input, in a valid IP packet; its checksum fixed unless told not to. */
    private void rawSegment(FuzzBytes in) {
        Peer p = peers[in.u8() % PORTS];
        int fix = in.u8();
        byte[] tcpBytes = in.bytes(in.u8());
        if (tcpBytes.length >= 4) {
            tcpBytes[0] = (byte) (p.port >>> 8);
            tcpBytes[1] = (byte) p.port;
            tcpBytes[2] = (byte) (DUT_PORT >>> 8);
            tcpBytes[3] = (byte) DUT_PORT;
        }
        if (tcpBytes.length >= 20) {
            // Whatever the header says, its payload is the peer's stream at that sequence number, so what the
            // application reads can still be checked.
            ByteBuf t = Unpooled.wrappedBuffer(tcpBytes);
            int hl = (t.getUnsignedByte(12) >>> 4) * 4;
            long first = Seq.sub(Seq.add(t.getUnsignedInt(4), (t.getUnsignedByte(13) & TcpSegment.SYN) != 0 ? 1 : 0),
                    p.isn);
            for (int i = Math.max(hl, 20); i < tcpBytes.length; i++) {
                tcpBytes[i] = (byte) pattern(first + i - Math.max(hl, 20));
            }
        }
        if (TRACE) {
            System.err.printf("step %d: peer %d -> raw %d bytes%n", step, p.port, tcpBytes.length);
        }
        send(frame(tcpBytes, (fix & 1) == 0));
        collect();
    }

    private void segment(Peer p, int flags, long seq, long ack, int window, byte[] options, int payload) {
        int hl = 20 + options.length;
        byte[] t = new byte[hl + payload];
        ByteBuf b = Unpooled.wrappedBuffer(t).writerIndex(0);
        b.writeShort(p.port).writeShort(DUT_PORT).writeInt((int) seq).writeInt((int) ack)
                .writeByte((hl / 4) << 4).writeByte(flags).writeShort(window).writeShort(0).writeShort(0);
        b.writeBytes(options);
        // Payload bytes are a function of their offset in the peer's stream (the SYN takes offset 0).
        long first = Seq.sub(Seq.add(seq, (flags & TcpSegment.SYN) != 0 ? 1 : 0), p.isn);
        for (int i = 0; i < payload; i++) {
            b.writeByte(pattern(first + i));
        }
        if (TRACE) {
            System.err.printf("step %d: peer %d -> flags %02x seq %d ack %d win %d opts %d len %d%n", step, p.port, flags,
                    Seq.sub(seq, p.isn), p.dutIss < 0 ? ack : Seq.sub(ack, p.dutIss), window, options.length, payload);
        }
        send(frame(t, true));
    }

    static int pattern(long streamSeq) {
        return (int) ((streamSeq * 31 + (streamSeq >>> 8)) & 0xff);
    }

    private byte[] frame(byte[] tcpBytes, boolean fixChecksum) {
        int ipLen = 20 + tcpBytes.length;
        ByteBuf b = Unpooled.buffer(14 + ipLen);
        b.writeMedium((int) (DUT_MAC >>> 24)).writeMedium((int) DUT_MAC);
        long src = wire.end.mac();
        b.writeMedium((int) (src >>> 24)).writeMedium((int) src);
        b.writeShort(EthernetFrame.ETH_P_IP);
        b.writeByte(0x45).writeByte(0).writeShort(ipLen).writeShort(0).writeShort(0x4000)
                .writeByte(64).writeByte(Ipv4Packet.PROTO_TCP).writeShort(0).writeInt(PEER_ADDR).writeInt(DUT_ADDR);
        b.setShort(14 + Ipv4Packet.CHECKSUM, Checksum.compute(b, 14, 20));
        int t = b.writerIndex();
        b.writeBytes(tcpBytes);
        if (fixChecksum && tcpBytes.length >= 18) {
            b.setShort(t + TcpSegment.CHECKSUM, 0);
            long ph = Checksum.pseudoHeader(PEER_ADDR, DUT_ADDR, Ipv4Packet.PROTO_TCP, tcpBytes.length);
            b.setShort(t + TcpSegment.CHECKSUM, Checksum.finish(Checksum.add(b, t, tcpBytes.length, ph)));
        }
        byte[] a = new byte[b.readableBytes()];
        b.readBytes(a);
        return a;
    }

    private void send(byte[] frame) {
        long before = fates();
        wire.send(frame);
        net.settle();
        if (fates() == before) {
            throw new AssertionError("step " + step + ": a segment neither reached TCP nor was counted as dropped");
        }
    }

    private long fates() {
        return dut.drops().total() + dut.mib().get(Mib.IpInDelivers);
    }

    /** Reads what the socket sent: each connection's ISS, highest sequence sent and last timestamp. */
    private void collect() {
        List<TestNet.Seen> l = wire.received;
        for (; seen < l.size(); seen++) {
            ByteBuf b = Unpooled.wrappedBuffer(l.get(seen).data());
            if (b.readableBytes() < 34 || b.getUnsignedShort(12) != EthernetFrame.ETH_P_IP
                    || b.getUnsignedByte(23) != Ipv4Packet.PROTO_TCP) {
                continue;
            }
            int ihl = (b.getUnsignedByte(14) & 0xf) * 4;
            int total = b.getUnsignedShort(16);
            int t = 14 + ihl;
            TcpSegment seg = new TcpSegment();
            if (seg.check(b, t, total - ihl) != null) {
                throw new AssertionError("the socket sent a malformed segment");
            }
            long ph = Checksum.pseudoHeader(DUT_ADDR, PEER_ADDR, Ipv4Packet.PROTO_TCP, total - ihl);
            if (Checksum.finish(Checksum.add(b, t, total - ihl, ph)) != 0) {
                throw new AssertionError("the socket sent a segment with a wrong checksum");
            }
            Peer p = byPort.get(seg.dstPort());
            if (p == null) {
                continue;
            }
            int flags = seg.flags();
            if (TRACE) {
                System.err.printf("        dut -> %d flags %02x seq %d ack %d win %d len %d%n", p.port, flags,
                        p.dutIss < 0 ? 0 : Seq.sub(seg.seq(), p.dutIss), Seq.sub(seg.ack(), p.isn), seg.window(),
                        seg.payloadLength());
            }
            if ((flags & TcpSegment.SYN) != 0) {
                p.dutIss = seg.seq();
                p.dutNxt = Seq.add(seg.seq(), 1);
            }
            long end = Seq.add(seg.seq(), seg.payloadLength() + ((flags & TcpSegment.FIN) != 0 ? 1 : 0));
            if (p.dutIss >= 0 && Seq.after(end, p.dutNxt)) {
                p.dutNxt = end;
            }
            TcpOptions o = new TcpOptions();
            o.parse(b, t, seg.headerLength(), (flags & TcpSegment.SYN) != 0);
            if (o.hasTimestamp) {
                p.dutTsVal = o.tsVal;
            }
        }
    }

    private void write(Peer p, int n) {
        if (p.sock == null || n == 0) {
            return;
        }
        p.sock.write(ZEROS, 0, Math.min(n, ZEROS.capacity()));
        net.settle();
        collect();
    }

    // Shared by every input (one runs at a time): a fuzz run makes thousands of them a second.
    private static final ByteBuf ZEROS = Unpooled.wrappedBuffer(new byte[70_000]);
    private static final ByteBuf READ_BUF = Unpooled.buffer(1 << 16);
    private final ByteBuf readBuf = READ_BUF;

    private final TcpSock.Callbacks callbacks = new TcpSock.Callbacks() {
        @Override
        public void readable(TcpSock s) {
            if (reading) {
                drain(s);
            }
        }
    };

    /**
     * Reads everything waiting and checks each byte against the peer's stream: the byte at offset k of a
     * connection's stream has sequence number irs + 1 + k, and the peer wrote pattern(seq - its ISN) there (a SYN
     * the fuzzer placed elsewhere than the ISN moves the stream, not the pattern).
     */
    private void drain(TcpSock s) {
        Peer p = byPort.get(s.remotePort());
        long read = streamRead.getOrDefault(s, 0L);
        int n;
        while ((n = s.read(readBuf.clear(), readBuf.capacity())) > 0) {
            for (int i = 0; i < n; i++) {
                long k = read + i;
                int sent = pattern(Seq.sub(Seq.add(s.irs, 1 + k), p.isn));
                if ((readBuf.getByte(i) & 0xff) != sent) {
                    throw new AssertionError("port " + p.port + ": the application read byte " + k + " of the stream as "
                            + (readBuf.getByte(i) & 0xff) + ", the peer sent " + sent);
                }
            }
            read += n;
        }
        streamRead.put(s, read);
    }

    private void checkSockets() {
        for (TcpSock s : tcp.sockets()) {
            String who = "step " + step + ", " + s + ": ";
            if (s.state() == TcpState.SYN_SENT || s.state() == TcpState.CLOSED) {
                continue;
            }
            if (Seq.after(s.sndUna, s.sndNxt)) {
                throw new AssertionError(who + "snd_una " + s.sndUna + " after snd_nxt " + s.sndNxt);
            }
            Scoreboard sb = s.sb;
            if (sb.packetsOut() < 0 || sb.sackedOut() < 0 || sb.lostOut() < 0 || sb.retransOut() < 0) {
                throw new AssertionError(who + "negative scoreboard counter: out " + sb.packetsOut() + " sacked "
                        + sb.sackedOut() + " lost " + sb.lostOut() + " retrans " + sb.retransOut());
            }
            if (sb.sackedOut() + sb.lostOut() > sb.packetsOut()) {
                throw new AssertionError(who + "sacked_out " + sb.sackedOut() + " + lost_out " + sb.lostOut()
                        + " > packets_out " + sb.packetsOut());
            }
            if (s.state() == TcpState.ESTABLISHED && s.cwnd() < 1) {
                throw new AssertionError(who + "cwnd " + s.cwnd());
            }
            Long last = rcvNxtSeen.put(s, s.rcvNxt);
            if (last != null && Seq.before(s.rcvNxt, last)) {
                throw new AssertionError(who + "rcv_nxt moved back from " + last + " to " + s.rcvNxt);
            }
        }
    }

    /** Every timer runs out; then a new connection must complete and carry data intact. */
    private void finish() {
        reading = true;
        net.run(400_000_000_000L);
        collect();
        checkSockets();
        Peer p = byPort.get(PROBE_PORT);
        segment(p, TcpSegment.SYN, p.nxt, 0, 65535, new byte[] {2, 4, 5, (byte) 0xb4}, 0);
        p.nxt = Seq.add(p.isn, 1);
        collect();
        if (p.dutIss < 0) {
            throw new AssertionError("the listener no longer answers a SYN: " + dut.drops().snapshot());
        }
        segment(p, TcpSegment.ACK_FLAG | TcpSegment.PSH, p.nxt, Seq.add(p.dutIss, 1), 65535, new byte[0], 100);
        collect();
        long read = p.sock == null ? 0 : streamRead.getOrDefault(p.sock, 0L);
        if (p.sock == null || read != 100) {
            throw new AssertionError("a new connection after the input did not deliver its 100 bytes: "
                    + (p.sock == null ? "not accepted" : read + " read, " + p.sock.state()));
        }
    }

    @Override
    public void close() {
        tcp.close();
        net.close();
        long live = LeakGuard.liveBuffers();
        if (live != liveBefore) {
            throw new AssertionError((live - liveBefore) + " buffer(s) not released after the namespace was closed");
        }
    }
}
