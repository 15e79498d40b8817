package dev.usnet.tools.iproute;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv6.Ipv6Sysctl;
import dev.usnet.core.stack.NetStack;

/**
 * Turning IPv6 on in a usnet namespace, which starts with it off ({@code disable_ipv6} 1) so that IPv4-only runs
 * send nothing IPv6: {@code net.ipv6.conf.all.disable_ipv6} and {@code default.disable_ipv6} to 0, as a Linux
 * namespace has them, and every device that is up then gets what Linux gives it when IPv6 goes on (its link-local
 * address; {@code ::1} on lo).
 */
public final class Ipv6On {
    private Ipv6On() {}

    /** The knob key of {@code disable_ipv6} for {@code dev} ({@code all}, {@code default} or a device's name). */
    public static String disableKey(String dev) {
        return Ipv6Sysctl.DISABLE_IPV6.family() + dev + "." + Ipv6Sysctl.DISABLE_IPV6.name();
    }

    /** Whether nothing has given the namespace IPv6 yet: {@code all.disable_ipv6} is 1 and no device has an address. */
    public static boolean neverGiven(NetStack s) {
        return "1".equals(s.knobs().get(disableKey("all"))) && s.ipv6().addrconf().list().isEmpty();
    }

    /** Sets {@code all} and {@code default} {@code disable_ipv6} to 0 (those of {@code keep} excepted) and tells the devices. */
    public static void turnOn(NetStack s, java.util.Set<String> keep) {
        for (String dev : java.util.List.of("all", "default")) {
            if (!keep.contains(disableKey(dev))) {
                s.knobs().set(disableKey(dev), "0");
            }
        }
        linksChanged(s);
    }

    /**
     * Tells IPv6 of every device that is up, as Linux does when {@code disable_ipv6} goes to 0 on one: a device that
     * came up while IPv6 was off (lo comes up with its namespace) gets its link-local address now.
     */
    public static void linksChanged(NetStack s) {
        for (Device d : s.devices()) {
            if (d.isUp() && s.ipv6().enabled(d)) {
                s.ipv6().linkChanged(d);
            }
        }
    }
}
