package dev.usnet.core.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.EthernetFrame;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * usnet.cpu.machine: namespaces naming the same machine take turns on one modelled CPU in virtual time, so two
 * receivers on one machine drain their backlogs half as fast as on two machines, round robin, deterministically.
 */
class SharedCpuMachineTest {
    private static final int FRAMES = 640;

    private static Packet frame(VethEnd to) {
        Packet p = Packet.allocate(Buffers.HEADROOM, 60);
        var b = p.buf();
        b.writerIndex(b.readerIndex() + 60);
        EthernetFrame.write(b, p.start(), to.mac(), 0x0200_0000_0f00L, 0x88b5);
        return p;
    }

    /**
     * Two receivers {@code a} and {@code b}, each sent 640 frames at time 0 over its own veth, the model charging
     * 1 µs per frame; returns the instants each one's frames were handled, a's then b's.
     */
    private static List<List<Long>> drain(String machineA, String machineB) {
        try (TestNet net = new TestNet()) {
            List<List<Long>> at = List.of(new ArrayList<>(), new ArrayList<>());
            String[] machines = {machineA, machineB};
            List<VethEnd[]> pairs = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                NetStack sender = net.ns("s" + i);
                NetStack rx = net.ns(i == 0 ? "a" : "b");
                rx.knobs().set("usnet.cpu.model", "1");
                rx.knobs().set("usnet.cpu.l2_rx_ns", "1000");
                if (machines[i] != null) {
                    rx.knobs().set("usnet.cpu.machine", machines[i]);
                }
                VethEnd[] pair = net.link(sender, "eth0", null, rx, "eth0", null);
                List<Long> mine = at.get(i);
                pair[1].setRxHandler((dev, p) -> {
                    mine.add(net.sched.nanoTime());
                    p.release();
                    return true;
                });
                pairs.add(pair);
            }
            for (int f = 0; f < FRAMES; f++) {
                for (VethEnd[] pair : pairs) {
                    pair[0].transmit(frame(pair[1]));
                }
            }
            net.run(10_000_000L);
            return at;
        }
    }

    private static long last(List<Long> l) {
        return l.get(l.size() - 1);
    }

    @Test
    void twoNamespacesOnOneMachineDrainHalfAsFastAsOnTwo() {
        List<List<Long>> apart = drain(null, null);
        assertEquals(FRAMES, apart.get(0).size());
        assertEquals(FRAMES, apart.get(1).size());
        // Each its own CPU: 10 runs of 64 frames, 64 µs apart; a run's frames are handled at its start.
        assertEquals(9 * 64_000L, last(apart.get(0)));
        assertEquals(9 * 64_000L, last(apart.get(1)));

        List<List<Long>> shared = drain("host1", "host1");
        assertEquals(FRAMES, shared.get(0).size());
        assertEquals(FRAMES, shared.get(1).size());
        // One CPU: the runs alternate a, b, a, b ... (round robin), so each takes twice as long.
        assertEquals(18 * 64_000L, last(shared.get(0)));
        assertEquals(19 * 64_000L, last(shared.get(1)));
        assertEquals(64_000L, shared.get(1).get(0), "b's first run waits for a's");

        List<List<Long>> differentNames = drain("host1", "host2");
        assertEquals(apart, differentNames, "different machine names share nothing");
        assertEquals(shared, drain("host1", "host1"), "deterministic");
    }

    @Test
    void aMachineNameIsCheckedWhenSet() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> a.knobs().set("usnet.cpu.machine", "host 1"));
            assertTrue(e.getMessage().contains("usnet.cpu.machine"), e.getMessage());
            a.knobs().set("usnet.cpu.machine", "rack1.host-2");
            assertEquals("rack1.host-2", a.knobs().get("usnet.cpu.machine"));
            assertEquals("", net.ns("b").knobs().get("usnet.cpu.machine"));
        }
    }
}
