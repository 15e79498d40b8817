package dev.usnet.tcp;

import dev.usnet.tcp.cc.KernelPreset;
import java.util.List;
import java.util.Locale;

/**
 * How a connection detects and repairs losses, one knob per behaviour, as {@link dev.usnet.tcp.cc.CcSwitches} is
 * for congestion avoidance: {@code usnet.tcp.kernel} sets all of them ({@link #forPreset}) and each knob left at
 * {@code preset} follows it. Linux's sysctl names and values where Linux has the knob.
 *
 * @param recovery     net.ipv4.tcp_recovery: bit 0x1 RACK loss detection (RFC 8985; Linux 4.4+, the default
 *                     since), 0x2 a static reordering window (no growth on D-SACKs), 0x4 no duplicate-ACK
 *                     threshold inside RACK (reo_wnd stays min_rtt/4 even with DupThresh SACKs)
 * @param fack         net.ipv4.tcp_fack: forward acknowledgment (Linux 2.6 to 4.14); without RACK, FACK or
 *                     RFC 6675's IsLost judges SACKed connections
 * @param earlyRetrans net.ipv4.tcp_early_retrans: 0 neither, 1 and 2 early retransmit (RFC 5827, usnet always
 *                     with Linux's quarter-RTT delay), 3 early retransmit and tail loss probes, 4 probes only;
 *                     with RACK early retransmit does not exist (RACK's reordering timer does its work) and the
 *                     value only says whether probes are sent (3, 4)
 * @param frto         net.ipv4.tcp_frto: 0 off; 1 or 2 F-RTO (RFC 5682, the SACK-enhanced version on SACK
 *                     connections): after an RTO, an ACK of never-retransmitted data proves it spurious and undoes it
 * @param dsackUndo    usnet.tcp.dsack_undo: an episode whose every retransmission was reported back as a D-SACK
 *                     is undone (undo_marker / undo_retrans counting, tcp_try_undo_dsack), besides the timestamp
 *                     (Eifel) undo every preset has
 * @param tlpPto       usnet.tcp.tlp_pto: when a tail loss probe fires ({@link TlpPto})
 */
public record LossSwitches(int recovery, boolean fack, int earlyRetrans, int frto, boolean dsackUndo, TlpPto tlpPto) {

    /** tcp_recovery bit: RACK loss detection. */
    public static final int RACK_LOSS_DETECTION = 0x1;
    /** tcp_recovery bit: RACK's reordering window does not grow on D-SACKs. */
    public static final int RACK_STATIC_REO_WND = 0x2;
    /** tcp_recovery bit: no duplicate-ACK threshold shortcut inside RACK. */
    public static final int RACK_NO_DUPTHRESH = 0x4;

    /** How the probe timeout (PTO) is computed. */
    public enum TlpPto {
        /**
         * Linux 3.10 to 4.x: 2·SRTT, at least 10 ms; with one segment out at least 1.5·SRTT + 200 ms (the
         * peer's delayed ACK); only in Open state.
         */
        V3("3.x"),
        /**
         * Linux 6.x: 2·SRTT + 2 ms; with one segment out 2·SRTT + 200 ms; 1 s before any RTT sample; in Open or
         * CWR; a probe of new data that is acknowledged ends the probe without a reduction.
         */
        V6("6.x");

        private final String word;

        TlpPto(String word) {
            this.word = word;
        }

        public String word() {
            return word;
        }
    }

    public static final String RECOVERY = "net.ipv4.tcp_recovery";
    public static final String FACK = "net.ipv4.tcp_fack";
    public static final String EARLY_RETRANS = "net.ipv4.tcp_early_retrans";
    public static final String FRTO = "net.ipv4.tcp_frto";
    public static final String DSACK_UNDO = "usnet.tcp.dsack_undo";
    public static final String TLP_PTO = "usnet.tcp.tlp_pto";

    /** Every knob's key, in record order. */
    public static final List<String> KEYS = List.of(RECOVERY, FACK, EARLY_RETRANS, FRTO, DSACK_UNDO, TLP_PTO);

    public LossSwitches {
        if (recovery < 0 || recovery > 7) {
            throw new IllegalArgumentException(RECOVERY + ": " + recovery + " is out of range 0..7");
        }
        if (earlyRetrans < 0 || earlyRetrans > 4) {
            throw new IllegalArgumentException(EARLY_RETRANS + ": " + earlyRetrans + " is out of range 0..4");
        }
        if (frto < 0 || frto > 2) {
            throw new IllegalArgumentException(FRTO + ": " + frto + " is out of range 0..2");
        }
        if (tlpPto == null) {
            throw new IllegalArgumentException(TLP_PTO + " must be set");
        }
    }

