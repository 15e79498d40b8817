package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Ipv4Addr;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Per-packet IPv4 forwarding through a router namespace (ip_forward=1): {@code Device.receive} on the
 * ingress port → eth demux → {@code IpInput.rcv} (header check, route lookup) → {@code IpForward.forward}
 * (COW per {@code usnet.forward.cow}, TTL decrement) → neighbour output (static entry) →
 * {@code Device.transmit} → a sink driver that frees the packet. The refill writes 42 header bytes (Ethernet,
 * IPv4, UDP); the parameters, the measured operation and its checks are {@link RouterForwardBench}'s.
 */
@State(Scope.Thread)
public class Ipv4ForwardBench extends RouterForwardBench {
    static final int TTL = HOPS;

    @Override
    String routerName() {
        return "bench-router";
    }

    @Override
    void enableForwarding(NetStack router) {
        router.knobs().set("net.ipv4.ip_forward", "1");
    }

    @Override
    void addressesAndNeighbours(NetStack router, SinkDevice r1, SinkDevice r2) {
        router.devinet().add(r1, Ipv4Addr.parse("198.18.1.1"), 24);
        router.devinet().add(r2, Ipv4Addr.parse("198.18.2.1"), 24);
        router.neigh().addPermanent(r1, Ipv4Addr.parse("198.18.1.2"), MAC_H1);
        router.neigh().addPermanent(r2, Ipv4Addr.parse("198.18.2.2"), MAC_H2);
    }

    @Override
    Frames.Template headers(int ipLen) {
        return Frames.udpHeaders(MAC_R1, MAC_H1, Ipv4Addr.parse("198.18.1.2"), Ipv4Addr.parse("198.18.2.2"), TTL, ipLen,
                true);
    }

    @Override
    Mib forwardedCounter() {
        return Mib.IpForwDatagrams;
    }

    @Override
    int hopsOffset() {
        return 8;
    }

    @Override
    int hopsAtSink(SinkDevice sink) {
        check(sink.lastIpChecksumOk, "IPv4 header checksum invalid after forwarding");
        return sink.lastTtl;
    }
}
