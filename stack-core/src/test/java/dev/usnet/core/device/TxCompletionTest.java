package dev.usnet.core.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.buf.TxCompletion;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where a transmitted packet's destructor runs (skb->destructor): at the veth's xmit (skb_orphan) when the end has
 * no link emulation, when the frame leaves the emulated NIC onto its wire when it has one, on a drop, and for
 * GSO segments (their completions add up to the super-frame's charge).
 */
class TxCompletionTest {

    /** Records every completion: when it came (virtual ns) and how many bytes it released. */
    static final class Recorder implements TxCompletion {
        final List<long[]> calls = new ArrayList<>();
        final TestNet net;
        long outstanding;

        Recorder(TestNet net) {
            this.net = net;
        }

        void charge(Packet p, int bytes) {
            outstanding += bytes;
            p.setOwner(this, bytes);
        }

        @Override
        public void completed(Packet p) {
            outstanding -= p.ownerBytes();
            calls.add(new long[] {net.sched.nanoTime(), p.ownerBytes()});
        }
    }

    private static Packet frame(int len) {
        byte[] f = Frames.raw(0x0200_0000_0b02L, 0x0200_0000_0a01L, 0x88b5, len);
        Packet p = Packet.allocate(Buffers.HEADROOM, f.length);
        p.buf().writeBytes(f);
        return p;
    }

    @Test
    void aVethWithoutEmulationOrphansAtXmitBeforeThePeerSeesTheFrame() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            Recorder r = new Recorder(net);
            List<Object> ownerAtPeer = new ArrayList<>();
            pair[1].setRxHandler((dev, p) -> {
                ownerAtPeer.add(p.owner() == null ? "none" : p.owner());
                p.release();
                return true;
            });
            Packet p = frame(1000);
            r.charge(p, 1000);
            pair[0].transmit(p);
            assertEquals(1, r.calls.size(), "completed inside transmit, at the veth's xmit");
            assertEquals(0, r.outstanding);
            net.settle();
            assertEquals(List.of("none"), ownerAtPeer, "the peer namespace receives an orphan");
            assertEquals(1, r.calls.size(), "exactly once");
        }
    }

    @Test
    void anEmulatedNicCompletesWhenTheFrameLeavesForTheWire() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            // 1 Mbit/s: a 1000-byte frame takes 8 ms on the wire.
            pair[0].setNetem(NetemParams.NONE.withRate(1_000_000L).withLimit(100));
            Recorder r = new Recorder(net);
            pair[1].setRxHandler((dev, p) -> {
                p.release();
                return true;
            });
            for (int i = 0; i < 3; i++) {
                Packet p = frame(1000);
                r.charge(p, 1000);
                pair[0].transmit(p);
            }
            net.settle();
            assertEquals(3000, r.outstanding, "all three wait in the NIC's queue, still charged");
            net.run(30_000_000L);
            assertEquals(3, r.calls.size());
            assertEquals(0, r.outstanding);
            assertEquals(8_000_000L, r.calls.get(0)[0], "first completion after one frame time");
            assertEquals(24_000_000L, r.calls.get(2)[0], "third after three");
        }
    }

    @Test
    void dropsAndPurgesCompleteToo() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            pair[0].setNetem(NetemParams.NONE.withRate(1_000_000L).withLimit(2));
            Recorder r = new Recorder(net);
            for (int i = 0; i < 4; i++) {
                Packet p = frame(1000);
                r.charge(p, 1000);
                pair[0].transmit(p);
            }
            assertEquals(2, r.calls.size(), "the two tail-dropped frames completed at once");
            pair[0].setUp(false);
            assertEquals(4, r.calls.size(), "the purged queue completed");
            assertEquals(0, r.outstanding);
        }
    }

    @Test
    void gsoSegmentsCompletionsAddUpToTheSuperFramesCharge() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "veth0", null, b, "veth1", null);
            pair[0].setNetem(NetemParams.NONE.withRate(100_000_000L).withLimit(100));
            pair[1].setRxHandler((dev, p) -> {
                assertNull(p.owner());
                p.release();
                return true;
            });
            Recorder r = new Recorder(net);
            Packet p = GsoSegmentationTest.superFrame(new byte[10_000], 1448, 0x18);
            int charged = p.length() + 7;
            r.charge(p, charged);
            pair[0].transmit(p);
            net.run(10_000_000L);
            assertEquals(7, r.calls.size(), "one completion per segment (ceil(10000 / 1448))");
            assertEquals(charged, r.calls.stream().mapToLong(c -> c[1]).sum());
            assertEquals(0, r.outstanding);
        }
    }
}
