package dev.usnet.tcp;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.Knob.Applies;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import dev.usnet.core.knob.ValueKnob;
import dev.usnet.tcp.cc.CcSwitches;
import dev.usnet.tcp.cc.CongestionControls;
import dev.usnet.tcp.cc.KernelPreset;
import java.util.ArrayList;
import java.util.List;

/**
 * TCP's knobs (Linux's ipv4_net_table entries for TCP, and usnet's kernel-version switches), declared here and
 * read by every connection as typed values of its namespace's {@link dev.usnet.core.knob.Knobs}.
 */
public final class TcpSysctl implements SysctlTable {
    private static final int INT_MAX = Integer.MAX_VALUE;

    public static final LongKnob SLOW_START_AFTER_IDLE = LongKnob.define("net.ipv4.tcp_slow_start_after_idle", 1, 0, 1,
            "RFC 2861: cwnd restarts from the initial window after an RTO of idle (tcp_slow_start_after_idle)");
    public static final LongKnob SACK = LongKnob.define("net.ipv4.tcp_sack", 1, 0, 1, Applies.NEW_SOCKETS,
            "offer selective acknowledgments (RFC 2018) on new connections");
    public static final LongKnob TIMESTAMPS = LongKnob.define("net.ipv4.tcp_timestamps", 1, 0, 1, Applies.NEW_SOCKETS,
            "offer timestamps (RFC 7323: RTT samples, PAWS) on new connections");
    public static final LongKnob WINDOW_SCALING = LongKnob.define("net.ipv4.tcp_window_scaling", 1, 0, 1, Applies.NEW_SOCKETS,
            "offer window scaling (RFC 7323) on new connections");
    public static final LongKnob KEEPALIVE_TIME = LongKnob.define("net.ipv4.tcp_keepalive_time", 7200, 1, 32767,
            "seconds of idle before the first keep-alive probe (SO_KEEPALIVE without TCP_KEEPIDLE)");
    public static final LongKnob KEEPALIVE_INTVL = LongKnob.define("net.ipv4.tcp_keepalive_intvl", 75, 1, 32767,
            "seconds between keep-alive probes");
    public static final LongKnob KEEPALIVE_PROBES = LongKnob.define("net.ipv4.tcp_keepalive_probes", 9, 1, 127,
            "unanswered keep-alive probes before the connection is reset");
    public static final LongKnob MAX_SYN_BACKLOG = LongKnob.define("net.ipv4.tcp_max_syn_backlog", 4096, 1, INT_MAX,
            "without SYN cookies, the last quarter of a listener's SYN queue is kept for proven peers (none in usnet)");
    public static final LongKnob SYNCOOKIES = LongKnob.define("net.ipv4.tcp_syncookies", 1, 0, 2,
            "SYN cookies (RFC 4987): 1 when a listener's SYN queue overflows, 2 for every SYN, 0 never");
    public static final LongKnob SOMAXCONN = LongKnob.define("net.core.somaxconn", 4096, 0, 65535, Applies.NEW_SOCKETS,
            "cap on a listener's accept-queue backlog (listen())");
    public static final LongKnob FIN_TIMEOUT = LongKnob.define("net.ipv4.tcp_fin_timeout", 60, 1, INT_MAX,
            "seconds an orphaned connection waits in FIN-WAIT-2");
    public static final LongKnob SYN_RETRIES = LongKnob.define("net.ipv4.tcp_syn_retries", 6, 1, 127,
            "SYN retransmissions before connect() fails with ETIMEDOUT");
    public static final LongKnob SYNACK_RETRIES = LongKnob.define("net.ipv4.tcp_synack_retries", 5, 1, 255,
            "SYN-ACK retransmissions before a half-open connection is dropped");
    public static final LongKnob RETRIES2 = LongKnob.define("net.ipv4.tcp_retries2", 15, 1, 255,
            "retransmission timeouts before an established connection is reset");
    public static final LongKnob REORDERING = LongKnob.define("net.ipv4.tcp_reordering", 3, 1, 300, Applies.NEW_SOCKETS,
            "initial reordering degree: SACKed segments above a hole before it counts as lost (RFC 6675 DupThresh)");
    public static final LongKnob DSACK = LongKnob.define("net.ipv4.tcp_dsack", 1, 0, 1, Applies.NEW_SOCKETS,
            "report duplicate segments as D-SACK blocks (RFC 2883)");
    public static final LongKnob RTO_MIN_MS = LongKnob.define("usnet.tcp.rto_min_ms", 200, 1, 120_000,
            "the RTO floor in milliseconds (Linux's TCP_RTO_MIN, a per-route rto_min there)");
    public static final LongKnob INIT_CWND = LongKnob.define("usnet.tcp.init_cwnd", 10, 1, 1000, Applies.NEW_SOCKETS,
            "the initial congestion window in segments (TCP_INIT_CWND, a per-route initcwnd in Linux)");
    public static final LongKnob TSO = LongKnob.define("usnet.tcp.tso", 1, 0, 1, Applies.NEW_SOCKETS,
            "send super-segments of up to 64 KiB on devices with GSO offload (TSO autosizing off)");

