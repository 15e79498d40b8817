package dev.usnet.tools.packetdrill;

import java.util.LinkedHashMap;
import java.util.List;

/**
 * A system-call argument or out-parameter after the runner has evaluated the script's expression: symbols
 * ({@code SOL_SOCKET}, {@code O_NONBLOCK}, {@code POLLIN|POLLOUT}, errno names) are already Linux numbers, so a
 * target never sees a name. {@link Ellipsis} ({@code ...}) means "anything / don't care / let the target choose".
 */
public sealed interface Value {

    /** An integer, a resolved symbol or an or-ed set of flags. */
    record Int(long value) implements Value {
        @Override
        public String toString() {
            return Long.toString(value);
        }
    }

    /** A quoted string, e.g. the congestion control name of {@code TCP_CONGESTION}. */
    record Str(String value) implements Value {
        @Override
        public String toString() {
            return '"' + value + '"';
        }
    }

    /** {@code ...}: an argument the script does not spell out (a buffer, an address, a length). */
    record Ellipsis() implements Value {
        @Override
        public String toString() {
            return "...";
        }
    }

    /**
     * {@code [a, b, ...]}: a pointer to an array, or to one value ({@code [1]} for an int option value,
     * {@code [4]} for a socklen_t, {@code [{fd=3, events=POLLIN}]} for pollfds).
     */
    record Array(List<Value> elements) implements Value {
        @Override
        public String toString() {
            return elements.toString();
        }
    }

    /**
     * {@code {name=value, ...}}: a C struct, fields in script order ({@code l_onoff}, {@code fd}, {@code events},
     * {@code revents}, {@code iov_base}, {@code iov_len}, {@code msg_iov}, {@code msg_flags}, ...). A field written
     * {@code msg_iov(1)=...} in the script is stored under {@code msg_iov}.
     */
    record Struct(LinkedHashMap<String, Value> fields) implements Value {
        @Override
        public String toString() {
            StringBuilder b = new StringBuilder("{");
            fields.forEach((k, v) -> b.append(b.length() > 1 ? ", " : "").append(k).append('=').append(v));
            return b.append('}').toString();
        }
    }

    Ellipsis ELLIPSIS = new Ellipsis();

    static Int of(long v) {
        return new Int(v);
    }
}
