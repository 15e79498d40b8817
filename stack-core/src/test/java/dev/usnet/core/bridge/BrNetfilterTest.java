package dev.usnet.core.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.netfilter.NfConntrack;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHookOps;
import dev.usnet.core.netfilter.NfHooks;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * br_netfilter: bridged IPv4 through the namespace's IPv4 hooks with the bridge as the router interface, the
 * prerouting destination change that re-addresses the frame, and what is left alone.
 */
class BrNetfilterTest {
    private static final long A = 0x0200_0000_0a01L;
    private static final long B = 0x0200_0000_0b02L;
    private static final long C = 0x0200_0000_0c03L;
    private static final long BR = 0x0200_0000_00feL;
    private static final long BCAST = 0xffff_ffff_ffffL;
    private static final String IP_A = "198.18.0.10";
    private static final String IP_B = "198.18.0.11";
    private static final String IP_C = "198.18.0.12";
    private static final String IP_BR = "198.18.0.1";

    /** A bridge with three veth ports; A is behind p1, B behind p2, C behind p3 (the bridge learns them). */
    private static final class Rig implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack ns = net.ns("br");
        final Bridge br = new Bridge("br0", BR);
        final TestNet.Wire p1;
        final TestNet.Wire p2;
        final TestNet.Wire p3;
        final NfHooks hooks = ns.ipv4().netfilter().hooks();
        final List<String> seen = new ArrayList<>();

        Rig(boolean callIptables) {
            ns.register(br);
            p1 = net.wire(ns, "p1", 0x0200_0000_0101L);
            p2 = net.wire(ns, "p2", 0x0200_0000_0102L);
            p3 = net.wire(ns, "p3", 0x0200_0000_0103L);
            br.addPort(p1.dutEnd);
            br.addPort(p2.dutEnd);
            br.addPort(p3.dutEnd);
            br.setUp(true);
            TestNet.addr(ns, br, IP_BR + "/24");
            ns.knobs().set("net.ipv4.ip_forward", "1");
            // The bridge's stack answers A without asking ARP first (an ARP broadcast would reach every port).
            ns.neigh().addPermanent(br, Ipv4Addr.parse(IP_A), A);
            ns.knobs().set("net.bridge.bridge-nf-call-iptables", callIptables ? "1" : "0");
            // Teach the bridge where B and C are with frames no IPv4 hook sees.
            p2.send(Frames.raw(B, BCAST, 0x88b5, 60));
            p3.send(Frames.raw(C, BCAST, 0x88b5, 60));
            net.settle();
            clear();
        }

        /** A function at every IPv4 hook recording the hook, its devices and the packet's physindev. */
        void recordAll() {
            for (NfHook h : NfHook.values()) {
                hooks.register(h, NfIpPriority.FILTER, (p, st) -> {
                    seen.add(st.hook().nftName() + " in=" + name(st.in()) + " out=" + name(st.out())
                            + " phys=" + phys(p));
                    return NfVerdict.ACCEPT;
                });
            }
        }

        String phys(Packet p) {
            int i = p.nfBridgePhysIn();
            return i == 0 ? "-" : ns.device(i).name();
        }

        static String name(Device d) {
            return d == null ? "-" : d.name();
        }

        void clear() {
            p1.clear();
            p2.clear();
            p3.clear();
            seen.clear();
        }

        int[] counts() {
            return new int[] {p1.received.size(), p2.received.size(), p3.received.size()};
        }

