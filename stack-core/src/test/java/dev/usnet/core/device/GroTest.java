package dev.usnet.core.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * GRO on a veth end (napi_gro_receive, tcp_gro_receive): which segments of a train arriving in one backlog run are
 * merged and where the flow is flushed, one rule per test. Each train is sent at once, so it waits in the
 * receiving namespace's backlog and one run (dev_weight 64) takes it; what arrives above the device is recorded.
 */
class GroTest {
    static final int MSS = 1448;
    static final int SRC = Ipv4Addr.parse("198.18.0.1");
    static final int DST = Ipv4Addr.parse("198.18.0.2");
    static final long SRC_MAC = 0x0200_0000_0a01L;

    /** One TCP segment's fields; defaults are a bulk sender's (ACK, timestamps, DF, incrementing IP ID). */
    static final class Seg {
        long seq;
        int len = MSS;
        int flags = TcpSegment.ACK_FLAG;
        long ack = 5000;
        int window = 1024;
        int tsval = 100;
        int tsecr = 50;
        int id;
        boolean df = true;
        int ttl = 64;
        int tos;
        int srcPort = 40000;
        boolean ipOption;
        boolean badChecksum;

        Seg(int index) {
            this.seq = (long) index * MSS;
            this.id = 0x100 + index;
        }

        Seg with(Consumer<Seg> c) {
            c.accept(this);
            return this;
        }
    }

    /** Payload byte at stream offset {@code k}: merged payload can be checked byte by byte. */
    static int streamByte(long k) {
        return (int) ((k * 7 + 3) & 0xff);
    }

    static Packet frame(Seg g, long dstMac) {
        int iphl = g.ipOption ? 24 : 20;
        int thl = 32;
        int len = 14 + iphl + thl + g.len;
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        ByteBuf b = p.buf();
        int s = p.start();
        b.writerIndex(s + len);
        EthernetFrame.write(b, s, dstMac, SRC_MAC, EthernetFrame.ETH_P_IP);
        int t = s + 14 + iphl;
        TcpSegment.writeHeader(b, t, g.srcPort, 5001, g.seq, g.ack, thl, g.flags, g.window);
        // NOP NOP TS(10): Linux's layout of the timestamp option on data segments.
        b.setInt(t + 20, 0x0101080a);
        b.setInt(t + 24, g.tsval);
        b.setInt(t + 28, g.tsecr);
        for (int i = 0; i < g.len; i++) {
            b.setByte(t + thl + i, streamByte(g.seq + i));
        }
        b.setShort(t + TcpSegment.CHECKSUM, 0);
        int c = Checksum.finish(Checksum.add(b, t, thl + g.len, Checksum.pseudoHeader(SRC, DST, 6, thl + g.len)));
        b.setShort(t + TcpSegment.CHECKSUM, g.badChecksum ? c ^ 0x5555 : c);
        Ipv4Packet.writeHeader(b, s + 14, g.tos, iphl + thl + g.len, g.id, g.df ? Ipv4Packet.FLAG_DF : 0, g.ttl, 6,
                SRC, DST);
        if (g.ipOption) {
            b.setByte(s + 14, 0x46);
            b.setInt(s + 34, 0x01010100); // NOP NOP NOP EOL
            b.setShort(s + 14 + Ipv4Packet.CHECKSUM, 0);
            b.setShort(s + 14 + Ipv4Packet.CHECKSUM, Checksum.compute(b, s + 14, 24));
        }
        return p;
    }

    /** What the stack above the device saw: a packet's segments, gso_size, first seq, payload and flags. */
    record Got(int segs, int gsoSize, long seq, int payload, int flags, int length) {}

    static final class Rig implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack a = net.ns("a");
        final NetStack b = net.ns("b");
        final VethEnd[] pair = net.link(a, "eth0", null, b, "eth0", null);
        final List<Got> got = new ArrayList<>();

        Rig(boolean gro) {
            pair[1].setGro(gro);
            pair[1].setRxHandler((dev, p) -> {
                got.add(check(p));
                p.release();
                return true;
            });
        }

        /** Sends the train at once and runs the receiver's backlog. */
        List<Got> train(Seg... segs) {
            for (Seg g : segs) {
                pair[0].transmit(frame(g, pair[1].mac()));
            }
            net.settle();
            return got;
        }

