package dev.usnet.perf.floods;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.ns.NetNamespace;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One flood's network: namespaces on one virtual-time scheduler, veth links with addresses, and an attacker end
 * that injects hand-built frames and swallows whatever comes back (a sink, so the attacker's own stack neither
 * processes nor counts the DUT's answers).
 */
final class FloodNet implements AutoCloseable {
    final VirtualScheduler vs = new VirtualScheduler();
    final NamespaceRegistry reg = new NamespaceRegistry(x -> vs, 15);
    private final List<NetNamespace> measured = new ArrayList<>();

    /**
     * A namespace whose drops count in the flood's result (every one but the attacker's). Its receive processing
     * takes modelled CPU time (usnet.cpu.model, docs/cpu-model.md), so flood frames delay the legitimate ones
     * queued behind them as they would on a real host.
     */
    NetStack ns(String name) {
        NetNamespace n = reg.create(name);
        n.stack().knobs().set("usnet.cpu.model", "1");
        measured.add(n);
        return n.stack();
    }

    /** A veth pair between {@code a} and {@code b}, both ends up; addresses "a.b.c.d/len" or null. */
    VethEnd[] link(NetStack a, String nameA, String addrA, NetStack b, String nameB, String addrB) {
        VethEnd[] p = reg.createVeth(reg.of(a), nameA, reg.of(b), nameB);
        addr(a, p[0], addrA);
        addr(b, p[1], addrB);
        p[0].setUp(true);
        p[1].setUp(true);
        return p;
    }

    /** The attacker: a veth whose far end is {@code devName} in {@code dut}; its own end only injects. */
    VethEnd attacker(NetStack dut, String devName, String dutAddr) {
        NetNamespace x = reg.create("attacker-" + devName);
        VethEnd[] p = reg.createVeth(x, "x0", reg.of(dut), devName);
        addr(dut, p[1], dutAddr);
        p[0].setRxHandler((dev, pkt) -> {
            pkt.release();
            return true;
        });
        p[0].setUp(true);
        p[1].setUp(true);
        return p[0];
    }

    static void addr(NetStack s, VethEnd dev, String cidr) {
        if (cidr == null) {
            return;
        }
        int slash = cidr.indexOf('/');
        s.devinet().add(dev, Ipv4Addr.parse(cidr.substring(0, slash)), Integer.parseInt(cidr.substring(slash + 1)));
    }

    static void route(NetStack s, String cidr, String via, VethEnd dev) {
        int slash = cidr.indexOf('/');
        s.routes().add(new Route(Ipv4Addr.parse(cidr.substring(0, slash)), Integer.parseInt(cidr.substring(slash + 1)),
                RouteType.UNICAST, Ipv4Addr.parse(via), dev, 0, 0, false));
    }

    static void unreachable(NetStack s, String cidr) {
        int slash = cidr.indexOf('/');
        s.routes().add(new Route(Ipv4Addr.parse(cidr.substring(0, slash)), Integer.parseInt(cidr.substring(slash + 1)),
                RouteType.UNREACHABLE, 0, null, 0, 0, false));
    }

    /** Sends {@code frame[0..len)} into the DUT through the attacker's end. */
    static void inject(VethEnd attacker, ByteBuf frame, int len) {
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        p.buf().writeBytes(frame, 0, len);
        attacker.transmit(p);
    }

    long now() {
        return vs.nanoTime();
    }

    /** Drops by reason, summed over the measured namespaces; reasons that never happened are left out. */
    Map<String, Long> drops() {
        Map<String, Long> m = new TreeMap<>();
        for (NetNamespace n : measured) {
            for (Map.Entry<DropReason, Long> e : n.stack().drops().snapshot().entrySet()) {
                if (e.getValue() > 0) {
                    m.merge(e.getKey().name(), e.getValue(), Long::sum);
                }
            }
        }
        return m;
    }

    @Override
    public void close() {
        reg.close();
    }
}