    /**
     * What a kernel version does. The 3.18–4.3 presets keep what usnet modelled of them before RACK existed
     * here: FACK, early retransmit with tail loss probes, no F-RTO and no D-SACK undo (those kernels had both;
     * turn them on with {@code net.ipv4.tcp_frto=2}, {@code usnet.tcp.dsack_undo=1}). 6.x is today's kernel.
     */
    public static LossSwitches forPreset(KernelPreset k) {
        return switch (k) {
            case V3_18, V3_19, V4_0, V4_3 -> new LossSwitches(0, true, 3, 0, false, TlpPto.V3);
            case V6 -> new LossSwitches(RACK_LOSS_DETECTION, false, 3, 2, true, TlpPto.V6);
        };
    }

    /** RACK decides what is lost (tcp_is_rack). */
    public boolean rack() {
        return (recovery & RACK_LOSS_DETECTION) != 0;
    }

    /** Tail loss probes are sent (tcp_early_retrans 3 or 4). */
    public boolean tlp() {
        return earlyRetrans == 3 || earlyRetrans == 4;
    }

    /** Early retransmit (RFC 5827) runs: tcp_early_retrans 1 to 3, and no RACK, which replaced it. */
    public boolean earlyRetransmit() {
        return earlyRetrans >= 1 && earlyRetrans <= 3 && !rack();
    }

    /**
     * A copy with the knob {@code key} set from its text; {@code this} is unchanged.
     *
     * @throws IllegalArgumentException for an unknown key or a value it does not take, naming both
     */
    public LossSwitches withOverride(String key, String value) {
        String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        return switch (key) {
            case RECOVERY -> new LossSwitches(parseInt(key, v, value, 0, 7), fack, earlyRetrans, frto, dsackUndo, tlpPto);
            case FACK -> new LossSwitches(recovery, parseInt(key, v, value, 0, 1) != 0, earlyRetrans, frto, dsackUndo, tlpPto);
            case EARLY_RETRANS -> new LossSwitches(recovery, fack, parseInt(key, v, value, 0, 4), frto, dsackUndo, tlpPto);
            case FRTO -> new LossSwitches(recovery, fack, earlyRetrans, parseInt(key, v, value, 0, 2), dsackUndo, tlpPto);
            case DSACK_UNDO -> new LossSwitches(recovery, fack, earlyRetrans, frto, bool(key, v, value), tlpPto);
            case TLP_PTO -> new LossSwitches(recovery, fack, earlyRetrans, frto, dsackUndo, parsePto(v, value));
            default -> throw new IllegalArgumentException("'" + key + "' is not a loss-recovery knob; they are "
                    + String.join(", ", KEYS));
        };
    }

    /** The knob text of {@code key}, as {@link #withOverride} takes it. */
    public String get(String key) {
        return switch (key) {
            case RECOVERY -> Integer.toString(recovery);
            case FACK -> fack ? "1" : "0";
            case EARLY_RETRANS -> Integer.toString(earlyRetrans);
            case FRTO -> Integer.toString(frto);
            case DSACK_UNDO -> dsackUndo ? "1" : "0";
            case TLP_PTO -> tlpPto.word();
            default -> throw new IllegalArgumentException("'" + key + "' is not a loss-recovery knob; they are "
                    + String.join(", ", KEYS));
        };
    }

    private static int parseInt(String key, String v, String raw, int min, int max) {
        int n;
        try {
            n = Integer.decode(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + ": '" + raw + "' is not an integer (expected " + min + ".." + max + ")");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(key + ": " + n + " is out of range " + min + ".." + max);
        }
        return n;
    }

    private static boolean bool(String key, String v, String raw) {
        return switch (v) {
            case "1", "true", "on", "yes" -> true;
            case "0", "false", "off", "no" -> false;
            default -> throw new IllegalArgumentException(key + ": '" + raw + "' is not a boolean (1, 0, true, false)");
        };
    }

    private static TlpPto parsePto(String v, String raw) {
        for (TlpPto p : TlpPto.values()) {
            if (p.word.equals(v)) {
                return p;
            }
        }
        throw new IllegalArgumentException(TLP_PTO + ": '" + raw + "' is not one of 3.x, 6.x");
    }
}
