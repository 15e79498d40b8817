package dev.usnet.core.knob;

/**
 * A setting one subsystem declares for every namespace (an entry of Linux's ctl_table, registered with
 * register_net_sysctl): its name, what it means, and how its text is checked. Each declared knob owns a slot in
 * every namespace's {@link Knobs}, so the packet path reads its value as a typed field, never by name.
 */
public abstract sealed class Knob permits LongKnob, ValueKnob {
    /** When a change takes effect, as Linux applies each sysctl. */
    public enum Applies {
        /** The next packet or timer reads it. */
        LIVE("live"),
        /** Read when a socket is created, connects or listens: existing connections keep what they started with. */
        NEW_SOCKETS("new-sockets"),
        /** Read when the namespace or device is built: a running namespace cannot change it. */
        BUILD("build");

        private final String word;

        Applies(String word) {
            this.word = word;
        }

        /** The word {@code usnet ctl sysctl} shows. */
        public String word() {
            return word;
        }
    }

    private final String key;
    private final String doc;
    private final Applies applies;

    Knob(String key, String doc, Applies applies) {
        if (key == null || key.isBlank() || !key.equals(key.trim())) {
            throw new IllegalArgumentException("knob name '" + key + "' must be a non-empty word");
        }
        this.key = key;
        this.doc = doc;
        this.applies = applies;
    }

    /** The sysctl name, e.g. {@code net.ipv4.tcp_sack}. */
    public final String key() {
        return key;
    }

    /** One line saying what the knob does (the Linux concept it mirrors, and its unit). */
    public final String doc() {
        return doc;
    }

    /** When a change takes effect in a running namespace. */
    public final Applies applies() {
        return applies;
    }

    /** Whether a running namespace can change it (at once, or for what is created after). */
    public final boolean live() {
        return applies != Applies.BUILD;
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
