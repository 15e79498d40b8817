package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tcp.SegmentHarness.PeerSyn;
import dev.usnet.tcp.SegmentHarness.Sent;
import org.junit.jupiter.api.Test;

/**
 * usnet.tcp.init_rwnd: the window a SYN or SYN-ACK offers, with Linux 6.x's tcp_rmem (131072 default, so 65536 of
 * initial space at tcp_adv_win_scale 1).
 */
class InitialRwndTest {
    private static final String RMEM_6X = "4096 131072 33554432";

    private static int synAckWindow(String rule) {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_rmem", RMEM_6X, "usnet.tcp.init_rwnd", rule)) {
            h.listenAndSendSyn(PeerSyn.linux());
            return h.sentOne().window();
        }
    }

    private static int synWindow(String rule) {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_rmem", RMEM_6X, "usnet.tcp.init_rwnd", rule)) {
            h.tcp.connect(SegmentHarness.DUT_ADDR, SegmentHarness.DUT_PORT, SegmentHarness.PEER_ADDR,
                    SegmentHarness.PEER_PORT, new TcpSock.Callbacks() {});
            h.net.settle();
            Sent syn = h.sentOne();
            return syn.window();
        }
    }

    @Test
    void linux420OnOffersTheWholeInitialSpaceInWholeSegmentsUpTo65535() {
        // 65536 bytes of space: 45 segments of 1448 (MSS 1460 less timestamps) on the SYN-ACK, 44 of 1460 on the SYN.
        assertEquals(65_160, synAckWindow("space"));
        assertEquals(64_240, synWindow("space"));
    }

    @Test
    void everyPresetUsnetHasOffersTenSegmentsAsLinux3xTo419() {
        assertEquals(14_480, synAckWindow("preset"));
        assertEquals(14_600, synWindow("preset"));
        assertEquals(14_480, synAckWindow("segments"));
    }

    @Test
    void anUnknownRuleIsRefusedNamingTheKnob() {
        try (SegmentHarness h = new SegmentHarness()) {
            var e = assertThrows(IllegalArgumentException.class, () -> h.dut.knobs().set("usnet.tcp.init_rwnd", "all"));
            assertTrue(e.getMessage().contains("usnet.tcp.init_rwnd"), e.getMessage());
        }
    }
}
