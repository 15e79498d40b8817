package dev.usnet.core.knob;

/**
 * A setting one subsystem declares for every namespace (an entry of Linux's ctl_table, registered with
 * register_net_sysctl): its name, what it means, and how its text is checked. Each declared knob owns a slot in
 * every namespace's {@link Knobs}, so the packet path reads its value as a typed field, never by name.
 */
public abstract sealed class Knob permits LongKnob, ValueKnob {
    private final String key;
    private final String doc;
    private final boolean live;

    Knob(String key, String doc, boolean live) {
        if (key == null || key.isBlank() || !key.equals(key.trim())) {
            throw new IllegalArgumentException("knob name '" + key + "' must be a non-empty word");
        }
        this.key = key;
        this.doc = doc;
        this.live = live;
    }

    /** The sysctl name, e.g. {@code net.ipv4.tcp_sack}. */
    public final String key() {
        return key;
    }

    /** One line saying what the knob does (the Linux concept it mirrors, and its unit). */
    public final String doc() {
        return doc;
    }

    /**
     * Whether a change takes effect in a running namespace (for what is created after it, as Linux applies a
     * sysctl): false for settings read only when a namespace is built.
     */
    public final boolean live() {
        return live;
    }

    /** Checks {@code text} and returns it normalized, or throws IllegalArgumentException naming the key. */
    public abstract String normalize(String text);

    /** The default as text. */
    public abstract String defaultText();

    @Override
    public String toString() {
        return key;
    }
}
