package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import org.junit.jupiter.api.Test;

/** IPv6 reassembly's limits: overlaps, the timeout and its error, the memory ceiling. */
class Ip6DefragTest {
    private static final long DUT_MAC = 0x02_00_00_00_00_01L;
    private static final long PEER_MAC = 0x02_00_00_00_00_0aL;
    private static final Ipv6Addr ADDR = Ipv6Addr.parse("2001:db8:1::1");
    private static final Ipv6Addr PEER = Ipv6Addr.parse("2001:db8:1::2");
    private static final long SEC = 1_000_000_000L;

    private record Dut(TestNet net, NetStack s, TestNet.Wire w) {}

    private static Dut dut(TestNet net) {
        NetStack s = net.ns("dut");
        s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        s.knobs().set("net.ipv6.conf.default.accept_dad", "0");
        // A host sends router solicitations at link up; none among the frames looked at here.
        s.knobs().set("net.ipv6.conf.default.router_solicitations", "0");
        s.knobs().set("net.ipv6.ip6frag_time", "2");
        TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
        s.ipv6().addAddress(w.dutEnd, ADDR, 64, false);
        s.ipv6().neigh().addPermanent(w.dutEnd, PEER.hi(), PEER.lo(), PEER_MAC);
        return new Dut(net, s, w);
    }

    private static byte[] frag(byte[] msg, int off, int len, boolean more, int id) {
        return Ip6Frames.fragment(DUT_MAC, PEER_MAC, PEER, ADDR, Ipv6Packet.NEXTHDR_ICMPV6, msg, off, len, more, id);
    }

    private static long count(TestNet.Wire w, int type) {
        return w.frames().stream().filter(f -> Ip6Frames.icmpType(f) == type).count();
    }

    @Test
    void fragmentsInAnyOrderMakeOneDatagram() {
        try (TestNet net = new TestNet()) {
            Dut d = dut(net);
            byte[] msg = Ip6Frames.echoMessage(PEER, ADDR, 1, 1, 40);
            d.w.send(frag(msg, 24, 24, false, 5));
            d.w.send(frag(msg, 0, 24, true, 5));
            net.settle();
            assertEquals(1, count(d.w, Icmpv6Packet.ECHO_REPLY));
            assertEquals(1, d.s.mib().get(Mib.Ip6ReasmOKs));
            byte[] reply = d.w.frames().getFirst();
            assertEquals(14 + 40 + 48, reply.length, "the reply carries all 40 data bytes, unfragmented");
        }
    }

    @Test
    void anOverlapDiscardsTheWholeDatagramButADuplicateIsIgnored() {
        try (TestNet net = new TestNet()) {
            Dut d = dut(net);
            byte[] msg = Ip6Frames.echoMessage(PEER, ADDR, 1, 1, 40);
            d.w.send(frag(msg, 0, 24, true, 6));
            d.w.send(frag(msg, 0, 24, true, 6));
            d.w.send(frag(msg, 24, 24, false, 6));
            net.settle();
            assertEquals(1, count(d.w, Icmpv6Packet.ECHO_REPLY), "an exact duplicate does not spoil the datagram");

            d.w.clear();
            d.w.send(frag(msg, 0, 24, true, 7));
            d.w.send(frag(msg, 16, 32, false, 7));
            d.w.send(frag(msg, 24, 24, false, 7));
            net.run(3 * SEC);
            assertEquals(0, count(d.w, Icmpv6Packet.ECHO_REPLY), "the overlap poisoned the datagram (RFC 5722)");
            assertEquals(0, count(d.w, Icmpv6Packet.TIME_EXCEED), "its queue went at once: no timeout error");
            assertTrue(d.s.drops().get(DropReason.IP6_REASM_OVERLAP) >= 2, "the overlapping fragment and the queue");
        }
    }

    @Test
    void anIncompleteDatagramTimesOutWithAnErrorOnlyWhenItsFirstFragmentCame() {
        try (TestNet net = new TestNet()) {
            Dut d = dut(net);
            byte[] msg = Ip6Frames.echoMessage(PEER, ADDR, 1, 1, 40);
            d.w.send(frag(msg, 0, 24, true, 8));
            d.w.send(frag(msg, 24, 24, false, 9));
            net.run(SEC);
            assertEquals(0, count(d.w, Icmpv6Packet.TIME_EXCEED));
            net.run(SEC + 1);
            assertEquals(1, count(d.w, Icmpv6Packet.TIME_EXCEED), "ip6frag_time 2 s: one error, for the first");
            // The first frame on the wire is the MLD report of link up; the error is the next.
            byte[] err = d.w.frames().stream().filter(f -> Ip6Frames.icmpType(f) == Icmpv6Packet.TIME_EXCEED)
                    .findFirst().orElseThrow();
            assertEquals(Icmpv6Packet.CODE_EXC_FRAGTIME, err[55] & 0xff);
            assertEquals(2, d.s.mib().get(Mib.Ip6ReasmTimeout));
        }
    }

    @Test
    void aboveTheMemoryCeilingNoFragmentIsTaken() {
        try (TestNet net = new TestNet()) {
            Dut d = dut(net);
            d.s.knobs().set("net.ipv6.ip6frag_high_thresh", "600");
            byte[] msg = Ip6Frames.echoMessage(PEER, ADDR, 1, 1, 40);
            d.w.send(frag(msg, 0, 24, true, 10));
            d.w.send(frag(msg, 0, 24, true, 11));
            d.w.send(frag(msg, 24, 24, false, 11));
            d.w.send(frag(msg, 24, 24, false, 10));
            net.settle();
            assertEquals(0, count(d.w, Icmpv6Packet.ECHO_REPLY), "held memory above 600 bytes: later fragments refused");
            assertEquals(2, d.s.drops().get(DropReason.IP6_REASM_LIMIT));
            net.run(3 * SEC);
            d.w.clear();
            d.w.send(frag(msg, 0, 24, true, 12));
            d.w.send(frag(msg, 24, 24, false, 12));
            net.settle();
            assertEquals(1, count(d.w, Icmpv6Packet.ECHO_REPLY), "the timeouts freed the memory");
        }
    }
}
