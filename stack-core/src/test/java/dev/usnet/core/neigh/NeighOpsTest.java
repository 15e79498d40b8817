package dev.usnet.core.neigh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The neighbour table drives any protocol through its {@link NeighOps}: it writes the protocol's ethertype, asks
 * the protocol to solicit and to report failures, and maps what the protocol maps without asking. Here a made-up
 * protocol (ethertype 0x88b5, local experimental) stands in for NDP, on a table of its own next to IPv4's.
 */
class NeighOpsTest {
    static final int ETHERTYPE = 0x88b5;
    static final long OUR_MAC = 0x02_00_00_00_00_01L;
    static final long PEER_MAC = 0x02_00_00_00_00_02L;
    static final long GROUP_MAC = 0x33_33_00_00_00_01L;
    static final int PEER = 0x0a00_0002;
    static final int GROUP = 0x0a00_00ff;
    static final long SEC = 1_000_000_000L;

    static final class RecordingOps implements NeighOps {
        final List<Neighbour> solicited = new ArrayList<>();
        final List<Packet> lastQueued = new ArrayList<>();
        int unreachable;

        @Override
        public int keyLength() {
            return 4;
        }

        @Override
        public int ethertype() {
            return ETHERTYPE;
        }

        @Override
        public long mapWithoutAsking(Device dev, long hi, long lo) {
            return lo == GROUP ? GROUP_MAC : RESOLVE;
        }

        @Override
        public void solicit(Neighbour n, boolean unicast, Packet last) {
            solicited.add(n);
            lastQueued.add(last);
        }

        @Override
        public void reportUnreachable(Packet p) {
            unreachable++;
        }
    }

    private static Packet packet() {
        Packet p = Packet.allocate(Buffers.HEADROOM, EthernetFrame.HEADER_LEN + 40);
        p.buf().writerIndex(p.start() + EthernetFrame.HEADER_LEN + 40);
        return p;
    }

    @Test
    void resolvesThroughTheProtocolsOperationsAndWritesItsEthertype() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            TestNet.Wire w = net.wire(s, "eth0", OUR_MAC);
            RecordingOps ops = new RecordingOps();
            NeighTable table = new NeighTable(s, ops);

            Packet queued = packet();
            table.output(w.dutEnd, PEER, queued);
            net.settle();
            assertTrue(w.frames().isEmpty(), "nothing leaves before the neighbour is resolved");
            assertEquals(1, ops.solicited.size());
            assertEquals(PEER, ops.solicited.get(0).ip());
            assertSame(queued, ops.lastQueued.get(0), "the protocol sees the packet waiting, for its source address");
            assertEquals(NudState.INCOMPLETE, table.lookup(w.dutEnd, PEER).state());

            table.update(table.lookup(w.dutEnd, PEER), PEER_MAC, true, true);
            net.settle();
            assertEquals(1, w.frames().size(), "the queued packet leaves once resolved");
            byte[] f = w.frames().get(0);
            assertEquals(PEER_MAC, MacAddr.get(io.netty.buffer.Unpooled.wrappedBuffer(f), 0));
            assertEquals(ETHERTYPE, ((f[12] & 0xff) << 8) | (f[13] & 0xff));

            w.clear();
            table.output(w.dutEnd, GROUP, packet());
            net.settle();
            assertEquals(1, w.frames().size(), "a next hop the protocol maps leaves at once");
            assertEquals(GROUP_MAC, MacAddr.get(io.netty.buffer.Unpooled.wrappedBuffer(w.frames().get(0)), 0));
            assertEquals(1, ops.solicited.size(), "and is never solicited");
            table.close();
        }
    }

    @Test
    void reportsQueuedPacketsThroughTheProtocolWhenResolutionFails() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            TestNet.Wire w = net.wire(s, "eth0", OUR_MAC);
            RecordingOps ops = new RecordingOps();
            NeighTable table = new NeighTable(s, ops);
            table.output(w.dutEnd, PEER, packet());
            table.output(w.dutEnd, PEER, packet());
            net.run(10 * SEC);
            assertEquals(NudState.FAILED, table.lookup(w.dutEnd, PEER).state());
            assertEquals(2, ops.unreachable, "each queued packet is reported to its sender by the protocol");
            assertTrue(ops.solicited.size() > 1, "the table retried through the protocol");
            assertFalse(w.frames().stream().anyMatch(f -> ((f[12] & 0xff) << 8 | (f[13] & 0xff)) == ETHERTYPE));
            table.close();
        }
    }
}
