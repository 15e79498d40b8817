package dev.usnet.core.netfilter;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TwoPortRouter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The IPv4 hook points: where a forwarded and a local packet pass, in which order, and what a drop does. */
class NfHooksTest {
    static final long R1 = TwoPortRouter.R1;
    static final long H1 = TwoPortRouter.H1;

    private static final class Router extends TwoPortRouter {
        final NfHooks hooks = r.ipv4().netfilter().hooks();
        final List<String> seen = new ArrayList<>();

        void recordAll() {
            for (NfHook h : NfHook.values()) {
                hooks.register(h, 0, (p, st) -> {
                    seen.add(st.hook().nftName() + " in=" + name(st.in()) + " out=" + name(st.out()));
                    return NfVerdict.ACCEPT;
                });
            }
        }

        static String name(dev.usnet.core.device.Device d) {
            return d == null ? "-" : d.name();
        }
    }

    @Test
    void aForwardedPacketPassesPreroutingForwardAndPostroutingWithItsDevices() {
        try (Router t = new Router()) {
            t.recordAll();
            t.w1.send(Frames.udp(H1, R1, "198.18.1.2", "198.18.2.2", 64, 100, 9, false));
            t.net.settle();
            assertEquals(List.of("prerouting in=r1 out=-", "forward in=r1 out=r2", "postrouting in=- out=r2"), t.seen);
            assertEquals(1, t.w2.received.size());
        }
    }

    @Test
    void aLocalPacketAndTheErrorItCausesPassInputThenOutputAndPostrouting() {
        try (Router t = new Router()) {
            t.recordAll();
            // A datagram to a closed port of the router: it comes in (prerouting, input), the port unreachable
            // goes out (output, postrouting).
            t.w1.send(Frames.udp(H1, R1, "198.18.1.2", "198.18.1.1", 64, 10, 9, false));
            t.net.settle();
            assertEquals(List.of("prerouting in=r1 out=-", "input in=r1 out=-", "output in=- out=r1",
                    "postrouting in=- out=r1"), t.seen);
            assertEquals(1, t.w1.received.size());
        }
    }

    @Test
    void functionsRunInPriorityOrderAndADropStopsTheWalkAndIsCounted() {
        try (Router t = new Router()) {
            t.hooks.register(NfHook.FORWARD, NfIpPriority.FILTER, (p, st) -> {
                t.seen.add("filter");
                return st.drop(DropReason.NETFILTER_DROP);
            });
            t.hooks.register(NfHook.FORWARD, NfIpPriority.MANGLE, (p, st) -> {
                t.seen.add("mangle");
                return NfVerdict.ACCEPT;
            });
            t.hooks.register(NfHook.FORWARD, NfIpPriority.SECURITY, (p, st) -> {
                t.seen.add("security");
                return NfVerdict.ACCEPT;
            });
            assertArrayEquals(new int[] {NfIpPriority.MANGLE, NfIpPriority.FILTER, NfIpPriority.SECURITY},
                    t.hooks.priorities(NfHook.FORWARD));
            t.w1.send(Frames.udp(H1, R1, "198.18.1.2", "198.18.2.2", 64, 100, 9, false));
            t.net.settle();
            assertEquals(List.of("mangle", "filter"), t.seen);
            assertEquals(0, t.w2.received.size());
            assertEquals(1, t.r.drops().get(DropReason.NETFILTER_DROP));
            assertEquals(0, t.r.mib().get(Mib.IpForwDatagrams), "a packet dropped at forward was not forwarded");
        }
    }

    @Test
    void unregisteringLeavesTheHookEmptyAndThePathAsWithoutNetfilter() {
        try (Router t = new Router()) {
            NfHookOps drop = (p, st) -> NfVerdict.DROP;
            t.hooks.register(NfHook.PRE_ROUTING, 0, drop);
            assertTrue(t.hooks.active(NfHook.PRE_ROUTING));
            assertTrue(t.hooks.unregister(NfHook.PRE_ROUTING, drop));
            assertEquals(false, t.hooks.active(NfHook.PRE_ROUTING));
            t.w1.send(Frames.udp(H1, R1, "198.18.1.2", "198.18.2.2", 64, 100, 9, false));
            t.net.settle();
            assertEquals(1, t.w2.received.size());
            assertEquals(0, t.r.drops().get(DropReason.NETFILTER_DROP));
        }
    }
}