    // 131072 from 3.6 (TSQ's introduction) to 4.1; 4.2 doubled it to 262144 ("tcp: double default TSQ output bytes
    // limit", for Xen's slower tx completions) and later kernels raised it further. The default here is 3.18-4.1's
    // and does not follow usnet.tcp.kernel: set 262144 for a 4.2+ kernel (the 4.3 preset).
    public static final LongKnob LIMIT_OUTPUT_BYTES = LongKnob.define("net.ipv4.tcp_limit_output_bytes", 131_072, 1, INT_MAX,
            "TCP small queues: most bytes of a connection waiting below TCP (qdisc, NIC) before it stops sending "
                    + "(usnet.tcp.tsq=on; 131072 is 3.6-4.1's default, 4.2+ has 262144)");
    public static final ValueKnob<Boolean> TSQ = ValueKnob.define("usnet.tcp.tsq", "off", TcpSysctl::parseOnOff,
            v -> v ? "on" : "off", Applies.NEW_SOCKETS,
            "TCP small queues (Linux 3.6+): on holds a connection to net.ipv4.tcp_limit_output_bytes below TCP, "
                    + "charged until the NIC completes a frame or a veth orphans it; off (usnet's default): unlimited");

    static boolean parseOnOff(String v) {
        return switch (v.trim()) {
            case "on", "1", "true" -> true;
            case "off", "0", "false" -> false;
            default -> throw new IllegalArgumentException("usnet.tcp.tsq: '" + v + "' is not one of on, off");
        };
    }

    public static final ValueKnob<String> CONGESTION_CONTROL = ValueKnob.defineWord("net.ipv4.tcp_congestion_control",
            CongestionControls.DEFAULT, v -> {
                if (!CongestionControls.available().contains(v)) {
                    throw new IllegalArgumentException("net.ipv4.tcp_congestion_control: '" + v + "' is not one of "
                            + String.join(", ", CongestionControls.available()));
                }
                return v;
            }, Applies.NEW_SOCKETS, "congestion control of new connections (reno, cubic)");
    public static final ValueKnob<KernelPreset> KERNEL = ValueKnob.define("usnet.tcp.kernel", "4.3", KernelPreset::parse,
            KernelPreset::label, Applies.NEW_SOCKETS, "congestion avoidance and loss recovery of a Linux version: 3.18, "
                    + "3.19, 4.0 (4.0-4.2), 4.3, 6.x (docs/tcp-presets.md)");
    // Linux 3.4 to 4.19 defaults (87380 became 131072 in 4.20, with the 10-segment initial window's removal).
    public static final ValueKnob<TcpMem> RMEM = ValueKnob.define("net.ipv4.tcp_rmem", "4096 87380 6291456",
            v -> TcpMem.parse("net.ipv4.tcp_rmem", v), TcpMem::toString, Applies.NEW_SOCKETS,
            "receive buffer bytes 'min default max': sockets start at default and autotune up to max "
                    + "(usnet.tcp.buffers=max: start at max)");
    public static final ValueKnob<TcpMem> WMEM = ValueKnob.define("net.ipv4.tcp_wmem", "4096 16384 4194304",
            v -> TcpMem.parse("net.ipv4.tcp_wmem", v), TcpMem::toString, Applies.NEW_SOCKETS,
            "send buffer bytes 'min default max': sockets start at default and grow with cwnd up to max "
                    + "(usnet.tcp.buffers=max: start at max)");
    public static final LongKnob MODERATE_RCVBUF = LongKnob.define("net.ipv4.tcp_moderate_rcvbuf", 1, 0, 1,
            "receive-buffer autotuning per RTT from the bytes the application read (tcp_rcv_space_adjust, DRS)");
    public static final LongKnob ADV_WIN_SCALE = LongKnob.define("net.ipv4.tcp_adv_win_scale", 1, -31, 31,
            "share of the receive buffer offered as window: buf - buf/2^n (n > 0) or buf/2^-n (tcp_win_from_space)");
    public static final ValueKnob<BufferMode> BUFFERS = ValueKnob.define("usnet.tcp.buffers", "autotune",
            BufferMode::parse, BufferMode::label, Applies.NEW_SOCKETS,
            "autotune: buffers and windows start small and grow as Linux 3.18-4.3 do them; max: every socket starts "
                    + "at tcp_wmem/tcp_rmem max with no autotuning (usnet before autotuning)");