        @Override
        public void close() {
            net.close();
        }
    }

    /**
     * Checks what a delivered packet claims: a valid IP header with the frame's length, a TCP checksum that the
     * pseudo-header sum completes (partial, when merged) and the stream's bytes in order.
     */
    static Got check(Packet p) {
        ByteBuf b = p.buf();
        int ip = p.start() + 14;
        assertTrue(Checksum.verify(b, ip, (b.getUnsignedByte(ip) & 0xf) * 4), "IP header checksum");
        int tot = b.getUnsignedShort(ip + Ipv4Packet.TOTAL_LEN);
        assertEquals(p.length() - 14, tot, "IP total length is the frame's");
        int t = ip + (b.getUnsignedByte(ip) & 0xf) * 4;
        int thl = (b.getUnsignedByte(t + TcpSegment.DATA_OFF) >>> 4) * 4;
        int l4 = tot - (t - ip);
        long sum = Checksum.add(b, t, l4, p.csumState() == ChecksumState.PARTIAL ? 0
                : Checksum.pseudoHeader(SRC, DST, 6, l4));
        if (p.csumState() == ChecksumState.PARTIAL) {
            assertEquals(t, p.csumStart());
            // The field holds the pseudo-header sum: summing the segment into it and complementing completes it.
            int complete = Checksum.finish(sum);
            ByteBuf copy = b.copy(t, l4);
            copy.setShort(TcpSegment.CHECKSUM, complete);
            assertEquals(0, Checksum.finish(Checksum.add(copy, 0, l4, Checksum.pseudoHeader(SRC, DST, 6, l4))),
                    "completed TCP checksum");
            copy.release();
        }
        long seq = b.getUnsignedInt(t + TcpSegment.SEQ);
        int payload = l4 - thl;
        for (int i = 0; i < payload; i++) {
            if ((b.getByte(t + thl + i) & 0xff) != streamByte(seq + i)) {
                throw new AssertionError("payload byte " + i + " of segment at " + seq);
            }
        }
        return new Got(p.gsoSegs() == 0 ? 1 : p.gsoSegs(), p.gsoSize(), seq, payload,
                b.getUnsignedByte(t + TcpSegment.FLAGS), p.length());
    }

    static Seg[] train(int n) {
        Seg[] t = new Seg[n];
        for (int i = 0; i < n; i++) {
            t[i] = new Seg(i);
        }
        return t;
    }

    static List<Integer> segs(List<Got> got) {
        return got.stream().map(Got::segs).toList();
    }

    @Test
    void fourInOrderSegmentsOfOneFlowInOneRunBecomeOneGsoPacket() {
        try (Rig r = new Rig(true)) {
            List<Got> got = r.train(train(4));
            assertEquals(List.of(new Got(4, MSS, 0, 4 * MSS, TcpSegment.ACK_FLAG, 14 + 20 + 32 + 4 * MSS)), got);
            assertEquals(4, r.pair[1].stats().rxPackets, "the device counts wire frames, as a driver does");
            assertEquals(1, r.pair[1].gro().groPackets());
            assertEquals(4, r.pair[1].gro().groSegments());
            assertEquals(0, r.pair[1].gro().heldFlows(), "nothing is held after the run");
        }
    }

    @Test
    void withGroOffTheSegmentsArriveAsTheyWereSent() {
        try (Rig r = new Rig(false)) {
            assertEquals(List.of(1, 1, 1, 1), segs(r.train(train(4))));
            assertFalse(r.pair[1].groEnabled(), "GRO is off by default on a veth");
        }
    }

    @Test
    void aSequenceGapFlushesTheFlowAndStartsANewOne() {
        try (Rig r = new Rig(true)) {
            Seg[] t = train(5);
            t[2] = new Seg(3);
            t[3] = new Seg(4);
            t[4] = new Seg(5);
            List<Got> got = r.train(t);
            assertEquals(List.of(2, 3), segs(got));
            assertEquals(3L * MSS, got.get(1).seq());
        }
    }

    @Test
    void aDifferentTimestampValueOrEchoIsNotMerged() {
        try (Rig r = new Rig(true)) {
            Seg[] t = train(6);
            t[2].tsval = 101;
            t[3].tsval = 101;
            t[4].tsval = 101;
            t[5].with(g -> g.tsval = 101).tsecr = 51;
            assertEquals(List.of(2, 3, 1), segs(r.train(t)), "options are compared word by word, TSval and TSecr too");
        }
    }

    @Test
    void pshOrFinIsMergedAndThenDeliversTheFlow() {
        try (Rig r = new Rig(true)) {
            Seg[] t = train(5);
            t[2].flags |= TcpSegment.PSH;
            t[4].flags |= TcpSegment.FIN;
            List<Got> got = r.train(t);
            assertEquals(List.of(3, 2), segs(got));
            assertEquals(TcpSegment.ACK_FLAG | TcpSegment.PSH, got.get(0).flags(), "the merged header takes PSH on");
            assertEquals(TcpSegment.ACK_FLAG | TcpSegment.FIN, got.get(1).flags());
        }
    }

    @Test
    void urgRstSynCwrEceOrAnyOtherFlagDifferenceIsNotMerged() {
        for (int flag : new int[] {TcpSegment.URG, TcpSegment.RST, TcpSegment.CWR, TcpSegment.ECE}) {
            try (Rig r = new Rig(true)) {
                Seg[] t = train(4);
                t[2].flags |= flag;
                List<Integer> want = flag == TcpSegment.URG || flag == TcpSegment.RST
                        ? List.of(2, 1, 1) // the odd segment is delivered at once, the next one starts a flow
                        : List.of(2, 1, 1); // CWR/ECE: held alone; the next differs again and flushes it
                assertEquals(want, segs(r.train(t)), "flag " + flag);
            }
        }
        try (Rig r = new Rig(true)) {
            Seg[] t = train(4);
            t[2].flags |= TcpSegment.ECE;
            t[3].flags |= TcpSegment.ECE;
            assertEquals(List.of(2, 2), segs(r.train(t)), "ECE on both: the same flag word merges again");
        }
    }

    @Test
    void aShortSegmentIsMergedAndEndsTheFlowAndALongerOneIsNotMerged() {
        try (Rig r = new Rig(true)) {
            Seg[] t = train(4);
            t[2].len = 500;
            t[3].seq = 2L * MSS + 500;
            List<Got> got = r.train(t);
            assertEquals(List.of(3, 1), segs(got));
            assertEquals(MSS, got.get(0).gsoSize());
            assertEquals(2 * MSS + 500, got.get(0).payload());
        }
        try (Rig r = new Rig(true)) {
            Seg[] t = train(3);
            t[0].len = 1000;
            t[1].seq = 1000;
            t[2].seq = 1000 + MSS;
            List<Got> got = r.train(t);
            assertEquals(List.of(1, 2), segs(got), "gso_size is the first segment's: a longer one starts anew");
            assertEquals(MSS, got.get(1).gsoSize());
        }
    }

    @Test
    void aDifferentAckOrWindowIsNotMerged() {
        try (Rig r = new Rig(true)) {
            Seg[] t = train(4);
            t[2].ack = 6000;
            t[3].ack = 6000;
            assertEquals(List.of(2, 2), segs(r.train(t)));
        }
        try (Rig r = new Rig(true)) {
            Seg[] t = train(4);
            t[1].window = 2048;
            assertEquals(List.of(1, 1, 2), segs(r.train(t)), "the window is in the compared flag word");
        }
    }

    @Test
    void aDifferentTtlTosOrDfIsNotMerged() {
        List<Consumer<Seg>> changes = List.of(g -> g.ttl = 63, g -> g.tos = 0x10, g -> g.df = false);
        for (Consumer<Seg> c : changes) {
            try (Rig r = new Rig(true)) {
                Seg[] t = train(4);
                t[2].with(c);
                t[3].with(c);
                assertEquals(List.of(2, 2), segs(r.train(t)));
            }
        }
    }

    @Test
    void ipOptionsAndBadChecksumsAreNotGrodButDoNotFlushTheHeldFlow() {
        try (Rig r = new Rig(true)) {
            Seg[] t = train(4);
            Seg odd = new Seg(9).with(g -> g.ipOption = true);
            odd.srcPort = 40001;
            Seg bad = new Seg(2).with(g -> g.badChecksum = true);
            bad.srcPort = 40002;
            List<Got> got = r.train(t[0], t[1], odd, bad, t[2], t[3]);
            assertEquals(3, got.size());
            assertEquals(4, got.get(2).segs(), "the flow held across the two others and was flushed at the run's end");
            assertEquals(1, r.pair[1].gro().groPackets());
        }
    }

    @Test
    void theIpIdMustIncrementUnlessDfKeepsItFixed() {
        try (Rig r = new Rig(true)) {
            Seg[] t = train(4);
            for (Seg g : t) {
                g.id = 7;
            }
            assertEquals(List.of(4), segs(r.train(t)), "DF with a fixed ID (atomic datagrams) merges");
        }
        try (Rig r = new Rig(true)) {
            Seg[] t = train(4);
            for (Seg g : t) {
                g.id = 7;
                g.df = false;
            }
            assertEquals(List.of(1, 1, 1, 1), segs(r.train(t)), "without DF a repeated ID is a different datagram");
        }
        try (Rig r = new Rig(true)) {
            Seg[] t = train(4);
            t[3].id = t[2].id;
            assertEquals(List.of(3, 1), segs(r.train(t)), "an incrementing flow may not turn fixed");
        }
    }

    @Test
    void theMergedDatagramStaysBelow64KiB() {
        try (Rig r = new Rig(true)) {
            List<Got> got = r.train(train(50));
            // 20 + 32 + 45 * 1448 = 65212 < 65536; a 46th segment would make 66660.
            assertEquals(List.of(45, 5), segs(got));
            assertTrue(got.get(0).length() - 14 < Gro.GRO_MAX_SIZE);
        }
    }

    @Test
    void aFullRunKeepsFlowsHeldThisJiffyAndADrainedBacklogFlushesAll() {
        try (Rig r = new Rig(true)) {
            // Runs of 4 frames at one instant: the held flow carries over (napi_gro_flush(flush_old) after a full
            // weight) and is delivered when the backlog is drained (napi_complete_done).
            r.b.knobs().set("net.core.dev_weight", "4");
            assertEquals(List.of(10), segs(r.train(train(10))));
        }
        try (Rig r = new Rig(true)) {
            // 0.3 ms of modelled CPU a frame: runs of 4 start 1.2 ms apart, so at the end of the second run the flow
            // held since jiffy 0 is old (jiffy 1) and is delivered; the last 2 frames end the backlog.
            r.b.knobs().set("net.core.dev_weight", "4");
            r.b.knobs().set("usnet.cpu.model", "1");
            r.b.knobs().set("usnet.cpu.l2_rx_ns", "300000");
            for (Seg g : train(10)) {
                r.pair[0].transmit(frame(g, r.pair[1].mac()));
            }
            r.net.run(10_000_000L);
            assertEquals(List.of(8, 2), segs(r.got));
        }
    }

    @Test
    void interleavedFlowsAreMergedEachInItsOwnPacket() {
        try (Rig r = new Rig(true)) {
            Seg[] x = train(3);
            Seg[] y = train(3);
            for (Seg g : y) {
                g.srcPort = 40001;
            }
            List<Got> got = r.train(x[0], y[0], x[1], y[1], x[2], y[2]);
            assertEquals(List.of(3, 3), segs(got));
        }
    }

    @Test
    void aNinthFlowDeliversTheOldestHeldOne() {
        try (Rig r = new Rig(true)) {
            List<Seg> t = new ArrayList<>();
            for (int f = 0; f < 9; f++) {
                for (int i = 0; i < 2; i++) {
                    Seg g = new Seg(i);
                    g.srcPort = 41000 + f;
                    t.add(g);
                }
            }
            // Flow by flow: each flow's two segments merge before the next flow arrives; 9 flows > MAX_GRO_SKBS.
            assertEquals(List.of(2, 2, 2, 2, 2, 2, 2, 2, 2), segs(r.train(t.toArray(Seg[]::new))));
            assertEquals(9, r.pair[1].gro().groPackets());
        }
        try (Rig r = new Rig(true)) {
            List<Seg> t = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                for (int f = 0; f < 9; f++) {
                    Seg g = new Seg(i);
                    g.srcPort = 41000 + f;
                    t.add(g);
                }
            }
            // Round robin over 9 flows with room for 8: every arrival evicts the flow whose next segment is due
            // next, so nothing ever merges (a single gro_list of MAX_GRO_SKBS, as Linux before 4.19's hash).
            List<Got> got = r.train(t.toArray(Seg[]::new));
            assertEquals(18, got.size());
            assertTrue(got.stream().allMatch(g -> g.segs() == 1));
            assertEquals(0, r.pair[1].gro().groPackets());
        }
    }

    @Test
    void mergingNeverWritesIntoBytesAnotherHolderShares() {
        try (Rig r = new Rig(true)) {
            Seg[] t = train(3);
            Packet first = frame(t[0], r.pair[1].mac());
            Packet kept = first.cloneShared(); // as TCP's retransmission queue keeps what it sent
            byte[] before = new byte[kept.length()];
            kept.buf().getBytes(kept.start(), before);
            r.pair[0].transmit(first);
            r.pair[0].transmit(frame(t[1], r.pair[1].mac()));
            r.pair[0].transmit(frame(t[2], r.pair[1].mac()));
            r.net.settle();
            assertEquals(List.of(3), segs(r.got));
            byte[] after = new byte[kept.length()];
            kept.buf().getBytes(kept.start(), after);
            assertArrayEquals(before, after);
            kept.release();
        }
    }

    // ---- TCP over IPv6 ----

    static final byte[] SRC6 = {(byte) 0xfd, 0, 1, (byte) 0x98, 0, 0x18, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    static final byte[] DST6 = {(byte) 0xfd, 0, 1, (byte) 0x98, 0, 0x18, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

    /** RFC 8200 §8.1's pseudo-header sum, written out here rather than taken from the code under test. */
    static long pseudoHeader6(int length) {
        long sum = 0;
        for (int i = 0; i < 16; i += 2) {
            sum += (SRC6[i] & 0xff) << 8 | (SRC6[i + 1] & 0xff);
            sum += (DST6[i] & 0xff) << 8 | (DST6[i + 1] & 0xff);
        }
        return sum + (length >>> 16) + (length & 0xffff) + 6;
    }

    /** {@link Seg} as TCPv6: traffic class from {@code tos}, hop limit from {@code ttl}, {@code id} as flow label. */
    static Packet frame6(Seg g, long dstMac, int nextHeader) {
        int thl = 32;
        int len = 14 + 40 + thl + g.len;
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        ByteBuf b = p.buf();
        int s = p.start();
        b.writerIndex(s + len);
        EthernetFrame.write(b, s, dstMac, SRC_MAC, 0x86dd);
        int ip = s + 14;
        b.setInt(ip, 0x6000_0000 | (g.tos & 0xff) << 20 | (g.id & 0xfffff));
        b.setShort(ip + 4, thl + g.len);
        b.setByte(ip + 6, nextHeader);
        b.setByte(ip + 7, g.ttl);
        b.setBytes(ip + 8, SRC6);
        b.setBytes(ip + 24, DST6);
        int t = ip + 40;
        TcpSegment.writeHeader(b, t, g.srcPort, 5001, g.seq, g.ack, thl, g.flags, g.window);
        b.setInt(t + 20, 0x0101080a);
        b.setInt(t + 24, g.tsval);
        b.setInt(t + 28, g.tsecr);
        for (int i = 0; i < g.len; i++) {
            b.setByte(t + thl + i, streamByte(g.seq + i));
        }
        b.setShort(t + TcpSegment.CHECKSUM, 0);
        int c = Checksum.finish(Checksum.add(b, t, thl + g.len, pseudoHeader6(thl + g.len)));
        b.setShort(t + TcpSegment.CHECKSUM, g.badChecksum ? c ^ 0x5555 : c);
        return p;
    }

    /** As {@link #check}, for IPv6: payload length is the frame's, a merged packet is GSO_TCPV6 with a partial sum. */
    static Got check6(Packet p) {
        ByteBuf b = p.buf();
        int ip = p.start() + 14;
        assertEquals(6, b.getUnsignedByte(ip) >>> 4);
        int plen = b.getUnsignedShort(ip + 4);
        assertEquals(p.length() - 14 - 40, plen, "IPv6 payload length is the frame's");
        int t = ip + 40;
        int thl = (b.getUnsignedByte(t + TcpSegment.DATA_OFF) >>> 4) * 4;
        if (p.gsoSegs() > 1) {
            assertEquals(Packet.GSO_TCPV6, p.gsoType());
            assertEquals(ChecksumState.PARTIAL, p.csumState());
            assertEquals(t, p.csumStart());
            int complete = Checksum.finish(Checksum.add(b, t, plen, 0));
            ByteBuf copy = b.copy(t, plen);
            copy.setShort(TcpSegment.CHECKSUM, complete);
            assertEquals(0, Checksum.finish(Checksum.add(copy, 0, plen, pseudoHeader6(plen))),
                    "completed TCP checksum over the IPv6 pseudo-header");
            copy.release();
        } else {
            assertEquals(0, Checksum.finish(Checksum.add(b, t, plen, pseudoHeader6(plen))), "TCP checksum");
        }
        long seq = b.getUnsignedInt(t + TcpSegment.SEQ);
        int payload = plen - thl;
        for (int i = 0; i < payload; i++) {
            if ((b.getByte(t + thl + i) & 0xff) != streamByte(seq + i)) {
                throw new AssertionError("payload byte " + i + " of segment at " + seq);
            }
        }
        return new Got(p.gsoSegs() == 0 ? 1 : p.gsoSegs(), p.gsoSize(), seq, payload,
                b.getUnsignedByte(t + TcpSegment.FLAGS), p.length());
    }

    /** Sends TCPv6 frames (next header TCP unless given) at once into a GRO receiver; returns what it delivered. */
    static List<Got> train6(int nextHeader, Seg... segs) {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "eth0", null, b, "eth0", null);
            pair[1].setGro(true);
            List<Got> got = new ArrayList<>();
            pair[1].setRxHandler((dev, p) -> {
                got.add((p.buf().getUnsignedByte(p.start() + 14) >>> 4) == 6 && nextHeader == 6 ? check6(p)
                        : new Got(p.gsoSegs() == 0 ? 1 : p.gsoSegs(), p.gsoSize(), -1, -1, -1, p.length()));
                p.release();
                return true;
            });
            for (Seg g : segs) {
                pair[0].transmit(frame6(g, pair[1].mac(), nextHeader));
            }
            net.settle();
            return got;
        }
    }

    /** The IPv6 header is 20 bytes longer than IPv4's: full-sized segments carry 20 bytes less in a 1500 MTU. */
    static final int MSS6 = MSS - 20;

    static Seg[] train6Segs(int n) {
        Seg[] t = train(n);
        for (int i = 0; i < n; i++) {
            t[i].id = 0x12345; // one flow label for the flow
            t[i].len = MSS6;
            t[i].seq = (long) i * MSS6;
        }
        return t;
    }

    @Test
    void tcpv6SegmentsOfOneFlowAreMergedIntoOneTcpv6GsoPacket() {
        List<Got> got = train6(6, train6Segs(4));
        assertEquals(1, got.size(), got.toString());
        Got g = got.get(0);
        assertEquals(4, g.segs());
        assertEquals(MSS6, g.gsoSize());
        assertEquals(0, g.seq());
        assertEquals(4 * MSS6, g.payload());
        assertEquals(14 + 40 + 32 + 4 * MSS6, g.length());
    }

    @Test
    void tcpv6HopLimitOrTrafficClassDifferenceIsNotMergedAndAnotherFlowLabelIsAnotherFlow() {
        Seg[] hop = train6Segs(3);
        hop[2].ttl = 63;
        assertEquals(List.of(2, 1), segs(train6(6, hop)), "hop limit differs: flushed, then held alone");
        Seg[] tclass = train6Segs(3);
        tclass[1].tos = 0x10;
        tclass[2].tos = 0x10;
        assertEquals(List.of(1, 2), segs(train6(6, tclass)), "traffic class changes: flushed, the rest merged");
        // Two flow labels interleaved are two flows, each merged in its own packet.
        Seg[] labels = train6Segs(4);
        labels[1].id = 7;
        labels[1].seq = 0;
        labels[3].id = 7;
        labels[3].seq = MSS6;
        labels[2].seq = MSS6;
        List<Got> got = train6(6, labels);
        assertEquals(List.of(2, 2), segs(got), got.toString());
    }

    @Test
    void tcpv6WithAnExtensionHeaderOrABadChecksumIsNotGrod() {
        Seg[] t = train6Segs(3);
        assertEquals(List.of(1, 1, 1), segs(train6(60, t)), "destination options header: delivered one by one");
        Seg[] bad = train6Segs(3);
        bad[1].badChecksum = true;
        List<Got> got = new ArrayList<>();
        try (TestNet net = new TestNet()) {
            VethEnd[] pair = net.link(net.ns("a"), "eth0", null, net.ns("b"), "eth0", null);
            pair[1].setGro(true);
            pair[1].setRxHandler((dev, p) -> {
                got.add(new Got(p.gsoSegs() == 0 ? 1 : p.gsoSegs(), p.gsoSize(), 0, 0, 0, p.length()));
                p.release();
                return true;
            });
            for (Seg g : bad) {
                pair[0].transmit(frame6(g, pair[1].mac(), 6));
            }
            net.settle();
        }
        // The bad one goes up alone (TCP drops it); the flow held around it is not merged across the hole.
        assertEquals(3, got.size(), got.toString());
    }
}
