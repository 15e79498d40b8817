package dev.usnet.core.knob;

import java.util.concurrent.atomic.AtomicInteger;

/** An integer knob with a range (proc_dointvec_minmax): read on the hot path as a long without parsing. */
public final class LongKnob extends Knob {
    private static final AtomicInteger SLOTS = new AtomicInteger();
    private static volatile LongKnob[] bySlot = new LongKnob[0];

    private final long def;
    private final long min;
    private final long max;
    private final Effect effect;
    final int slot;

    /** What setting a knob changes besides its own value (Linux's proc handler side effects). */
    public interface Effect {
        void apply(Knobs knobs, long value);
    }

    private LongKnob(String key, long def, long min, long max, String doc, Applies applies, Effect effect) {
        super(key, doc, applies);
        if (def < min || def > max || min > max) {
            throw new IllegalArgumentException(key + ": default " + def + " outside " + min + ".." + max);
        }
        this.def = def;
        this.min = min;
        this.max = max;
        this.effect = effect;
        this.slot = SLOTS.getAndIncrement();
        synchronized (LongKnob.class) {
            LongKnob[] a = java.util.Arrays.copyOf(bySlot, Math.max(bySlot.length, slot + 1));
            a[slot] = this;
            bySlot = a;
        }
    }

    /** Declares (and registers) a knob that takes effect as soon as it is set. */
    public static LongKnob define(String key, long def, long min, long max, String doc) {
        return define(key, def, min, max, Applies.LIVE, doc);
    }

    /** Declares (and registers) a knob that takes effect when {@code applies} says. */
    public static LongKnob define(String key, long def, long min, long max, Applies applies, String doc) {
        return Knobs.register(new LongKnob(key, def, min, max, doc, applies, null));
    }

    /**
     * Declares (and registers) a live knob whose setting also changes others: {@code effect} runs after every
     * successful set, in the namespace set ({@code net.ipv4.ip_forward} sets every device's forwarding).
     */
    public static LongKnob define(String key, long def, long min, long max, String doc, Effect effect) {
        return Knobs.register(new LongKnob(key, def, min, max, doc, Applies.LIVE, effect));
    }

    /** Declares (and registers) a knob read only when a namespace or device is built. */
    public static LongKnob defineAtBuild(String key, long def, long min, long max, String doc) {
        return define(key, def, min, max, Applies.BUILD, doc);
    }

    Effect effect() {
        return effect;
    }

    public long defaultValue() {
        return def;
    }

    public long min() {
        return min;
    }

    public long max() {
        return max;
    }

    /** Parses and range-checks {@code text} (decimal, or 0x hexadecimal). */
    public long parse(String text) {
        return parseInRange(key(), text, min, max);
    }

    /** An integer sysctl's text checked against its range; the message names {@code key} and what it takes. */
    static long parseInRange(String key, String text, long min, long max) {
        long n;
        try {
            n = Long.decode(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + ": '" + text + "' is not an integer (expected " + min + ".." + max + ")");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(key + ": " + n + " is out of range " + min + ".." + max);
        }
        return n;
    }

    void check(long n) {
        if (n < min || n > max) {
            throw new IllegalArgumentException(key() + ": " + n + " is out of range " + min + ".." + max);
        }
    }

    @Override
    public String normalize(String text) {
        return Long.toString(parse(text));
    }

    @Override
    public String defaultText() {
        return Long.toString(def);
    }

    /** The defaults of every long knob declared so far, indexed by slot: what a namespace starts from. */
    static long[] defaults() {
        LongKnob[] a = bySlot;
        long[] d = new long[a.length];
        for (int i = 0; i < a.length; i++) {
            d[i] = a[i] == null ? 0 : a[i].def;
        }
        return d;
    }
}
