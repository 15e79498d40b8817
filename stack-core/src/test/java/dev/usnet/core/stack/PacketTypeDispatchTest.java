package dev.usnet.core.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.EthernetFrame;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Received frames go to the protocol registered for their ethertype; frames of no registered type are dropped. */
class PacketTypeDispatchTest {
    static final long MAC = 0x02_00_00_00_00_01L;
    static final int EXPERIMENTAL = 0x88b5;

    private static byte[] frame(int ethertype, int payloadLen) {
        byte[] f = new byte[EthernetFrame.HEADER_LEN + payloadLen];
        for (int i = 0; i < 6; i++) {
            f[i] = (byte) (MAC >>> (40 - 8 * i));
            f[6 + i] = (byte) (0x02 + i);
        }
        f[12] = (byte) (ethertype >>> 8);
        f[13] = (byte) ethertype;
        return f;
    }

    @Test
    void aRegisteredTypeReachesItsHandlerWithTheNetworkHeaderSet() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            TestNet.Wire w = net.wire(s, "eth0", MAC);
            List<Integer> seen = new ArrayList<>();
            s.registerPacketType(EXPERIMENTAL, p -> {
                seen.add(p.network() - p.start());
                p.release();
            });
            w.send(frame(EXPERIMENTAL, 46));
            net.settle();
            assertEquals(List.of(EthernetFrame.HEADER_LEN), seen);
            assertEquals(0, s.drops().get(DropReason.UNHANDLED_PROTO));
        }
    }

    @Test
    void aTypeNobodyRegisteredIsDroppedAsUnhandled() {
        try (TestNet net = new TestNet()) {
            NetStack s = net.ns("s");
            TestNet.Wire w = net.wire(s, "eth0", MAC);
            w.send(frame(EXPERIMENTAL, 46));
            net.settle();
            assertEquals(1, s.drops().get(DropReason.UNHANDLED_PROTO));
        }
    }
}
