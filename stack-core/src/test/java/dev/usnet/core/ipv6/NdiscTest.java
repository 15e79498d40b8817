package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.neigh.NudState;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Duplicate address detection and neighbour unreachability detection over the ND table. */
class NdiscTest {
    private static final long DUT_MAC = 0x02_00_00_00_00_01L;
    private static final long PEER_MAC = 0x02_00_00_00_00_0aL;
    private static final Ipv6Addr ADDR = Ipv6Addr.parse("2001:db8:1::1");
    private static final Ipv6Addr PEER = Ipv6Addr.parse("2001:db8:1::2");
    private static final long SEC = 1_000_000_000L;

    private static NetStack ipv6Stack(TestNet net, boolean dad) {
        NetStack s = net.ns("dut");
        s.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        s.knobs().set("net.ipv6.conf.default.accept_dad", dad ? "1" : "0");
        return s;
    }

    /** The solicitations on the wire whose target is {@code target}. */
    private static List<byte[]> solicitationsFor(TestNet.Wire w, Ipv6Addr target) {
        return w.frames().stream()
                .filter(f -> Ip6Frames.icmpType(f) == Icmpv6Packet.NEIGHBOUR_SOLICITATION)
                .filter(f -> Ip6Frames.addr(f, 62).equals(target)).toList();
    }

    @Test
    void duplicateDetectionSendsOneSolicitationFromTheUnspecifiedAddressThenPrefers() {
        try (TestNet net = new TestNet()) {
            NetStack s = ipv6Stack(net, true);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            Inet6Ifaddr ifa = s.ipv6().addAddress(w.dutEnd, ADDR, 64, false);
            assertEquals(Inet6Ifaddr.DadState.TENTATIVE, ifa.state());
            assertFalse(s.ipv6().addrconf().isLocal(ADDR.hi(), ADDR.lo()), "tentative: not yet ours to use");
            net.run(SEC);
            List<byte[]> ns = solicitationsFor(w, ADDR);
            assertEquals(1, ns.size(), "dad_transmits 1: one probe within router_solicitation_delay");
            byte[] f = ns.getFirst();
            assertEquals(Ipv6Addr.ANY, Ip6Frames.addr(f, 22), "from ::");
            assertEquals(Ipv6Addr.parse("ff02::1:ff00:1"), Ip6Frames.addr(f, 38), "to the solicited-node group");
            assertEquals(0x3333_ff00_0001L, ((f[0] & 0xffL) << 40) | ((f[1] & 0xffL) << 32) | ((f[2] & 0xffL) << 24)
                    | ((f[3] & 0xffL) << 16) | ((f[4] & 0xffL) << 8) | (f[5] & 0xffL));
            assertEquals(255, f[21] & 0xff, "hop limit 255");
            assertEquals(14 + 40 + 24 + 8, f.length, "no source link-layer address option from ::, a nonce option");
            assertEquals(14, f[14 + 40 + 24] & 0xff, "the nonce option (enhanced DAD)");
            assertEquals(Inet6Ifaddr.DadState.TENTATIVE, ifa.state(), "still waiting out retrans_time");
            net.run(SEC + 1);
            assertEquals(Inet6Ifaddr.DadState.PREFERRED, ifa.state());
            assertTrue(s.ipv6().addrconf().isLocal(ADDR.hi(), ADDR.lo()));
        }
    }

    @Test
    void anAdvertisementForATentativeAddressFailsIt() {
        try (TestNet net = new TestNet()) {
            NetStack s = ipv6Stack(net, true);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            Inet6Ifaddr ifa = s.ipv6().addAddress(w.dutEnd, ADDR, 64, false);
            w.send(Ip6Frames.na(0x3333_0000_0001L, PEER_MAC, PEER, Ipv6Addr.ALL_NODES, ADDR, 0x2000_0000, PEER_MAC));
            net.settle();
            assertEquals(Inet6Ifaddr.DadState.FAILED, ifa.state());
            net.run(3 * SEC);
            assertEquals(Inet6Ifaddr.DadState.FAILED, ifa.state(), "detection stopped: it never becomes preferred");
            assertTrue(solicitationsFor(w, ADDR).isEmpty(), "no probe after the failure");
        }
    }

