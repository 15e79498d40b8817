package dev.usnet.tools.packetdrill.usnet;

import dev.usnet.core.knob.Knobs;
import dev.usnet.tools.packetdrill.TargetException;
import java.util.Map;
import java.util.Set;

/**
 * {@code sysctl -w key=value} in the usnet namespace. A key usnet declares as a knob (usnet's TCP knobs carry
 * Linux's sysctl names: net.ipv4.tcp_sack, tcp_rmem, ...) is set on the namespace; a few Linux sysctls map onto
 * usnet knobs or target settings; a Linux sysctl usnet does not model is accepted only with a value that asks for
 * nothing usnet does not do — the kernel's default here (usnet's differences from it are then the general ones in
 * docs/packetdrill-usnet-target.md) or the value that describes what usnet does anyway — and fails naming the key
 * otherwise. A key neither knows fails naming it.
 */
final class Sysctls {
    /** A Linux sysctl without a usnet knob: the values accepted, and why those. */
    private record Fixed(Set<String> accepted, String why) {}

    private static final String DEFAULT_ONLY = "usnet does not model it; only the kernel's default is accepted";

    private static final Map<String, Fixed> FIXED = Map.ofEntries(
            Map.entry("net.ipv4.tcp_ecn", new Fixed(Set.of("0", "2"),
                    "usnet never negotiates ECN: 0 is what it does, 2 (the default) differs only for a peer asking for ECN")),
            Map.entry("net.ipv4.tcp_tso_win_divisor", new Fixed(Set.of("3"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_min_tso_segs", new Fixed(Set.of("2"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_pacing_ss_ratio", new Fixed(Set.of("200"), DEFAULT_ONLY + " (usnet does not pace)")),
            Map.entry("net.ipv4.tcp_pacing_ca_ratio", new Fixed(Set.of("120"), DEFAULT_ONLY + " (usnet does not pace)")),
            Map.entry("net.ipv4.tcp_notsent_lowat", new Fixed(Set.of("4294967295", "-1"),
                    "usnet has no not-sent low-water mark (unlimited, the default)")),
            Map.entry("net.ipv4.tcp_autocorking", new Fixed(Set.of("0", "1"),
                    "usnet does not autocork (0); 1 is the default and a TUN's instant transmit completion rarely corks")),
            Map.entry("net.ipv4.tcp_no_metrics_save", new Fixed(Set.of("0", "1"),
                    "usnet keeps no TCP metrics (1); 0 is the default")),
            Map.entry("net.ipv4.tcp_mtu_probing", new Fixed(Set.of("0"), "usnet does no MTU probing (0, the default)")),
            Map.entry("net.ipv4.tcp_base_mss", new Fixed(Set.of("1024"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_abort_on_overflow", new Fixed(Set.of("0"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_rfc1337", new Fixed(Set.of("0"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_tw_reuse", new Fixed(Set.of("2"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_thin_linear_timeouts", new Fixed(Set.of("0"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_min_rtt_wlen", new Fixed(Set.of("300"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_workaround_signed_windows", new Fixed(Set.of("0"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_challenge_ack_limit", new Fixed(Set.of("2147483647"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_invalid_ratelimit", new Fixed(Set.of("500"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_retries1", new Fixed(Set.of("3"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_orphan_retries", new Fixed(Set.of("0"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_comp_sack_nr", new Fixed(Set.of("0", "44"),
                    "usnet does not compress SACKs (0); 44 is the default")),
            Map.entry("net.ipv4.tcp_comp_sack_delay_ns", new Fixed(Set.of("1000000"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_shrink_window", new Fixed(Set.of("0"), "usnet never shrinks the window (0, the default)")),
            Map.entry("net.ipv4.tcp_app_win", new Fixed(Set.of("31"), "usnet keeps nothing back for the application (31)")),
            Map.entry("net.ipv4.tcp_pingpong_thresh", new Fixed(Set.of("1"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_backlog_ack_defer", new Fixed(Set.of("1"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_rto_max_ms", new Fixed(Set.of("120000"), "usnet's RTO ceiling is 120 s (the default)")),
            Map.entry("net.ipv4.tcp_tso_rtt_log", new Fixed(Set.of("9"), DEFAULT_ONLY)),
            Map.entry("net.ipv4.tcp_plb_enabled", new Fixed(Set.of("0"), "usnet has no protective load balancing (0)")),
            Map.entry("net.ipv4.tcp_probe_threshold", new Fixed(Set.of("8"), DEFAULT_ONLY)));

    /**
     * Sysctls for features that act only when a script uses them explicitly — a TCP Fast Open option in a SYN, an
     * MPTCP socket — which usnet lacks: any value is accepted, and such a script fails where it uses the feature
     * (the SYN-ACK without the option, socket() refusing IPPROTO_MPTCP), not silently.
     */
    private static final Map<String, String> FEATURE_SWITCHES = Map.of(
            "net.ipv4.tcp_fastopen", "usnet has no TCP Fast Open",
            "net.ipv4.tcp_fastopen_key", "usnet has no TCP Fast Open",
            "net.mptcp.enabled", "usnet has no MPTCP");

    private final Knobs knobs;
    private final SocketOptions.Limits limits;

    Sysctls(Knobs knobs, SocketOptions.Limits limits) {
        this.knobs = knobs;
        this.limits = limits;
    }

    /** {@code net/ipv4/tcp_sack} and {@code /proc/sys/net/ipv4/tcp_sack} are {@code net.ipv4.tcp_sack}. */
    static String normalize(String key) {
        String k = key.trim();
        if (k.startsWith("/proc/sys/")) {
            k = k.substring("/proc/sys/".length());
        }
        return k.indexOf('/') >= 0 ? k.replace('/', '.') : k;
    }

    void set(String rawKey, String rawValue) {
        String key = normalize(rawKey);
        String value = rawValue.trim().replaceAll("\\s+", " ");
        switch (key) {
            case "net.core.rmem_max" -> {
                limits.rmemMax = parseBytes(key, value);
                return;
            }
            case "net.core.wmem_max" -> {
                limits.wmemMax = parseBytes(key, value);
                return;
            }
            case "net.ipv4.tcp_rto_min_us" -> {
                long us = parseBytes(key, value);
                if (us % 1000 != 0) {
                    throw new TargetException("sysctl " + key + "=" + value + ": usnet's RTO floor "
                            + "(usnet.tcp.rto_min_ms) counts whole milliseconds");
                }
                setKnob("usnet.tcp.rto_min_ms", Long.toString(us / 1000), key);
                return;
            }
            default -> { }
        }
        if (FEATURE_SWITCHES.containsKey(key)) {
            return;
        }
        if (isKnob(key)) {
            setKnob(key, value, key);
            return;
        }
        Fixed f = FIXED.get(key);
        if (f != null) {
            String v = canonicalNumber(value);
            if (!f.accepted().contains(v)) {
                throw new TargetException("sysctl " + key + "=" + value + " is not supported by the usnet target: " + f.why()
                        + " (accepted: " + String.join(", ", new java.util.TreeSet<>(f.accepted())) + ")");
            }
            return;
        }
        throw new TargetException("unknown sysctl " + key + " (neither a usnet knob nor a Linux sysctl the usnet target "
                + "knows how to treat)");
    }

    /**
     * A key usnet's knobs answer for: a declared one, or one under a declared per-device family, whose own
     * message then names what is wrong with it (the nearest knob of that family, the device's spelling).
     */
    private static boolean isKnob(String key) {
        return Knobs.declared(key) != null || Knobs.known().contains(key) || Knobs.isPerDevice(key);
    }

    private void setKnob(String key, String value, String asked) {
        try {
            knobs.set(key, value);
        } catch (IllegalArgumentException e) {
            throw new TargetException("sysctl " + asked + "=" + value + ": " + e.getMessage(), e);
        }
    }

    private static long parseBytes(String key, String value) {
        try {
            long n = Long.decode(value);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new TargetException("sysctl " + key + "=" + value + ": not a non-negative integer");
        }
    }

    /** 0x10 and 16 are the same value to the kernel's integer parser. */
    private static String canonicalNumber(String v) {
        try {
            return Long.toString(Long.decode(v));
        } catch (NumberFormatException e) {
            return v;
        }
    }
}
