package dev.usnet.core.ipv6;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Fib6;
import dev.usnet.core.route.Route6Listener;

/**
 * The IPv6 family of one namespace (what inet6_init and the per-namespace ipv6 setup bring up), built on the
 * namespace's {@link Netns} view beside IPv4: its routes ({@link Fib6}) and addresses ({@link Addrconf}) now; the
 * parts find each other through this object. A device takes part only while its {@code disable_ipv6} is 0.
 */
public final class Ipv6 {
    private final Netns netns;
    private final Fib6 fib = new Fib6();
    private final Addrconf addrconf = new Addrconf(fib);

    /** Brings IPv6 up in {@code netns}. */
    public Ipv6(Netns netns) {
        this.netns = netns;
    }

    /** The namespace this family runs in. */
    public Netns netns() {
        return netns;
    }

    public Fib6 fib() {
        return fib;
    }

    public Addrconf addrconf() {
        return addrconf;
    }

    /** Whether {@code dev} takes part in IPv6 ({@code net.ipv6.conf.<dev>.disable_ipv6} is 0). */
    public boolean enabled(Device dev) {
        return netns.conf(dev).get(Ipv6Sysctl.DISABLE_IPV6) == 0;
    }

    /**
     * A device's state or carrier changed (NETDEV_UP, NETDEV_CHANGE, as addrconf_notify hears them): a device up,
     * with carrier and IPv6 on, gets its link-local address ({@code ::1} for the loopback) as {@code addr_gen_mode}
     * says, tentative when duplicate address detection applies.
     */
    public void linkChanged(Device dev) {
        if (!dev.isUp() || !dev.hasCarrier() || !enabled(dev)) {
            return;
        }
        boolean loopback = dev instanceof Loopback;
        if (!loopback && netns.conf(dev).get(Ipv6Sysctl.ADDR_GEN_MODE) != 0) {
            return;
        }
        addrconf.linkUp(dev, loopback, dev.mac(), runsDad(dev));
    }

    /** Whether addresses added to {@code dev} start tentative: {@code accept_dad} and {@code dad_transmits} both on. */
    public boolean runsDad(Device dev) {
        return !(dev instanceof Loopback) && netns.conf(dev).get(Ipv6Sysctl.ACCEPT_DAD) > 0
                && netns.conf(dev).get(Ipv6Sysctl.DAD_TRANSMITS) > 0;
    }

    /** Route changes go to {@code l} ({@code ip -6 monitor route}); null stops telling. */
    public void setListener(Route6Listener l) {
        fib.setListener(l);
    }

    /** {@code dev} leaves the namespace (NETDEV_UNREGISTER): its addresses and the routes through it go. */
    public void deviceUnregistered(Device dev) {
        addrconf.flush(dev);
    }
}
