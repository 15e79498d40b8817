package dev.usnet.tools.results;

/**
 * The address family of an app's destination as the results name it, {@code ip -j}'s words: {@code inet} for an IPv4
 * address ({@code 198.18.0.2}, {@code 198.18.0.2:5001}), {@code inet6} for an IPv6 one ({@code 2001:db8::2},
 * {@code fe80::2%eth0}, {@code [2001:db8::2]:5001}); none for a destination that is no address (a sink's
 * {@code :port}, which both families reach, or an MPI job's hosts).
 */
public final class AppFamily {
    private AppFamily() {}

    /** {@code inet}, {@code inet6}, or null when {@code to} names no address. */
    public static String of(String to) {
        if (to == null || to.isEmpty() || to.startsWith(":")) {
            return null;
        }
        if (to.startsWith("[") || to.indexOf(':') != to.lastIndexOf(':')) {
            // Brackets, or two colons or more: only an IPv6 address has them (an IPv4 one has at most ":port").
            return "inet6";
        }
        int colon = to.indexOf(':');
        String addr = colon < 0 ? to : to.substring(0, colon);
        return addr.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}") ? "inet" : null;
    }
}
