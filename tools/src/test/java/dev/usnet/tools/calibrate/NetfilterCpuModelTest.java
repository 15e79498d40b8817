package dev.usnet.tools.calibrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.nat.NatCore;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.stack.CpuModelSysctl;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import org.junit.jupiter.api.Test;

/**
 * The CPU model charges connection tracking and NAT (usnet.cpu.ct_lookup_ns, ct_new_ns, nat_ns) with the defaults
 * calibrate measured: the same UDP flow through a router in virtual time, once plain, once tracked, once
 * masqueraded, and the modelled busy time grows by the knob times the work each adds.
 */
class NetfilterCpuModelTest {
    private static final long R1 = 0x0200_0000_0101L;
    private static final long R2 = 0x0200_0000_0102L;
    private static final long H1 = 0x0200_0000_aa01L;
    private static final long H2 = 0x0200_0000_bb02L;
    private static final int FRAMES = 2000;

    private enum Setup { PLAIN, CONNTRACK, MASQUERADE }

    private record Run(long busyNanos, long forwarded, int masqueraded) {}

    /** FRAMES datagrams of one UDP flow from behind r1 to behind r2, the model on; what the router's cores did. */
    private static Run run(Setup setup) {
        try (TestNet net = new TestNet()) {
            NetStack r = net.ns("r");
            TestNet.Wire inside = net.wire(r, "r1", R1);
            TestNet.Wire outside = net.wire(r, "r2", R2);
            r.knobs().set("net.ipv4.ip_forward", "1");
            r.knobs().set("usnet.cpu.model", "1");
            TestNet.addr(r, inside.dutEnd, "198.18.1.1/24");
            TestNet.addr(r, outside.dutEnd, "198.19.2.1/24");
            r.neigh().addPermanent(outside.dutEnd, Ipv4Addr.parse("198.19.2.2"), H2);
            if (setup != Setup.PLAIN) {
                ConntrackCore.of(r.ipv4()).get();
            }
            if (setup == Setup.MASQUERADE) {
                NatCore nat = NatCore.of(r.ipv4());
                nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC,
                        (p, st) -> nat.masquerade(p, NfNatRange.NONE, st.out()));
            }
            net.settle();
            byte[] f = Frames.udp(H1, R1, "198.18.1.2", "198.19.2.2", 64, 100, 1, false);
            // 100 frames a millisecond: the modelled backlog (a few hundred ns a frame) drains them long before the
            // next hundred, so none is refused for a full backlog.
            for (int i = 0; i < FRAMES; i++) {
                inside.send(f);
                if (i % 100 == 99) {
                    net.run(1_000_000L);
                }
            }
            net.run(1_000_000_000L);
            assertEquals(0, r.drops().total(), r.drops().snapshot().toString());
            int masqueraded = 0;
            for (byte[] out : outside.frames()) {
                if (out.length > 34 && io.netty.buffer.Unpooled.wrappedBuffer(out).getInt(26)
                        == Ipv4Addr.parse("198.19.2.1")) {
                    masqueraded++;
                }
            }
            return new Run(r.cpu().modelBusyNanos(), r.mib().get(Mib.IpForwDatagrams), masqueraded);
        }
    }

    @Test
    void trackingAndMasqueradeCostTheirKnobsPerPacket() {
        Run plain = run(Setup.PLAIN);
        Run tracked = run(Setup.CONNTRACK);
        Run masqueraded = run(Setup.MASQUERADE);
        for (Run x : new Run[] {plain, tracked, masqueraded}) {
            assertEquals(FRAMES, x.forwarded(), "every datagram forwarded");
        }
        assertEquals(0, tracked.masqueraded());
        assertEquals(FRAMES, masqueraded.masqueraded(), "every datagram left with the router's address");
        long lookup = CpuModelSysctl.CT_LOOKUP_NS.defaultValue();
        long create = CpuModelSysctl.CT_NEW_NS.defaultValue();
        long nat = CpuModelSysctl.NAT_NS.defaultValue();
        assertTrue(lookup > 0 && create > 0 && nat > 0, "the defaults are measured costs, not zero");
        // Each datagram is looked up once at prerouting; the first one makes the flow's entry.
        assertEquals(FRAMES * lookup + create, tracked.busyNanos() - plain.busyNanos(),
                "conntrack: ct_lookup_ns per datagram and ct_new_ns once");
        // Each datagram is rewritten once (its source, at postrouting).
        assertEquals(FRAMES * nat, masqueraded.busyNanos() - tracked.busyNanos(), "masquerade: nat_ns per datagram");
        assertTrue(masqueraded.busyNanos() > tracked.busyNanos() && tracked.busyNanos() > plain.busyNanos());
    }
}