        @Override
        public void close() {
            net.close();
        }
    }

    /** A connection-tracking entry as destination NAT leaves it: the DST_NAT status bit set. */
    private record DnatEntry() implements NfConntrack {
        @Override
        public int status() {
            return IpConntrackStatus.DST_NAT | IpConntrackStatus.DST_NAT_DONE;
        }

        @Override
        public int mark() {
            return 0;
        }

        @Override
        public void setMark(int mark) {
            throw new UnsupportedOperationException();
        }

        @Override
        public int protocol() {
            return 17;
        }
    }

    /**
     * What destination NAT at prerouting does to a UDP packet: the new destination address, the IP checksum
     * recomputed, the UDP checksum cleared (0: none, valid over IPv4), the entry marked DST_NAT.
     */
    private static NfHookOps dnatTo(String to) {
        int addr = Ipv4Addr.parse(to);
        return (p, st) -> {
            int l3 = p.network();
            p.buf().setInt(l3 + 16, addr);
            p.buf().setShort(l3 + 10, 0);
            p.buf().setShort(l3 + 10, Checksum.compute(p.buf(), l3, 20));
            p.buf().setShort(l3 + 20 + 6, 0);
            p.setNfct(new DnatEntry(), IpConntrackInfo.NEW);
            return NfVerdict.ACCEPT;
        };
    }

    private static long dstMac(byte[] f) {
        return ((long) Frames.u16(f, 0) << 32) | (Frames.u32(f, 2) & 0xffff_ffffL);
    }

    private static long srcMac(byte[] f) {
        return ((long) Frames.u16(f, 6) << 32) | (Frames.u32(f, 8) & 0xffff_ffffL);
    }

    @Test
    void aBridgedIpv4FramePassesPreroutingForwardPostroutingWithTheBridgeAsItsDevice() {
        try (Rig t = new Rig(true)) {
            t.recordAll();
            t.p1.send(Frames.udp(A, B, IP_A, IP_B, 64, 20, 1, false));
            t.net.settle();
            assertEquals(List.of("prerouting in=br0 out=- phys=p1", "forward in=br0 out=br0 phys=p1",
                    "postrouting in=- out=br0 phys=p1"), t.seen);
            assertEquals(List.of(0, 1, 0), List.of(t.counts()[0], t.counts()[1], t.counts()[2]));
            byte[] f = t.p2.received.get(0).data();
            assertEquals(64, f[14 + 8] & 0xff, "bridged, not routed: the TTL is unchanged");
            assertEquals(A, srcMac(f));
        }
    }

    @Test
    void aFloodedFramePassesForwardAndPostroutingOncePerCopy() {
        try (Rig t = new Rig(true)) {
            t.recordAll();
            long unknown = 0x0200_0000_0d04L;
            t.p1.send(Frames.udp(A, unknown, IP_A, "198.18.0.13", 64, 20, 1, false));
            t.net.settle();
            assertEquals(List.of("prerouting in=br0 out=- phys=p1", "forward in=br0 out=br0 phys=p1",
                    "postrouting in=- out=br0 phys=p1", "forward in=br0 out=br0 phys=p1",
                    "postrouting in=- out=br0 phys=p1"), t.seen);
            assertEquals(1, t.p2.received.size());
            assertEquals(1, t.p3.received.size());
        }
    }

    @Test
    void theNamespaceBehindAPortTracksTheFrameAfreshWithItsOwnPrerouting() {
        try (Rig t = new Rig(true)) {
            t.recordAll();
            // H is a namespace behind port p4: the frame crosses the veth, which scrubs what br_netfilter recorded,
            // so H's own prerouting sees it (it is not a frame H's bridge already showed its hooks).
            NetStack h = t.net.ns("h");
            var pair = t.net.link(t.ns, "p4", null, h, "eth0", "198.18.0.20/24");
            t.br.addPort(pair[0]);
            List<String> inH = new ArrayList<>();
            h.ipv4().netfilter().hooks().register(NfHook.PRE_ROUTING, NfIpPriority.FILTER, (p, st) -> {
                inH.add(st.in().name() + " phys=" + p.nfBridgePhysIn());
                return NfVerdict.ACCEPT;
            });
            t.p1.send(Frames.udp(A, pair[1].mac(), IP_A, "198.18.0.20", 64, 20, 1, false));
            t.net.settle();
            assertEquals(List.of("eth0 phys=0"), inH);
            assertEquals(List.of("prerouting in=br0 out=- phys=p1", "forward in=br0 out=br0 phys=p1",
                    "postrouting in=- out=br0 phys=p1"), t.seen.subList(0, 3));
        }
    }

    @Test
    void aDropAtForwardStopsTheFrameAndIsCounted() {
        try (Rig t = new Rig(true)) {
            t.hooks.register(NfHook.FORWARD, NfIpPriority.FILTER, (p, st) -> NfVerdict.DROP);
            t.p1.send(Frames.udp(A, B, IP_A, IP_B, 64, 20, 1, false));
            t.net.settle();
            assertEquals(0, t.p2.received.size());
            assertEquals(0, t.p3.received.size());
            assertEquals(1, t.ns.drops().get(DropReason.NETFILTER_DROP));
        }
    }

    @Test
    void aDropAtPreroutingHappensBeforeTheSourceIsLearned() {
        try (Rig t = new Rig(true)) {
            t.hooks.register(NfHook.PRE_ROUTING, NfIpPriority.FILTER, (p, st) -> NfVerdict.DROP);
            t.p1.send(Frames.udp(A, B, IP_A, IP_B, 64, 20, 1, false));
            t.net.settle();
            assertEquals(0, t.p2.received.size());
            assertEquals(1, t.ns.drops().get(DropReason.NETFILTER_DROP));
            assertEquals(null, t.br.fdb().find(A, t.ns.now(), t.br.ageingNanos()),
                    "a frame the hooks dropped teaches the bridge nothing");
        }
    }

    @Test
    void withTheKnobOffNoHookSeesBridgedTraffic() {
        try (Rig t = new Rig(false)) {
            t.recordAll();
            t.p1.send(Frames.udp(A, B, IP_A, IP_B, 64, 20, 1, false));
            t.net.settle();
            assertEquals(List.of(), t.seen);
            assertEquals(1, t.p2.received.size());
        }
    }

    @Test
    void arpAndIpv6FramesAreNotShownToTheIpv4Hooks() {
        try (Rig t = new Rig(true)) {
            t.ns.knobs().set("net.bridge.bridge-nf-call-ip6tables", "1");
            t.recordAll();
            t.p1.send(Frames.arp(A, BCAST, 1, A, IP_A, 0, IP_B));
            t.p1.send(Frames.udp6(A, B, Ipv6Addr.parse("2001:db8::a"), Ipv6Addr.parse("2001:db8::b"), 1000, 2000,
                    new byte[8]));
            t.net.settle();
            assertEquals(List.of(), t.seen);
            assertEquals(2, t.p2.received.size(), "the ARP broadcast and the IPv6 frame are bridged to B");
        }
    }

    @Test
    void aFrameUpToTheBridgesOwnStackPassesPreroutingOnceThenInput() {
        try (Rig t = new Rig(true)) {
            t.recordAll();
            // To a closed UDP port of the bridge's address: up to its IPv4 (prerouting once, input), and the port
            // unreachable it answers goes out the ordinary way (output, postrouting), not through br_netfilter.
            t.p1.send(Frames.udp(A, BR, IP_A, IP_BR, 64, 20, 1, false));
            t.net.settle();
            assertEquals(List.of("prerouting in=br0 out=- phys=p1", "input in=br0 out=- phys=p1",
                    "output in=- out=br0 phys=-", "postrouting in=- out=br0 phys=-"), t.seen);
            assertEquals(1, t.p1.received.size());
            assertEquals(1, t.p1.received.get(0).data()[14 + 9], "the ICMP error reaches A");
            assertEquals(List.of(0, 0), List.of(t.p2.received.size(), t.p3.received.size()));
        }
    }

    @Test
    void aBroadcastIsShownToPreroutingOnceAndItsLocalCopyGoesToInput() {
        try (Rig t = new Rig(true)) {
            t.recordAll();
            t.p1.send(Frames.udp(A, BCAST, IP_A, "198.18.0.255", 64, 20, 1, false));
            t.net.settle();
            assertEquals(1, t.seen.stream().filter(s -> s.startsWith("prerouting")).count(), t.seen.toString());
            assertEquals(2, t.seen.stream().filter(s -> s.startsWith("forward in=br0 out=br0")).count());
            assertEquals(2, t.seen.stream().filter(s -> s.startsWith("postrouting in=- out=br0 phys=p1")).count());
            assertEquals(1, t.seen.stream().filter(s -> s.startsWith("input in=br0")).count(), t.seen.toString());
            assertEquals(1, t.p2.received.size());
            assertEquals(1, t.p3.received.size());
        }
    }

    @Test
    void dnatToAHostOnTheBridgeBridgesTheFrameToItsPort() {
        try (Rig t = new Rig(true)) {
            t.ns.neigh().addPermanent(t.br, Ipv4Addr.parse(IP_B), B);
            t.hooks.register(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, dnatTo(IP_B));
            t.recordAll();
            // Addressed to C at both layers; destination NAT sends it to B instead.
            t.p1.send(Frames.udp(A, C, IP_A, IP_C, 64, 20, 1, false));
            t.net.settle();
            assertEquals(List.of(0, 1, 0), List.of(t.counts()[0], t.counts()[1], t.counts()[2]));
            byte[] f = t.p2.received.get(0).data();
            assertEquals(B, dstMac(f), "re-addressed to B's MAC");
            assertEquals(A, srcMac(f), "bridged: the source MAC stays A's");
            assertEquals(Ipv4Addr.parse(IP_B), Frames.u32(f, 14 + 16));
            assertEquals(64, f[14 + 8] & 0xff, "bridged, not routed: the TTL is unchanged");
            assertEquals(List.of("prerouting in=br0 out=- phys=p1", "forward in=br0 out=br0 phys=p1",
                    "postrouting in=- out=br0 phys=p1"), t.seen);
        }
    }

    @Test
    void dnatOfAFrameToTheBridgesAddressToAHostOnTheBridgeIsBridgedNotRouted() {
        try (Rig t = new Rig(true)) {
            // The published-port case: A talks to the bridge's address, which NAT maps to B behind the bridge.
            t.ns.neigh().addPermanent(t.br, Ipv4Addr.parse(IP_B), B);
            t.hooks.register(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, dnatTo(IP_B));
            t.recordAll();
            t.p1.send(Frames.udp(A, BR, IP_A, IP_BR, 64, 20, 1, false));
            t.net.settle();
            assertEquals(1, t.p2.received.size());
            byte[] f = t.p2.received.get(0).data();
            assertEquals(B, dstMac(f));
            assertEquals(A, srcMac(f));
            assertEquals(64, f[14 + 8] & 0xff);
            assertEquals(List.of("prerouting in=br0 out=- phys=p1", "forward in=br0 out=br0 phys=p1",
                    "postrouting in=- out=br0 phys=p1"), t.seen);
        }
    }

    @Test
    void dnatToAHostWhoseAddressIsNotKnownYetWaitsForArpThenIsBridged() {
        try (Rig t = new Rig(true)) {
            t.hooks.register(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, dnatTo(IP_B));
            t.recordAll();
            t.p1.send(Frames.udp(A, C, IP_A, IP_C, 64, 20, 1, false));
            t.net.settle();
            // Not bridged to C: the bridge's stack asks for B by ARP (to every port) and holds the frame.
            assertEquals(List.of(1, 1, 1), List.of(t.counts()[0], t.counts()[1], t.counts()[2]));
            assertEquals(0x0806, Frames.u16(t.p2.received.get(0).data(), 12));
            assertEquals(List.of("prerouting in=br0 out=- phys=p1"), t.seen);
            t.clear();
            t.p2.send(Frames.arp(B, BR, 2, B, IP_B, BR, IP_BR));
            t.net.settle();
            assertEquals(List.of(0, 1, 0), List.of(t.counts()[0], t.counts()[1], t.counts()[2]));
            byte[] f = t.p2.received.get(0).data();
            assertEquals(0x0800, Frames.u16(f, 12));
            assertEquals(Ipv4Addr.parse(IP_B), Frames.u32(f, 14 + 16));
            assertEquals(B, dstMac(f));
            assertEquals(A, srcMac(f), "bridged once B answered: the source MAC is A's again");
            assertEquals(64, f[14 + 8] & 0xff, "bridged, not routed: the TTL is unchanged");
            assertEquals(List.of("forward in=br0 out=br0 phys=p1", "postrouting in=- out=br0 phys=p1"), t.seen);
        }
    }

    @Test
    void aBridgedDnatFrameWhosePortWentAwayIsDropped() {
        try (Rig t = new Rig(true)) {
            t.hooks.register(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, dnatTo(IP_B));
            t.p1.send(Frames.udp(A, C, IP_A, IP_C, 64, 20, 1, false));
            t.net.settle();
            t.br.removePort(t.p1.dutEnd);
            t.clear();
            t.p2.send(Frames.arp(B, BR, 2, B, IP_B, BR, IP_BR));
            t.net.settle();
            assertEquals(0, t.p2.received.size());
            assertEquals(1, t.ns.drops().get(DropReason.BRIDGE_NO_PORT));
        }
    }

    @Test
    void dnatToTheBridgesOwnAddressSendsTheFrameUpToItsIpv4() {
        try (Rig t = new Rig(true)) {
            t.hooks.register(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, dnatTo(IP_BR));
            t.recordAll();
            t.p1.send(Frames.udp(A, C, IP_A, IP_C, 64, 20, 1, false));
            t.net.settle();
            assertEquals(0, t.p3.received.size(), "not bridged to C");
            assertEquals(0, t.p2.received.size());
            assertEquals("prerouting in=br0 out=- phys=p1", t.seen.get(0));
            assertEquals("input in=br0 out=- phys=p1", t.seen.get(1), "delivered locally, prerouting not repeated");
            assertEquals(1, t.seen.stream().filter(s -> s.startsWith("prerouting")).count());
            assertEquals(1, t.ns.drops().get(DropReason.UDP_NO_SOCKET));
            assertEquals(1, t.p1.received.size());
            assertEquals(1, t.p1.received.get(0).data()[14 + 9], "the port unreachable goes back to A");
        }
    }

    @Test
    void aNewDestinationWithoutARouteGoesUpAndIpv4RefusesIt() {
        try (Rig t = new Rig(true)) {
            t.hooks.register(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, dnatTo("198.19.9.9"));
            t.p1.send(Frames.udp(A, C, IP_A, IP_C, 64, 20, 1, false));
            t.net.settle();
            assertEquals(List.of(1, 0, 0), List.of(t.counts()[0], t.counts()[1], t.counts()[2]));
            byte[] f = t.p1.received.get(0).data();
            assertEquals(List.of(1, 3, 0), List.of((int) f[14 + 9], (int) f[34], (int) f[35]),
                    "ICMP destination unreachable, network unreachable, to A");
            assertEquals(1, t.ns.drops().get(DropReason.IP_NOROUTE));
        }
    }

    @Test
    void withForwardingOffANewDestinationBehindTheBridgeIsNotBridged() {
        try (Rig t = new Rig(true)) {
            t.ns.knobs().set("net.ipv4.ip_forward", "0");
            t.ns.neigh().addPermanent(t.br, Ipv4Addr.parse(IP_B), B);
            t.hooks.register(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, dnatTo(IP_B));
            t.p1.send(Frames.udp(A, C, IP_A, IP_C, 64, 20, 1, false));
            t.net.settle();
            assertEquals(List.of(0, 0, 0), List.of(t.counts()[0], t.counts()[1], t.counts()[2]));
            assertEquals(1, t.ns.drops().get(DropReason.IP_NOT_FORWARDING));
        }
    }

    @Test
    void aFloodedCopyRewrittenByItsForwardHookLeavesTheOtherCopiesAlone() {
        try (Rig t = new Rig(true)) {
            // A FORWARD function that edits the TTL of the copy going out (each copy passes on its own).
            int[] n = {0};
            t.hooks.register(NfHook.FORWARD, NfIpPriority.MANGLE, (p, st) -> {
                if (n[0]++ == 0) {
                    if (p.isShared()) {
                        p.copyAll(null);
                    }
                    p.buf().setByte(p.network() + 8, 7);
                }
                return NfVerdict.ACCEPT;
            });
            t.p1.send(Frames.udp(A, MacAddr.parse("02:00:00:00:0d:04"), IP_A, "198.18.0.13", 64, 20, 1, false));
            t.net.settle();
            int ttl2 = t.p2.received.get(0).data()[14 + 8] & 0xff;
            int ttl3 = t.p3.received.get(0).data()[14 + 8] & 0xff;
            assertEquals(List.of(7, 64), List.of(ttl2, ttl3));
        }
    }
}