    /** usnet.tcp.buffers: how a socket's buffers are sized. */
    public enum BufferMode {
        /** Linux's autotuning: tcp_rmem/tcp_wmem default, 10-segment initial window, growth per RTT and with cwnd. */
        AUTOTUNE("autotune"),
        /** Every socket at tcp_rmem/tcp_wmem max from the start, the whole buffer offered as window, no growth. */
        MAX("max");

        private final String label;

        BufferMode(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }

        static BufferMode parse(String v) {
            for (BufferMode m : values()) {
                if (m.label.equals(v.trim())) {
                    return m;
                }
            }
            throw new IllegalArgumentException("usnet.tcp.buffers: '" + v + "' is not one of autotune, max");
        }
    }

    /** "preset": the switch follows usnet.tcp.kernel; anything else overrides that one behaviour. */
    public static final String FOLLOW_PRESET = "preset";

    /** One knob per congestion-avoidance switch ({@code usnet.tcp.ai}, ...), in {@link CcSwitches#KEYS} order. */
    public static final List<ValueKnob<String>> SWITCHES = switchKnobs();

    private static List<ValueKnob<String>> switchKnobs() {
        List<ValueKnob<String>> l = new ArrayList<>();
        for (String key : CcSwitches.KEYS) {
            l.add(ValueKnob.defineWord(key, FOLLOW_PRESET, v -> {
                if (!v.equals(FOLLOW_PRESET)) {
                    // Any preset checks the value; it is kept as typed.
                    KernelPreset.V4_3.switches().withOverride(key, v);
                }
                return v;
            }, Applies.NEW_SOCKETS, "one behaviour of usnet.tcp.kernel on its own; 'preset' follows usnet.tcp.kernel"));
        }
        return List.copyOf(l);
    }

    private static final List<String> LOSS_HELP = List.of(
            "RACK loss detection (RFC 8985) bitmap: 1 RACK, 2 static reordering window, 4 no DupThresh shortcut; "
                    + "'preset' follows usnet.tcp.kernel (0 up to 4.3, 1 in 6.x)",
            "forward acknowledgment, loss judged from the highest SACK (Linux 2.6-4.14), else RFC 6675 IsLost; "
                    + "unused with RACK; 'preset' follows usnet.tcp.kernel (1 up to 4.3, 0 in 6.x)",
            "0 none, 1-2 early retransmit (RFC 5827), 3 early retransmit and tail loss probes, 4 probes only "
                    + "(with RACK: 3-4 probes, else none); 'preset' follows usnet.tcp.kernel (3)",
            "F-RTO (RFC 5682): 0 off, 1-2 on (spurious RTOs are undone); 'preset' follows usnet.tcp.kernel "
                    + "(0 up to 4.3 as usnet models them, 2 in 6.x)",
            "undo a reduction whose retransmissions all came back as D-SACKs; 'preset' follows usnet.tcp.kernel "
                    + "(0 up to 4.3, 1 in 6.x)",
            "tail loss probe timeout: 3.x (2*srtt, >= 10 ms) or 6.x (2*srtt + 2 ms, + 200 ms with one segment out); "
                    + "'preset' follows usnet.tcp.kernel");

