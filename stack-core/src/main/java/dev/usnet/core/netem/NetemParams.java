package dev.usnet.core.netem;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The settings of a device's link emulation, usnet's userspace {@code tc qdisc ... netem} (with tbf's burst):
 * rate with an optional token-bucket burst, per-frame overhead, delay and jitter, random loss, duplication and
 * reordering, and the queue limit. Immutable; {@link #NONE} is "no emulation". Text forms (knob values, the
 * topology file) are parsed by {@link #with(String, String)} per parameter and {@link #parse(String)} for a
 * whole tc-like spec such as {@code "rate 100mbit delay 10ms 1ms loss 1% limit 500"}; {@link #format()} writes
 * the spec back, so format and parse round-trip.
 *
 * @param rateBitsPerSecond serialization rate in bits per second; 0 is unlimited (netem {@code rate})
 * @param burstBytes token-bucket depth in bytes (tbf {@code burst}); 0 is netem's pure serialization
 * @param overheadBytes bytes added to every frame's length when computing its time on the wire (netem
 *        {@code rate ... PACKETOVERHEAD}; 24 models Ethernet preamble, SFD, FCS and inter-frame gap); may be
 *        negative
 * @param delayNanos one-way delay added to every frame (netem {@code delay})
 * @param jitterNanos spread of the delay: uniform in [delay - jitter, delay + jitter], or the standard
 *        deviation of a normal distribution cut at 4 jitter; a frame's delay is never below 0
 * @param distribution how jitter is drawn
 * @param loss probability 0..1 of dropping a frame (netem {@code loss random})
 * @param duplicate probability 0..1 of sending a frame twice (netem {@code duplicate})
 * @param reorder probability 0..1 that a frame skips the delay and leaves at once (netem {@code reorder})
 * @param gap reordering considers only every frame after {@code gap - 1} delayed ones (netem {@code gap};
 *        1, the default, considers every frame)
 * @param limit frames the emulator may hold, delayed or waiting for the link (netem {@code limit}); more are
 *        tail-dropped
 * @param seed the random source's seed, or null for one derived from the namespace seed and device name
 * @param queue the order frames leave in
 */
public record NetemParams(long rateBitsPerSecond, long burstBytes, int overheadBytes, long delayNanos, long jitterNanos,
                          Distribution distribution, double loss, double duplicate, double reorder, int gap, int limit,
                          Long seed, Queue queue) {

    /** How jitter is drawn (netem {@code distribution}). */
    public enum Distribution {
        /** Uniform in [delay - jitter, delay + jitter]: netem without a distribution table. */
        UNIFORM,
        /** Normal with standard deviation jitter, cut at 4 jitter either side (netem {@code distribution normal}). */
        NORMAL
    }

    /** The order frames leave the emulator in. */
    public enum Queue {
        /**
         * First in, first out: a frame never leaves before the one sent ahead of it, so jitter does not reorder
         * (netem with a pfifo child, or a real link). Only {@link #reorder} reorders.
         */
        FIFO,
        /** By time to send, as netem's built-in tfifo: with jitter, a frame may overtake the ones sent before it. */
        TFIFO
    }

    /** netem's default {@code limit}. */
    public static final int DEFAULT_LIMIT = 1000;
    public static final long MAX_RATE = 10_000_000_000_000L;
    public static final long MAX_BURST = 0xffff_ffffL;
    public static final long MAX_DELAY_NANOS = 3_600_000_000_000L;
    public static final int MAX_LIMIT = 1 << 24;
    public static final int MIN_OVERHEAD = -1024;
    public static final int MAX_OVERHEAD = 65_535;

    /** No emulation: frames pass untouched. */
    public static final NetemParams NONE = new NetemParams(0, 0, 0, 0, 0, Distribution.UNIFORM, 0, 0, 0, 1,
            DEFAULT_LIMIT, null, Queue.FIFO);

    /** The parameter names, as knob suffixes ({@code usnet.netem.<dev>.<param>}) and topology keys, in spec order. */
    public static final List<String> PARAMS = List.of("rate", "burst", "overhead", "delay", "jitter", "distribution",
            "loss", "duplicate", "reorder", "gap", "limit", "seed", "queue");

    public NetemParams {
        check("rate", rateBitsPerSecond, 0, MAX_RATE);
        check("burst", burstBytes, 0, MAX_BURST);
        check("overhead", overheadBytes, MIN_OVERHEAD, MAX_OVERHEAD);
        check("delay", delayNanos, 0, MAX_DELAY_NANOS);
        check("jitter", jitterNanos, 0, MAX_DELAY_NANOS);
        checkProbability("loss", loss);
        checkProbability("duplicate", duplicate);
        checkProbability("reorder", reorder);
        check("gap", gap, 1, Integer.MAX_VALUE);
        check("limit", limit, 0, MAX_LIMIT);
        if (distribution == null || queue == null) {
            throw new IllegalArgumentException("distribution and queue must not be null");
        }
    }

    private static void check(String name, long v, long min, long max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + ": " + v + " is out of range " + min + ".." + max);
        }
    }

    private static void checkProbability(String name, double p) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException(name + ": " + p + " is not a probability 0..1");
        }
    }

    /** True when these settings change nothing (frames pass straight through). */
    public boolean isNone() {
        return equals(NONE);
    }

    // ---- withers (the typed API) ----

    public NetemParams withRate(long bitsPerSecond) {
        return new NetemParams(bitsPerSecond, burstBytes, overheadBytes, delayNanos, jitterNanos, distribution, loss, duplicate,
                reorder, gap, limit, seed, queue);
    }

    public NetemParams withBurst(long bytes) {
        return new NetemParams(rateBitsPerSecond, bytes, overheadBytes, delayNanos, jitterNanos, distribution, loss, duplicate,
                reorder, gap, limit, seed, queue);
    }

    public NetemParams withOverhead(int bytes) {
        return new NetemParams(rateBitsPerSecond, burstBytes, bytes, delayNanos, jitterNanos, distribution, loss, duplicate,
                reorder, gap, limit, seed, queue);
    }

    public NetemParams withDelay(long nanos) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, nanos, jitterNanos, distribution, loss, duplicate,
                reorder, gap, limit, seed, queue);
    }

    public NetemParams withJitter(long nanos) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, delayNanos, nanos, distribution, loss, duplicate,
                reorder, gap, limit, seed, queue);
    }

    public NetemParams withDistribution(Distribution d) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, delayNanos, jitterNanos, d, loss, duplicate,
                reorder, gap, limit, seed, queue);
    }

    public NetemParams withLoss(double p) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, delayNanos, jitterNanos, distribution, p, duplicate,
                reorder, gap, limit, seed, queue);
    }

    public NetemParams withDuplicate(double p) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, delayNanos, jitterNanos, distribution, loss, p,
                reorder, gap, limit, seed, queue);
    }

    public NetemParams withReorder(double p) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, delayNanos, jitterNanos, distribution, loss, duplicate,
                p, gap, limit, seed, queue);
    }

    public NetemParams withGap(int g) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, delayNanos, jitterNanos, distribution, loss, duplicate,
                reorder, g, limit, seed, queue);
    }

    public NetemParams withLimit(int packets) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, delayNanos, jitterNanos, distribution, loss, duplicate,
                reorder, gap, packets, seed, queue);
    }

    /** A fixed seed, or null for the default derived from the namespace seed and the device name. */
    public NetemParams withSeed(Long s) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, delayNanos, jitterNanos, distribution, loss, duplicate,
                reorder, gap, limit, s, queue);
    }

    public NetemParams withQueue(Queue q) {
        return new NetemParams(rateBitsPerSecond, burstBytes, overheadBytes, delayNanos, jitterNanos, distribution, loss, duplicate,
                reorder, gap, limit, seed, q);
    }

    // ---- text ----

    /** These settings with one parameter set from text; throws IllegalArgumentException saying what it takes. */
    public NetemParams with(String param, String value) {
        String v = value.trim();
        return switch (param) {
            case "rate" -> withRate(parseRate(v));
            case "burst" -> withBurst(parseSize("burst", v));
            case "overhead" -> withOverhead((int) parseInt("overhead", v, MIN_OVERHEAD, MAX_OVERHEAD));
            case "delay" -> withDelay(parseTime("delay", v));
            case "jitter" -> withJitter(parseTime("jitter", v));
            case "distribution" -> withDistribution(switch (v.toLowerCase(Locale.ROOT)) {
                case "uniform" -> Distribution.UNIFORM;
                case "normal" -> Distribution.NORMAL;
                default -> throw new IllegalArgumentException("'" + v + "' is not a distribution (expected uniform or normal)");
            });
            case "loss" -> withLoss(parseProbability(v));
            case "duplicate" -> withDuplicate(parseProbability(v));
            case "reorder" -> withReorder(parseProbability(v));
            case "gap" -> withGap((int) parseInt("gap", v, 1, Integer.MAX_VALUE));
            case "limit" -> withLimit((int) parseInt("limit", v, 0, MAX_LIMIT));
            case "seed" -> withSeed(v.equalsIgnoreCase("auto") ? null : parseLong("seed", v));
            case "queue" -> withQueue(switch (v.toLowerCase(Locale.ROOT)) {
                case "fifo" -> Queue.FIFO;
                case "tfifo" -> Queue.TFIFO;
                default -> throw new IllegalArgumentException("'" + v + "' is not a queue order (expected fifo or tfifo)");
            });
            default -> throw new IllegalArgumentException("unknown link-emulation parameter '" + param + "' (known: "
                    + String.join(", ", PARAMS) + ")");
        };
    }

    /** One parameter as text, in the form {@link #with} reads back. */
    public String get(String param) {
        return switch (param) {
            case "rate" -> formatRate(rateBitsPerSecond);
            case "burst" -> Long.toString(burstBytes);
            case "overhead" -> Integer.toString(overheadBytes);
            case "delay" -> formatTime(delayNanos);
            case "jitter" -> formatTime(jitterNanos);
            case "distribution" -> distribution.name().toLowerCase(Locale.ROOT);
            case "loss" -> formatProbability(loss);
            case "duplicate" -> formatProbability(duplicate);
            case "reorder" -> formatProbability(reorder);
            case "gap" -> Integer.toString(gap);
            case "limit" -> Integer.toString(limit);
            case "seed" -> seed == null ? "auto" : Long.toString(seed);
            case "queue" -> queue.name().toLowerCase(Locale.ROOT);
            default -> throw new IllegalArgumentException("unknown link-emulation parameter '" + param + "' (known: "
                    + String.join(", ", PARAMS) + ")");
        };
    }

    /**
     * A whole spec in tc-like words, every part optional and in any order:
     * {@code rate R [burst B] [overhead N] delay D [JITTER] [jitter J] [distribution uniform|normal] loss P
     * duplicate P reorder P [gap N] limit N seed S queue fifo|tfifo}; {@code none} (or nothing) is no emulation.
     * Unlike tc, a bare probability is a fraction ({@code 0.01}); write {@code 1%} for one percent.
     */
    public static NetemParams parse(String spec) {
        String s = spec.trim();
        if (s.isEmpty() || s.equalsIgnoreCase("none") || s.equalsIgnoreCase("off")) {
            return NONE;
        }
        String[] t = s.split("\\s+");
        NetemParams p = NONE;
        Set<String> seen = new HashSet<>();
        int i = 0;
        while (i < t.length) {
            String word = t[i++].toLowerCase(Locale.ROOT);
            if (!PARAMS.contains(word)) {
                throw new IllegalArgumentException("'" + t[i - 1] + "' is not a link-emulation parameter (expected one of: "
                        + String.join(", ", PARAMS) + "; correlations are not supported)");
            }
            if (!seen.add(word)) {
                throw new IllegalArgumentException("'" + word + "' is given twice");
            }
            if (word.equals("loss") && i < t.length && t[i].equalsIgnoreCase("random")) {
                i++;
            }
            if (i >= t.length) {
                throw new IllegalArgumentException("'" + word + "' needs a value");
            }
            p = p.with(word, t[i++]);
            // tc's positional jitter: "delay 10ms 2ms".
            if (word.equals("delay") && i < t.length && !PARAMS.contains(t[i].toLowerCase(Locale.ROOT))) {
                if (!seen.add("jitter")) {
                    throw new IllegalArgumentException("'jitter' is given twice");
                }
                p = p.with("jitter", t[i++]);
            }
        }
        return p;
    }

    /** The spec in canonical words (only what differs from {@link #NONE}), or {@code none}. */
    public String format() {
        StringBuilder b = new StringBuilder();
        for (String param : PARAMS) {
            String v = get(param);
            if (!v.equals(NONE.get(param))) {
                if (!b.isEmpty()) {
                    b.append(' ');
                }
                b.append(param).append(' ').append(v);
            }
        }
        return b.isEmpty() ? "none" : b.toString();
    }

    @Override
    public String toString() {
        return format();
    }

    // ---- units ----

    private record Unit(String name, BigDecimal factor) {}

    private static Unit u(String name, long factor) {
        return new Unit(name, BigDecimal.valueOf(factor));
    }

    // Units are matched whole and case-insensitively, as tc reads them.
    private static final List<Unit> RATE_UNITS = List.of(
            u("tibit", 1L << 40), u("gibit", 1L << 30), u("mibit", 1L << 20), u("kibit", 1L << 10),
            u("tibps", 8L << 40), u("gibps", 8L << 30), u("mibps", 8L << 20), u("kibps", 8L << 10),
            u("tbit", 1_000_000_000_000L), u("gbit", 1_000_000_000L), u("mbit", 1_000_000L), u("kbit", 1_000L), u("bit", 1),
            u("tbps", 8_000_000_000_000L), u("gbps", 8_000_000_000L), u("mbps", 8_000_000L), u("kbps", 8_000L), u("bps", 8));

    private static final List<Unit> TIME_UNITS = List.of(
            u("usecs", 1_000), u("usec", 1_000), u("msecs", 1_000_000), u("msec", 1_000_000), u("nsec", 1), u("secs", 1_000_000_000L),
            u("sec", 1_000_000_000L), u("ns", 1), u("us", 1_000), u("µs", 1_000), u("ms", 1_000_000), u("s", 1_000_000_000L));

    private static final List<Unit> SIZE_UNITS = List.of(
            u("kbit", 128), u("mbit", 128L << 10), u("gbit", 128L << 20), u("bit", -8),
            u("kib", 1L << 10), u("mib", 1L << 20), u("gib", 1L << 30),
            u("kb", 1L << 10), u("mb", 1L << 20), u("gb", 1L << 30), u("k", 1L << 10), u("m", 1L << 20), u("g", 1L << 30), u("b", 1));

    private static final String RATE_FORMS = "bits per second like 1000000, 100kbit, 100mbit, 10gbit (also kibit.., and bytes"
            + " per second with bps, kbps, mbps, gbps); 0 is unlimited";
    private static final String TIME_FORMS = "a time with its unit like 100ns, 50us, 1.5ms, 2s (ns, us, ms, s); or 0";
    private static final String SIZE_FORMS = "bytes like 15000, 64k, 1m (k, m, g are 1024-based; kbit, mbit in bits)";

    /** Splits "12.5mbit" into number and unit; null when the text does not start with a number. */
    private static String[] split(String v) {
        int i = 0;
        while (i < v.length() && (Character.isDigit(v.charAt(i)) || v.charAt(i) == '.')) {
            i++;
        }
        if (i == 0) {
            return null;
        }
        return new String[] {v.substring(0, i), v.substring(i).toLowerCase(Locale.ROOT)};
    }

    private static BigDecimal scaled(String v, List<Unit> units, String what, String forms, boolean bareAllowed) {
        String[] parts = split(v);
        if (parts == null) {
            throw new IllegalArgumentException("'" + v + "' is not " + what + " (expected " + forms + ")");
        }
        BigDecimal n;
        try {
            n = new BigDecimal(parts[0]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + v + "' is not " + what + " (expected " + forms + ")");
        }
        if (parts[1].isEmpty()) {
            if (!bareAllowed && n.signum() != 0) {
                throw new IllegalArgumentException("'" + v + "' needs a unit (expected " + forms + ")");
            }
            return n;
        }
        for (Unit unit : units) {
            if (unit.name.equals(parts[1])) {
                return unit.factor.signum() < 0 ? n.divide(unit.factor.negate(), 3, RoundingMode.HALF_UP) : n.multiply(unit.factor);
            }
        }
        throw new IllegalArgumentException("'" + v + "': unknown unit '" + parts[1] + "' (expected " + forms + ")");
    }

    private static long toLong(BigDecimal d, String v, String what, long max) {
        BigDecimal r = d.setScale(0, RoundingMode.HALF_UP);
        if (r.compareTo(BigDecimal.valueOf(max)) > 0) {
            throw new IllegalArgumentException("'" + v + "' is more than the largest " + what + " (" + max + ")");
        }
        return r.longValueExact();
    }

    /** A rate in bits per second: {@code 10gbit}, {@code 100mbit}, {@code 1000000} (bits/s), {@code 125kbps} (bytes/s). */
    public static long parseRate(String v) {
        return toLong(scaled(v.trim(), RATE_UNITS, "a rate", RATE_FORMS, true), v, "rate in bits per second", MAX_RATE);
    }

    /** A time in nanoseconds: {@code 50us}, {@code 1.5ms}, {@code 2s}; a bare number must be 0. */
    public static long parseTime(String what, String v) {
        return toLong(scaled(v.trim(), TIME_UNITS, "a time", TIME_FORMS, false), v, what + " in nanoseconds", MAX_DELAY_NANOS);
    }

    /** A size in bytes: {@code 15000}, {@code 64k}, {@code 1m}, {@code 32kbit}. */
    public static long parseSize(String what, String v) {
        return toLong(scaled(v.trim(), SIZE_UNITS, "a size", SIZE_FORMS, true), v, what + " in bytes", MAX_BURST);
    }

    /** {@code 1%}, {@code 0.5%} or a fraction {@code 0.01}; a bare number above 1 is refused (write N%). */
    public static double parseProbability(String v) {
        String s = v.trim();
        try {
            if (s.endsWith("%")) {
                BigDecimal d = new BigDecimal(s.substring(0, s.length() - 1).trim());
                if (d.signum() < 0 || d.compareTo(BigDecimal.valueOf(100)) > 0) {
                    throw new IllegalArgumentException("'" + v + "' is not a probability (expected 0%..100%)");
                }
                return d.divide(BigDecimal.valueOf(100)).doubleValue();
            }
            BigDecimal d = new BigDecimal(s);
            if (d.signum() < 0) {
                throw new IllegalArgumentException("'" + v + "' is not a probability (expected a percentage like 1% or a fraction 0..1)");
            }
            if (d.compareTo(BigDecimal.ONE) > 0) {
                throw new IllegalArgumentException("'" + v + "' is not a probability: a bare number is a fraction 0..1"
                        + " (did you mean " + s + "%?)");
            }
            return d.doubleValue();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + v + "' is not a probability (expected a percentage like 1% or a fraction like 0.01)");
        }
    }

    private static long parseInt(String what, String v, long min, long max) {
        long n = parseLong(what, v);
        if (n < min || n > max) {
            throw new IllegalArgumentException(n + " is out of range " + min + ".." + max);
        }
        return n;
    }

    private static long parseLong(String what, String v) {
        try {
            return Long.decode(v.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + v + "' is not an integer (" + what + ")");
        }
    }

    /** The largest SI bit unit that states the rate exactly: {@code 100mbit}; 0 for unlimited. */
    public static String formatRate(long bits) {
        if (bits == 0) {
            return "0";
        }
        String[] names = {"tbit", "gbit", "mbit", "kbit"};
        long[] f = {1_000_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L};
        for (int i = 0; i < names.length; i++) {
            if (bits % f[i] == 0) {
                return bits / f[i] + names[i];
            }
        }
        return bits + "bit";
    }

    /** The largest unit that states the time exactly: {@code 10ms}, {@code 1500us}; {@code 0}. */
    public static String formatTime(long nanos) {
        if (nanos == 0) {
            return "0";
        }
        if (nanos % 1_000_000_000L == 0) {
            return nanos / 1_000_000_000L + "s";
        }
        if (nanos % 1_000_000L == 0) {
            return nanos / 1_000_000L + "ms";
        }
        if (nanos % 1_000L == 0) {
            return nanos / 1_000L + "us";
        }
        return nanos + "ns";
    }

    /** A probability as a percentage with the digits it needs: {@code 1%}, {@code 0.05%}. */
    public static String formatProbability(double p) {
        if (p == 0) {
            return "0%";
        }
        BigDecimal pct = new BigDecimal(Double.toString(p)).multiply(BigDecimal.valueOf(100)).stripTrailingZeros();
        return pct.toPlainString() + "%";
    }
}
