package dev.usnet.tcp;

import static dev.usnet.tcp.SegmentHarness.MSS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** tcp_info after a scripted exchange: the values a packetdrill assert would read, in Linux's units. */
class TcpInfoTest {
    @Test
    void afterAnActiveOpenAndTwoRoundTripsTheFieldsAreLinuxs() {
        try (SegmentHarness h = new SegmentHarness()) {
            // The SYN-ACK comes 10 ms after the SYN: the first RTT sample.
            TcpSock s = h.tcp.connect(SegmentHarness.DUT_ADDR, SegmentHarness.DUT_PORT, SegmentHarness.PEER_ADDR,
                    SegmentHarness.PEER_PORT, h.callbacks);
            h.net.settle();
            SegmentHarness.Sent syn = h.sentOne();
            Map<String, Long> m = s.info().asMap();
            assertEquals(2, m.get("tcpi_state"), "TCP_SYN_SENT");
            assertEquals(1_000_000, m.get("tcpi_rto"), "TCP_TIMEOUT_INIT in microseconds");
            assertEquals(0xffff_ffffL, m.get("tcpi_min_rtt"), "no RTT sample yet: ~0U");
            h.advance(10_000_000L);
            h.seg().flags(dev.usnet.core.wire.TcpSegment.SYN | dev.usnet.core.wire.TcpSegment.ACK_FLAG).seq(0).ack(1)
                    .mss(1460).wscale(7).sackOk().win(65535).ts(h.peerTsNow(), syn.tsVal()).inject();
            h.autoTs = true;
            h.sentOne();

            // Three full segments out, acknowledged 15 ms later (before the tail loss probe's 2 RTTs); then 1000
            // bytes from the peer.
            h.write(s, 3 * MSS);
            assertEquals(3, h.sent().size());
            m = s.info().asMap();
            assertEquals(3, m.get("tcpi_unacked"));
            assertEquals(0, m.get("tcpi_notsent_bytes"));
            h.advance(15_000_000L);
            h.seg().seq(1).ack(SegmentHarness.end(3)).win(65535).inject();
            h.seg().seq(1).ack(SegmentHarness.end(3)).win(65535).payload(1000).inject();
            h.advance(5_000_000L);

            TcpInfo info = s.info();
            m = info.asMap();
            assertEquals(1, m.get("tcpi_state"), "TCP_ESTABLISHED");
            assertEquals(0, m.get("tcpi_ca_state"), "TCP_CA_Open");
            assertEquals(TcpInfo.TCPI_OPT_TIMESTAMPS | TcpInfo.TCPI_OPT_SACK | TcpInfo.TCPI_OPT_WSCALE,
                    m.get("tcpi_options"));
            assertEquals(7, m.get("tcpi_snd_wscale"));
            assertEquals((long) info.wscaleRcv(), m.get("tcpi_rcv_wscale"));
            assertEquals(MSS, m.get("tcpi_snd_mss"));
            assertEquals(1448, m.get("tcpi_advmss"), "1460 less the timestamp option");
            assertEquals(1500, m.get("tcpi_pmtu"));
            assertEquals(0, m.get("tcpi_unacked"));
            assertEquals(0, m.get("tcpi_retrans"));
            assertEquals(0, m.get("tcpi_total_retrans"));
            assertEquals(0, m.get("tcpi_retransmits"));
            assertEquals(0, m.get("tcpi_backoff"));
            assertEquals(0, m.get("tcpi_lost"));
            assertEquals(0, m.get("tcpi_sacked"));
            assertEquals(3 * MSS, m.get("tcpi_bytes_sent"));
            assertEquals(0, m.get("tcpi_bytes_retrans"));
            assertEquals(1000, m.get("tcpi_bytes_received"));
            assertEquals(3, m.get("tcpi_data_segs_out"));
            assertEquals(1, m.get("tcpi_data_segs_in"));
            assertEquals(65535L << 7, m.get("tcpi_snd_wnd"));
            // RTT samples of 10 ms (the handshake) and 15 ms: srtt 10 + (15 - 10) / 8 = 10.625 ms, min 10 ms.
            assertEquals(10_625, m.get("tcpi_rtt"));
            assertEquals(10_000, m.get("tcpi_min_rtt"));
            assertTrue(m.get("tcpi_rto") >= 200_000, "RTO floor 200 ms: " + m.get("tcpi_rto"));
            assertEquals(20, m.get("tcpi_last_data_sent"), "ms since the data went out");
            assertEquals(5, m.get("tcpi_last_ack_recv"));
            assertEquals(5, m.get("tcpi_last_data_recv"));
            assertEquals(0, m.get("tcpi_fackets"));
            assertEquals(0x7fff_ffffL, m.get("tcpi_snd_ssthresh"), "TCP_INFINITE_SSTHRESH: no loss yet");
            assertEquals(10, m.get("tcpi_snd_cwnd"), "IW10, not grown: 3 of 10 in flight is not cwnd-limited");
            assertEquals(3, m.get("tcpi_reordering"));
            for (String absent : List.of("tcpi_pacing_rate", "tcpi_delivery_rate", "tcpi_busy_time", "tcpi_delivered",
                    "tcpi_delivered_ce", "tcpi_dsack_dups", "tcpi_reord_seen", "tcpi_probes")) {
                assertFalse(m.containsKey(absent), absent + " is not known to usnet and must not be made up");
            }
        }
    }
}
