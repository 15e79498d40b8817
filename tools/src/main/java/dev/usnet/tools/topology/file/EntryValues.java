package dev.usnet.tools.topology.file;

import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tools.topology.file.YamlMap;

/**
 * The values app entries share: a {@code start:} offset, times and sizes in link emulation's units, IPv4 addresses
 * and log files. Each returns null when the value is absent or bad; a bad one is reported with its key's line.
 */
public final class EntryValues {
    /** {@code trace: false} (or {@code bursts: false}): read, and off. */
    public static final TopologySpec.AppLog OFF = new TopologySpec.AppLog(null, null);

    private EntryValues() {}

    /**
     * An app's {@code start:}: a time (a unit required, {@code 0} alone allowed) after the run's start; 0 when
     * absent; null when bad (reported with the key's line).
     */
    public static Long start(YamlMap m) {
        return m.has("start") ? time(m, "start", 0) : Long.valueOf(0);
    }

    /**
     * An app's log key ({@code trace:}, {@code bursts:}): {@code true} keeps it in memory, {@code false} is off
     * ({@link #OFF}), anything else is a CSV file relative to the output directory. Null when absent or bad
     * (reported).
     */
    public static TopologySpec.AppLog appLog(YamlMap m, String key) {
        String s = m.string(key);
        if (s == null) {
            return null;
        }
        String v = s.trim();
        switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "true", "yes", "on" -> {
                return new TopologySpec.AppLog(null, m.where(key));
            }
            case "false", "no", "off" -> {
                return OFF;
            }
            default -> { }
        }
        if (v.isEmpty() || v.startsWith("/") || v.endsWith("/") || java.util.Arrays.asList(v.split("/")).contains("..")) {
            m.problems().add(m.where(key), "expected true, false or a file name relative to the output directory (like "
                    + key + ".csv), got \"" + s + "\"");
            return null;
        }
        return new TopologySpec.AppLog(v, m.where(key));
    }

    /** A size in bytes ({@code 1500}, {@code 64k}, {@code 1m}: link emulation's units) in {@code min..max}; null when absent or bad (reported). */
    public static Long size(YamlMap m, String key, long min, long max) {
        String s = m.string(key);
        if (s == null) {
            return null;
        }
        try {
            long v = NetemParams.parseSize(key, s);
            if (v < min || v > max) {
                m.problems().add(m.where(key), "expected a size of " + (v < min ? "at least " + min : "at most " + max)
                        + " bytes, got " + s.trim());
                return null;
            }
            return v;
        } catch (IllegalArgumentException e) {
            m.problems().add(m.where(key), e.getMessage());
            return null;
        }
    }

    /** A time in nanoseconds ({@code 500us}, {@code 1.5ms}, {@code 2s}: link emulation's units), at least {@code min}. */
    public static Long time(YamlMap m, String key, long min) {
        String s = m.string(key);
        if (s == null) {
            return null;
        }
        try {
            long v = NetemParams.parseTime(key, s);
            if (v < min) {
                m.problems().add(m.where(key), "expected a time above 0, got " + s.trim());
                return null;
            }
            return v;
        } catch (IllegalArgumentException e) {
            m.problems().add(m.where(key), e.getMessage());
            return null;
        }
    }

    /**
     * An IPv6 destination: the address, and for a link-local one the device it is reached through (the zone of
     * {@code fe80::1%eth0}, as ping takes it).
     */
    public record Ip6Destination(Ipv6Addr address, String dev) {
        @Override
        public String toString() {
            return dev == null ? address.toString() : address + "%" + dev;
        }
    }

    /** A required IPv4 address; null when absent or bad (reported). */
    public static Integer ip(YamlMap m, String key) {
        if (!m.require(key)) {
            return null;
        }
        String s = m.string(key);
        if (s == null) {
            return null;
        }
        if (s.indexOf(':') >= 0) {
            m.problems().add(m.where(key), "this app reaches IPv4 destinations only so far (ping and udp-send take IPv6 ones),"
                    + " got \"" + s + "\"");
            return null;
        }
        return ipv4(m, key, s);
    }

    private static Integer ipv4(YamlMap m, String key, String s) {
        try {
            return Ipv4Addr.parse(s);
        } catch (IllegalArgumentException e) {
            m.problems().add(m.where(key), "expected an IPv4 address like 198.18.0.2, got \"" + s + "\"");
            return null;
        }
    }

    /**
     * A required destination of either family: an IPv4 address (an Integer), or an IPv6 one (an
     * {@link Ip6Destination}); a link-local IPv6 address needs its device, {@code fe80::1%eth0}, and only such an
     * address takes one. Null when absent or bad (reported).
     */
    public static Object ipEitherFamily(YamlMap m, String key) {
        if (!m.require(key)) {
            return null;
        }
        String s = m.string(key);
        if (s == null) {
            return null;
        }
        if (s.indexOf(':') < 0) {
            return ipv4(m, key, s);
        }
        String text = s.trim();
        String dev = null;
        int pct = text.indexOf('%');
        if (pct >= 0) {
            dev = text.substring(pct + 1);
            text = text.substring(0, pct);
        }
        Ipv6Addr a;
        try {
            a = Ipv6Addr.parse(text);
        } catch (IllegalArgumentException e) {
            m.problems().add(m.where(key), "expected an IPv4 address like 198.18.0.2 or an IPv6 one like 2001:db8::2,"
                    + " got \"" + s + "\"");
            return null;
        }
        boolean linkLocal = Ipv6Addr.isLinkLocalUnicast(a.hi());
        if (a.isMulticast() || (a.hi() == 0 && a.lo() == 0)) {
            m.problems().add(m.where(key), "expected a unicast IPv6 address, got \"" + s + "\"");
            return null;
        }
        if (linkLocal && (dev == null || dev.isEmpty())) {
            m.problems().add(m.where(key), "a link-local destination needs its device, like \"" + text
                    + "%eth0\", got \"" + s + "\"");
            return null;
        }
        if (!linkLocal && dev != null) {
            m.problems().add(m.where(key), "only a link-local destination names a device (%" + dev + "), got \""
                    + s + "\"");
            return null;
        }
        return new Ip6Destination(a, dev);
    }
}
