package dev.usnet.core.knob;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A knob whose value is a word or a list (net.ipv4.tcp_congestion_control, net.ipv4.tcp_rmem): parsed once
 * when set into a typed value {@code T}, which the hot path reads as it is.
 */
public final class ValueKnob<T> extends Knob {
    private static final AtomicInteger SLOTS = new AtomicInteger();
    private static volatile ValueKnob<?>[] bySlot = new ValueKnob<?>[0];

    private final T def;
    private final Function<String, T> parser;
    private final Function<T, String> formatter;
    final int slot;

    private ValueKnob(String key, String def, Function<String, T> parser, Function<T, String> formatter, String doc,
            Applies applies) {
        super(key, doc, applies);
        this.parser = parser;
        this.formatter = formatter;
        this.def = parser.apply(def);
        this.slot = SLOTS.getAndIncrement();
        synchronized (ValueKnob.class) {
            ValueKnob<?>[] a = java.util.Arrays.copyOf(bySlot, Math.max(bySlot.length, slot + 1));
            a[slot] = this;
            bySlot = a;
        }
    }

    /**
     * Declares (and registers) a knob: {@code parser} turns text into the value or throws
     * IllegalArgumentException saying what it takes (the key is put in front of its message); {@code formatter}
     * gives the normalized text back.
     */
    public static <T> ValueKnob<T> define(String key, String def, Function<String, T> parser,
            Function<T, String> formatter, String doc) {
        return define(key, def, parser, formatter, Applies.LIVE, doc);
    }

    /** As {@link #define(String, String, Function, Function, String)}, taking effect when {@code applies} says. */
    public static <T> ValueKnob<T> define(String key, String def, Function<String, T> parser,
            Function<T, String> formatter, Applies applies, String doc) {
        return Knobs.register(new ValueKnob<>(key, def, parser, formatter, doc, applies));
    }

    /** A knob whose text is its value: {@code validator} returns the normalized text or throws. */
    public static ValueKnob<String> defineWord(String key, String def, Function<String, String> validator,
            Applies applies, String doc) {
        return define(key, def, validator, Function.identity(), applies, doc);
    }

    public T defaultValue() {
        return def;
    }

    /** Parses {@code text}; a bad value throws IllegalArgumentException that names the key. */
    public T parse(String text) {
        try {
            return parser.apply(text.trim());
        } catch (IllegalArgumentException e) {
            String m = e.getMessage() == null ? "bad value '" + text + "'" : e.getMessage();
            throw new IllegalArgumentException(m.startsWith(key() + ":") ? m : key() + ": " + m, e);
        }
    }

    public String format(T value) {
        return formatter.apply(value);
    }

    @Override
    public String normalize(String text) {
        return format(parse(text));
    }

    @Override
    public String defaultText() {
        return format(def);
    }

    static Object[] defaults() {
        ValueKnob<?>[] a = bySlot;
        Object[] d = new Object[a.length];
        for (int i = 0; i < a.length; i++) {
            d[i] = a[i] == null ? null : a[i].def;
        }
        return d;
    }
}
