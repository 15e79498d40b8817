package dev.usnet.tools.packetdrill;

/**
 * When a script event happens, as written: {@code 0.100} (absolute), {@code +.1} (relative to the previous event),
 * {@code 0.3~0.4} / {@code +.3~+.31} (a range), {@code *} (any time), or no time at all (a backtick command before
 * the first event or after the last). Times are µs.
 */
record EventTime(Kind kind, long startUs, long endUs) {

    enum Kind { ABSOLUTE, RELATIVE, ABSOLUTE_RANGE, RELATIVE_RANGE, ANY, NONE }

    boolean relative() {
        return kind == Kind.RELATIVE || kind == Kind.RELATIVE_RANGE;
    }

    boolean range() {
        return kind == Kind.ABSOLUTE_RANGE || kind == Kind.RELATIVE_RANGE;
    }

    @Override
    public String toString() {
        return switch (kind) {
            case ABSOLUTE -> Micros.seconds(startUs);
            case RELATIVE -> "+" + Micros.seconds(startUs);
            case ABSOLUTE_RANGE -> Micros.seconds(startUs) + "~" + Micros.seconds(endUs);
            case RELATIVE_RANGE -> "+" + Micros.seconds(startUs) + "~+" + Micros.seconds(endUs);
            case ANY -> "*";
            case NONE -> "";
        };
    }
}
