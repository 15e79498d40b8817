package dev.usnet.tools.packetdrill.kernel;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Linux's {@code struct tcp_info} (what {@code getsockopt(IPPROTO_TCP, TCP_INFO)} fills, uapi {@code linux/tcp.h})
 * decoded into {@code tcpi_*} names, as packetdrill's {@code %{ }%} blocks read them. The struct only ever grew at
 * its end, and the kernel copies {@code min(asked, its size)} bytes and reports that length: a field is decoded only
 * when it lies wholly within the bytes the kernel returned, so an older kernel's shorter struct simply lacks the
 * newer names (a script asserting one then fails naming it, instead of reading a zero). Offsets are those of
 * x86-64 and every other Linux ABI: the struct has no padding holes before its 64-bit fields.
 */
final class TcpInfoLayout {
    /** The size Linux 6.7+ reports (up to tcpi_total_rto_time); later kernels may add fields past it. */
    static final int KNOWN_SIZE = 248;
    /** What we ask the kernel for: room for fields a newer kernel adds, which the decoder ignores. */
    static final int BUFFER_SIZE = 512;

    private enum Kind { U8, LOW_NIBBLE, HIGH_NIBBLE, BIT0, BITS1_2, U16, U32, U64 }

    private record Field(String name, int offset, Kind kind) {
        int size() {
            return switch (kind) {
                case U8, LOW_NIBBLE, HIGH_NIBBLE, BIT0, BITS1_2 -> 1;
                case U16 -> 2;
                case U32 -> 4;
                case U64 -> 8;
            };
        }
    }

    private static final List<Field> FIELDS = List.of(
            new Field("tcpi_state", 0, Kind.U8),
            new Field("tcpi_ca_state", 1, Kind.U8),
            new Field("tcpi_retransmits", 2, Kind.U8),
            new Field("tcpi_probes", 3, Kind.U8),
            new Field("tcpi_backoff", 4, Kind.U8),
            new Field("tcpi_options", 5, Kind.U8),
            // Two 4-bit fields share byte 6: the send scale in the low bits (bit-fields fill from the low end on
            // little-endian ABIs), the receive scale in the high ones.
            new Field("tcpi_snd_wscale", 6, Kind.LOW_NIBBLE),
            new Field("tcpi_rcv_wscale", 6, Kind.HIGH_NIBBLE),
            new Field("tcpi_delivery_rate_app_limited", 7, Kind.BIT0),
            new Field("tcpi_fastopen_client_fail", 7, Kind.BITS1_2),
            new Field("tcpi_rto", 8, Kind.U32),
            new Field("tcpi_ato", 12, Kind.U32),
            new Field("tcpi_snd_mss", 16, Kind.U32),
            new Field("tcpi_rcv_mss", 20, Kind.U32),
            new Field("tcpi_unacked", 24, Kind.U32),
            new Field("tcpi_sacked", 28, Kind.U32),
            new Field("tcpi_lost", 32, Kind.U32),
            new Field("tcpi_retrans", 36, Kind.U32),
            new Field("tcpi_fackets", 40, Kind.U32),
            new Field("tcpi_last_data_sent", 44, Kind.U32),
            new Field("tcpi_last_ack_sent", 48, Kind.U32),
            new Field("tcpi_last_data_recv", 52, Kind.U32),
            new Field("tcpi_last_ack_recv", 56, Kind.U32),
            new Field("tcpi_pmtu", 60, Kind.U32),
            new Field("tcpi_rcv_ssthresh", 64, Kind.U32),
            new Field("tcpi_rtt", 68, Kind.U32),
            new Field("tcpi_rttvar", 72, Kind.U32),
            new Field("tcpi_snd_ssthresh", 76, Kind.U32),
            new Field("tcpi_snd_cwnd", 80, Kind.U32),
            new Field("tcpi_advmss", 84, Kind.U32),
            new Field("tcpi_reordering", 88, Kind.U32),
            new Field("tcpi_rcv_rtt", 92, Kind.U32),
            new Field("tcpi_rcv_space", 96, Kind.U32),
            new Field("tcpi_total_retrans", 100, Kind.U32),
            new Field("tcpi_pacing_rate", 104, Kind.U64),
            new Field("tcpi_max_pacing_rate", 112, Kind.U64),
            new Field("tcpi_bytes_acked", 120, Kind.U64),
            new Field("tcpi_bytes_received", 128, Kind.U64),
            new Field("tcpi_segs_out", 136, Kind.U32),
            new Field("tcpi_segs_in", 140, Kind.U32),
            new Field("tcpi_notsent_bytes", 144, Kind.U32),
            new Field("tcpi_min_rtt", 148, Kind.U32),
            new Field("tcpi_data_segs_in", 152, Kind.U32),
            new Field("tcpi_data_segs_out", 156, Kind.U32),
            new Field("tcpi_delivery_rate", 160, Kind.U64),
            new Field("tcpi_busy_time", 168, Kind.U64),
            new Field("tcpi_rwnd_limited", 176, Kind.U64),
            new Field("tcpi_sndbuf_limited", 184, Kind.U64),
            new Field("tcpi_delivered", 192, Kind.U32),
            new Field("tcpi_delivered_ce", 196, Kind.U32),
            new Field("tcpi_bytes_sent", 200, Kind.U64),
            new Field("tcpi_bytes_retrans", 208, Kind.U64),
            new Field("tcpi_dsack_dups", 216, Kind.U32),
            new Field("tcpi_reord_seen", 220, Kind.U32),
            new Field("tcpi_rcv_ooopack", 224, Kind.U32),
            new Field("tcpi_snd_wnd", 228, Kind.U32),
            new Field("tcpi_rcv_wnd", 232, Kind.U32),
            new Field("tcpi_rehash", 236, Kind.U32),
            new Field("tcpi_total_rto", 240, Kind.U16),
            new Field("tcpi_total_rto_recoveries", 242, Kind.U16),
            new Field("tcpi_total_rto_time", 244, Kind.U32));

    private TcpInfoLayout() {}

    /**
     * The fields within the first {@code length} bytes of {@code info}, by name, in struct order. Unsigned values
     * stay unsigned (a u32 of 0xffffffff is 4294967295; a u64 above {@link Long#MAX_VALUE} stays negative, which no
     * counter reaches).
     */
    static Map<String, Long> decode(MemorySegment info, int length) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (Field f : FIELDS) {
            if (f.offset() + f.size() > length) {
                continue;
            }
            long v = switch (f.kind()) {
                case U8 -> info.get(JAVA_BYTE, f.offset()) & 0xffL;
                case LOW_NIBBLE -> info.get(JAVA_BYTE, f.offset()) & 0x0fL;
                case HIGH_NIBBLE -> (info.get(JAVA_BYTE, f.offset()) & 0xf0L) >>> 4;
                case BIT0 -> info.get(JAVA_BYTE, f.offset()) & 0x01L;
                case BITS1_2 -> (info.get(JAVA_BYTE, f.offset()) & 0x06L) >>> 1;
                case U16 -> info.get(JAVA_SHORT_UNALIGNED, f.offset()) & 0xffffL;
                case U32 -> info.get(JAVA_INT_UNALIGNED, f.offset()) & 0xffffffffL;
                case U64 -> info.get(JAVA_LONG_UNALIGNED, f.offset());
            };
            out.put(f.name(), v);
        }
        return out;
    }

    /** Every name the decoder knows, in struct order (for messages naming what a script may assert). */
    static List<String> names() {
        return FIELDS.stream().map(Field::name).toList();
    }
}
