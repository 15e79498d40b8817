package dev.usnet.tools.packetdrill;

/** Script times: µs as packetdrill prints them, seconds with six decimals. */
final class Micros {
    private Micros() {
    }

    static String seconds(long us) {
        return String.format(java.util.Locale.ROOT, "%.6f", us / 1e6);
    }

    /** {@code "0.100"}, {@code ".1"}, {@code "2"}: seconds as written, to µs (rounded). */
    static long parseSeconds(String text) {
        return Math.round(Double.parseDouble(text) * 1e6);
    }
}