    /** One knob per loss-recovery behaviour ({@code net.ipv4.tcp_recovery}, ...), in {@link LossSwitches#KEYS} order. */
    public static final List<ValueKnob<String>> LOSS_SWITCHES = lossKnobs();

    private static List<ValueKnob<String>> lossKnobs() {
        List<ValueKnob<String>> l = new ArrayList<>();
        for (int i = 0; i < LossSwitches.KEYS.size(); i++) {
            String key = LossSwitches.KEYS.get(i);
            l.add(ValueKnob.defineWord(key, FOLLOW_PRESET, v -> {
                if (!v.equals(FOLLOW_PRESET)) {
                    LossSwitches.forPreset(KernelPreset.V6).withOverride(key, v);
                }
                return v;
            }, Applies.NEW_SOCKETS, LOSS_HELP.get(i)));
        }
        return List.copyOf(l);
    }

    /** The loss-recovery behaviours in force: the preset's, with every knob not left at 'preset' applied. */
    static LossSwitches lossSwitches(Knobs knobs) {
        LossSwitches ls = LossSwitches.forPreset(knobs.get(KERNEL));
        for (int i = 0; i < LossSwitches.KEYS.size(); i++) {
            String v = knobs.get(LOSS_SWITCHES.get(i));
            if (!v.equals(FOLLOW_PRESET)) {
                ls = ls.withOverride(LossSwitches.KEYS.get(i), v);
            }
        }
        return ls;
    }

    private static final List<Knob> ALL = all();

    private static List<Knob> all() {
        List<Knob> l = new ArrayList<>(List.of(SLOW_START_AFTER_IDLE, SACK, TIMESTAMPS, WINDOW_SCALING, KEEPALIVE_TIME,
                KEEPALIVE_INTVL, KEEPALIVE_PROBES, MAX_SYN_BACKLOG, SYNCOOKIES, SOMAXCONN, FIN_TIMEOUT, SYN_RETRIES, SYNACK_RETRIES,
                RETRIES2, REORDERING, DSACK, RTO_MIN_MS, INIT_CWND, TSO, LIMIT_OUTPUT_BYTES, TSQ, CONGESTION_CONTROL, KERNEL, RMEM, WMEM, MODERATE_RCVBUF, ADV_WIN_SCALE, BUFFERS));
        l.addAll(SWITCHES);
        l.addAll(LOSS_SWITCHES);
        return List.copyOf(l);
    }

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public TcpSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return ALL;
    }

    /** net.ipv4.tcp_rmem / tcp_wmem: three byte counts. */
    public record TcpMem(long min, long def, long max) {
        static TcpMem parse(String key, String v) {
            String[] parts = v.trim().split("\\s+");
            if (parts.length != 3) {
                throw new IllegalArgumentException(key + ": expected three byte counts 'min default max', got '" + v + "'");
            }
            long[] n = new long[3];
            for (int i = 0; i < 3; i++) {
                try {
                    n[i] = Long.decode(parts[i]);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(key + ": '" + parts[i] + "' is not an integer (expected 1.."
                            + INT_MAX + ")");
                }
                if (n[i] < 1 || n[i] > INT_MAX) {
                    throw new IllegalArgumentException(key + ": " + n[i] + " is out of range 1.." + INT_MAX);
                }
            }
            if (n[0] > n[1] || n[1] > n[2]) {
                throw new IllegalArgumentException(key + ": expected min <= default <= max, got '" + v + "'");
            }
            return new TcpMem(n[0], n[1], n[2]);
        }

        @Override
        public String toString() {
            return min + " " + def + " " + max;
        }
    }
}
