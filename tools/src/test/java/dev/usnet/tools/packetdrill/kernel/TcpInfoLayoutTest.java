package dev.usnet.tools.packetdrill.kernel;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The tcp_info decoder over hand-filled structs (no kernel needed). */
class TcpInfoLayoutTest {

    @Test
    void decodesBitFieldsCountersAndTheNewestFields() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(TcpInfoLayout.BUFFER_SIZE);
            s.set(JAVA_BYTE, 0, (byte) 1);                 // ESTABLISHED
            s.set(JAVA_BYTE, 1, (byte) 3);                 // Recovery
            s.set(JAVA_BYTE, 6, (byte) (10 << 4 | 7));     // rcv_wscale 10, snd_wscale 7
            s.set(JAVA_BYTE, 7, (byte) 0b101);             // app limited, fastopen_client_fail 2
            s.set(JAVA_INT_UNALIGNED, 8, 201_000);         // rto µs
            s.set(JAVA_INT_UNALIGNED, 80, 10);             // snd_cwnd
            s.set(JAVA_INT_UNALIGNED, 76, -1);             // snd_ssthresh "infinite": 0xffffffff
            s.set(JAVA_LONG_UNALIGNED, 120, 1L << 40);     // bytes_acked
            s.set(JAVA_INT_UNALIGNED, 192, 77);            // delivered
            s.set(JAVA_INT_UNALIGNED, 196, 5);             // delivered_ce
            s.set(JAVA_LONG_UNALIGNED, 168, 123_456);      // busy_time
            s.set(JAVA_LONG_UNALIGNED, 200, 99_000);       // bytes_sent
            s.set(JAVA_LONG_UNALIGNED, 208, 1_000);        // bytes_retrans
            s.set(JAVA_INT_UNALIGNED, 216, 2);             // dsack_dups
            s.set(JAVA_INT_UNALIGNED, 220, 3);             // reord_seen
            s.set(JAVA_SHORT_UNALIGNED, 240, (short) 4);   // total_rto
            s.set(JAVA_SHORT_UNALIGNED, 242, (short) 1);   // total_rto_recoveries
            s.set(JAVA_INT_UNALIGNED, 244, 900);           // total_rto_time
            Map<String, Long> m = TcpInfoLayout.decode(s, TcpInfoLayout.KNOWN_SIZE);
            assertEquals(1L, m.get("tcpi_state"));
            assertEquals(3L, m.get("tcpi_ca_state"));
            assertEquals(7L, m.get("tcpi_snd_wscale"));
            assertEquals(10L, m.get("tcpi_rcv_wscale"));
            assertEquals(1L, m.get("tcpi_delivery_rate_app_limited"));
            assertEquals(2L, m.get("tcpi_fastopen_client_fail"));
            assertEquals(201_000L, m.get("tcpi_rto"));
            assertEquals(10L, m.get("tcpi_snd_cwnd"));
            assertEquals(0xffffffffL, m.get("tcpi_snd_ssthresh"));
            assertEquals(1L << 40, m.get("tcpi_bytes_acked"));
            assertEquals(77L, m.get("tcpi_delivered"));
            assertEquals(5L, m.get("tcpi_delivered_ce"));
            assertEquals(123_456L, m.get("tcpi_busy_time"));
            assertEquals(99_000L, m.get("tcpi_bytes_sent"));
            assertEquals(1_000L, m.get("tcpi_bytes_retrans"));
            assertEquals(2L, m.get("tcpi_dsack_dups"));
            assertEquals(3L, m.get("tcpi_reord_seen"));
            assertEquals(4L, m.get("tcpi_total_rto"));
            assertEquals(1L, m.get("tcpi_total_rto_recoveries"));
            assertEquals(900L, m.get("tcpi_total_rto_time"));
            assertEquals(TcpInfoLayout.names().size(), m.size());
        }
    }

    @Test
    void anOlderKernelsShorterStructLacksTheNewerNames() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocate(TcpInfoLayout.BUFFER_SIZE);
            s.set(JAVA_INT_UNALIGNED, 80, 10);
            // Linux 4.9's struct ended after tcpi_data_segs_out (160 bytes).
            Map<String, Long> m = TcpInfoLayout.decode(s, 160);
            assertEquals(10L, m.get("tcpi_snd_cwnd"));
            assertTrue(m.containsKey("tcpi_data_segs_out"));
            assertFalse(m.containsKey("tcpi_delivery_rate"));
            assertFalse(m.containsKey("tcpi_delivered"));
            assertFalse(m.containsKey("tcpi_total_rto"));
            // A length that cuts a field in half leaves that field out too.
            assertFalse(TcpInfoLayout.decode(s, 82).containsKey("tcpi_snd_cwnd"));
        }
    }
}
