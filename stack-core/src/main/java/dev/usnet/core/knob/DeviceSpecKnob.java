package dev.usnet.core.knob;

import java.util.List;

/**
 * A per-device setting whose value is a whole specification of several parameters rather than one number, named
 * {@code <family><dev>} for the whole spec and {@code <family><dev>.<param>} for one of its parameters (link
 * emulation: {@code usnet.netem.eth0} = "delay 10ms loss 1%", {@code usnet.netem.eth0.delay} = "10ms"). Like a
 * qdisc it belongs to one device: there is no {@code all} or {@code default}, and a device created later starts
 * without it. The declaring package supplies the value type and its text forms ({@link Syntax}); {@link Knobs}
 * recognises the family by this declaration alone, keeps each device's value in its {@link DevConf} by this knob's
 * slot, and the packet path reads it with {@link #get(DevConf)}, an array element.
 *
 * @param <T> the parsed spec, immutable
 */
public final class DeviceSpecKnob<T> {
    private static final java.util.concurrent.atomic.AtomicInteger SLOTS = new java.util.concurrent.atomic.AtomicInteger();

    /** The value type's text forms and parameters, supplied by the package that reads the value. */
    public interface Syntax<T> {
        /** The value that means "not set": a device holding it stores nothing. */
        T none();

        /** Whether {@code value} asks for nothing, so the device stores no value at all. */
        boolean isNone(T value);

        /** A whole spec from text; throws IllegalArgumentException saying what it takes. */
        T parse(String text);

        /** The whole spec as text, in the form {@link #parse} reads back. */
        String format(T value);

        /** The parameter names, in the order the spec writes them. */
        List<String> params();

        /** One parameter of {@code value} as text, in the form {@link #with} reads back. */
        String get(T value, String param);

        /** {@code value} with one parameter set from text; throws IllegalArgumentException saying what it takes. */
        T with(T value, String param, String text);
    }

    private final String family;
    private final String what;
    private final String parameter;
    private final Syntax<T> syntax;
    final int slot;

    private DeviceSpecKnob(String family, String what, String parameter, Syntax<T> syntax) {
        if (!family.endsWith(".") || what.isBlank() || parameter.isBlank()) {
            throw new IllegalArgumentException("per-device spec '" + family + "<dev>' needs a family ending in '.'"
                    + " and a description");
        }
        for (String p : syntax.params()) {
            if (p.isEmpty() || p.contains(".") || p.chars().allMatch(Character::isDigit)) {
                throw new IllegalArgumentException(family + "<dev>." + p + ": a parameter is a word without dots");
            }
        }
        this.family = family;
        this.what = what;
        this.parameter = parameter;
        this.syntax = syntax;
        this.slot = SLOTS.getAndIncrement();
    }

    /**
     * Declares (and registers) a per-device spec family: {@code family} is the prefix before the device name
     * ({@code usnet.netem.}), {@code what} names the setting in messages ({@code link emulation}) and
     * {@code parameter} one of its parameters ({@code link-emulation parameter}).
     */
    public static <T> DeviceSpecKnob<T> define(String family, String what, String parameter, Syntax<T> syntax) {
        return Knobs.register(new DeviceSpecKnob<>(family, what, parameter, syntax));
    }

    /** The prefix before the device name, e.g. {@code usnet.netem.}. */
    public String family() {
        return family;
    }

    /** What the setting is, as messages name it, e.g. {@code link emulation}. */
    public String what() {
        return what;
    }

    /** What one parameter is, as messages name it, e.g. {@code link-emulation parameter}. */
    public String parameter() {
        return parameter;
    }

    public Syntax<T> syntax() {
        return syntax;
    }

    /** The parameter names. */
    public List<String> params() {
        return syntax.params();
    }

    /** The whole spec's name with a {@code <dev>} placeholder, as {@link Knobs#known()} lists it. */
    public String pattern() {
        return family + "<dev>";
    }

    /** One parameter's name with a {@code <dev>} placeholder. */
    public String pattern(String param) {
        return family + "<dev>." + param;
    }

    /** The device's value, null when it has none: an array read, for the packet path. */
    public T get(DevConf c) {
        return c.get(this);
    }

    @Override
    public String toString() {
        return pattern();
    }
}
