package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Per-packet IPv6 forwarding through a router namespace ({@code net.ipv6.conf.all.forwarding=1}):
 * {@code Device.receive} on the ingress port → eth demux → {@code Ip6Input} (header check, extension-header walk,
 * {@code Fib6} lookup) → {@code Ip6Forward.forward} (scope checks, MTU, COW per {@code usnet.forward.cow}, hop limit
 * decrement) → the ND table's static entry → {@code Device.transmit} → a sink driver that frees the packet.
 *
 * <p>{@code ipLen} counts the 40-byte fixed header; the refill writes 62 header bytes (Ethernet, IPv6, UDP). The
 * hop-limit edit of a shared packet is the same copy-on-write question as IPv4's TTL edit. The parameters, the
 * measured operation and its checks are {@link RouterForwardBench}'s.
 */
@State(Scope.Thread)
public class Ipv6ForwardBench extends RouterForwardBench {
    static final Ipv6Addr H1 = Ipv6Addr.parse("2001:db8:1::2");
    static final Ipv6Addr H2 = Ipv6Addr.parse("2001:db8:2::2");

    @Override
    String routerName() {
        return "bench-router6";
    }

    @Override
    void enableForwarding(NetStack router) {
        router.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
        router.knobs().set("net.ipv6.conf.default.accept_dad", "0");
        router.knobs().set("net.ipv6.conf.all.forwarding", "1");
    }

    @Override
    void addressesAndNeighbours(NetStack router, SinkDevice r1, SinkDevice r2) {
        router.ipv6().addAddress(r1, Ipv6Addr.parse("2001:db8:1::1"), 64, true);
        router.ipv6().addAddress(r2, Ipv6Addr.parse("2001:db8:2::1"), 64, true);
        router.ipv6().neigh().addPermanent(r1, H1.hi(), H1.lo(), MAC_H1);
        router.ipv6().neigh().addPermanent(r2, H2.hi(), H2.lo(), MAC_H2);
    }

    @Override
    Frames.Template headers(int ipLen) {
        return Frames.udp6Headers(MAC_R1, MAC_H1, H1, H2, HOPS, ipLen);
    }

    @Override
    Mib forwardedCounter() {
        return Mib.Ip6OutForwDatagrams;
    }

    @Override
    int hopsOffset() {
        return Ipv6Packet.HOP_LIMIT;
    }

    @Override
    int hopsAtSink(SinkDevice sink) {
        check(sink.lastNextHeader == Ipv6Packet.NEXTHDR_UDP, "next header at the sink is " + sink.lastNextHeader);
        return sink.lastHopLimit;
    }
}