    @Test
    void anotherNodesDuplicateDetectionForATentativeAddressFailsIt() {
        try (TestNet net = new TestNet()) {
            NetStack s = ipv6Stack(net, true);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            Inet6Ifaddr ifa = s.ipv6().addAddress(w.dutEnd, ADDR, 64, false);
            w.send(Ip6Frames.ns(0x3333_ff00_0001L, PEER_MAC, Ipv6Addr.ANY, Ipv6Addr.parse("ff02::1:ff00:1"), ADDR, 0));
            net.settle();
            assertEquals(Inet6Ifaddr.DadState.FAILED, ifa.state());
        }
    }

    @Test
    void aPreferredAddressIsDefendedAgainstDuplicateDetection() {
        try (TestNet net = new TestNet()) {
            NetStack s = ipv6Stack(net, false);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            Inet6Ifaddr ifa = s.ipv6().addAddress(w.dutEnd, ADDR, 64, false);
            w.send(Ip6Frames.ns(0x3333_ff00_0001L, PEER_MAC, Ipv6Addr.ANY, Ipv6Addr.parse("ff02::1:ff00:1"), ADDR, 0));
            net.settle();
            assertEquals(Inet6Ifaddr.DadState.PREFERRED, ifa.state());
            List<byte[]> na = w.frames().stream()
                    .filter(f -> Ip6Frames.icmpType(f) == Icmpv6Packet.NEIGHBOUR_ADVERTISEMENT).toList();
            assertEquals(1, na.size());
            assertEquals(Ipv6Addr.ALL_NODES, Ip6Frames.addr(na.getFirst(), 38), "to all nodes");
            assertEquals(0x20, na.getFirst()[58] & 0xff, "override, not solicited, not a router");
        }
    }

    @Test
    void resolutionSolicitsAnswersAndFailsAfterMcastSolicitProbes() {
        try (TestNet net = new TestNet()) {
            NetStack s = ipv6Stack(net, false);
            TestNet.Wire w = net.wire(s, "eth0", DUT_MAC);
            s.ipv6().addAddress(w.dutEnd, ADDR, 64, false);
            // An echo request from PEER, whose MAC the node does not know: the reply waits for resolution.
            byte[] echo = Ip6Frames.echoMessage(PEER, ADDR, 7, 1, 8);
            w.send(Ip6Frames.icmp(DUT_MAC, PEER_MAC, PEER, ADDR, 64, echo));
            net.settle();
            List<byte[]> ns = solicitationsFor(w, PEER);
            assertEquals(1, ns.size());
            assertEquals(ADDR, Ip6Frames.addr(ns.getFirst(), 22), "from the waiting packet's source, ours");
            assertEquals(14 + 40 + 32, ns.getFirst().length, "with our link-layer address");
            Neighbour n = s.ipv6().neigh().lookup(w.dutEnd, PEER.hi(), PEER.lo());
            assertNotNull(n);
            assertEquals(NudState.INCOMPLETE, n.state());
            w.clear();
            w.send(Ip6Frames.na(DUT_MAC, PEER_MAC, PEER, ADDR, PEER, 0x6000_0000, PEER_MAC));
            net.settle();
            assertEquals(NudState.REACHABLE, n.state(), "a solicited advertisement confirms reachability");
            assertEquals(1, w.frames().stream().filter(f -> Ip6Frames.icmpType(f) == Icmpv6Packet.ECHO_REPLY).count(),
                    "the queued echo reply left once resolved");

            Ipv6Addr silent = Ipv6Addr.parse("2001:db8:1::3");
            w.clear();
            w.send(Ip6Frames.icmp(DUT_MAC, PEER_MAC, silent, ADDR, 64, Ip6Frames.echoMessage(silent, ADDR, 7, 2, 8)));
            net.run(5 * SEC);
            assertEquals(3, solicitationsFor(w, silent).size(), "mcast_solicit 3, retrans_time 1 s apart");
            Neighbour m = s.ipv6().neigh().lookup(w.dutEnd, silent.hi(), silent.lo());
            assertNotNull(m);
            assertEquals(NudState.FAILED, m.state());
            assertEquals(0, w.frames().stream().filter(f -> Ip6Frames.icmpType(f) == Icmpv6Packet.ECHO_REPLY).count(),
                    "the reply waiting for the silent neighbour never left");
            assertEquals(1, s.drops().get(DropReason.NEIGH_FAILED), "it was dropped when resolution failed");
        }
    }
}
