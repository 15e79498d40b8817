package dev.usnet.core.ipv6;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.neigh.NeighTable;
import dev.usnet.core.netns.NetCoreSysctl;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Fib6;
import dev.usnet.core.route.Route6Listener;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;

/**
 * The IPv6 family of one namespace (what inet6_init and the per-namespace ipv6 setup bring up), built on the
 * namespace's {@link Netns} view beside IPv4: its routes ({@link Fib6}), addresses ({@link Addrconf}), neighbour
 * discovery and the table it fills, input, forwarding, output, reassembly, ICMPv6 and UDP without sockets;
 * registered in the namespace's protocol table for IPv6 frames. The parts find each other through this object. A
 * device takes part only while its {@code disable_ipv6} is 0.
 */
public final class Ipv6 {
    private final Netns netns;
    private final Fib6 fib = new Fib6();
    private final Addrconf addrconf = new Addrconf(fib);
    private final Ndisc ndisc;
    private final NeighTable neigh;
    private final Icmpv6 icmp;
    private final Mld mld;
    private final Udp6 udp;
    private final Ip6ExtHeaders exthdr;
    private final Ip6Output output;
    private final Ip6Forward forward;
    private final Ip6Defrag defrag;
    private final Ip6Input input;
    private final Inet6Peers redirectPeers = new Inet6Peers();

    /** Brings IPv6 up in {@code netns}: builds its parts and registers for IPv6 frames there. */
    public Ipv6(Netns netns) {
        this.netns = netns;
        this.ndisc = new Ndisc(this);
        this.neigh = new NeighTable(netns, ndisc, Ipv6Sysctl.NEIGH);
        this.icmp = new Icmpv6(this);
        this.mld = new Mld(this);
        this.exthdr = new Ip6ExtHeaders(this);
        this.output = new Ip6Output(this);
        this.forward = new Ip6Forward(this);
        this.defrag = new Ip6Defrag(this);
        this.input = new Ip6Input(this);
        input.registerProtocol(Ipv6Packet.NEXTHDR_ICMPV6, icmp);
        this.udp = new Udp6(this);
        input.registerProtocol(Ipv6Packet.NEXTHDR_UDP, udp);
        netns.registerPacketType(EthernetFrame.ETH_P_IPV6, input::rcv);
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

    /** The neighbour table neighbour discovery fills (nd_tbl). */
    public NeighTable neigh() {
        return neigh;
    }

    public Ndisc ndisc() {
        return ndisc;
    }

    public Udp6 udp() {
        return udp;
    }

    public Icmpv6 icmp() {
        return icmp;
    }

    /** The MLD listener of every device. */
    public Mld mld() {
        return mld;
    }

    public Ip6ExtHeaders exthdr() {
        return exthdr;
    }

    public Ip6Input input() {
        return input;
    }

    public Ip6Output output() {
        return output;
    }

    public Ip6Forward forward() {
        return forward;
    }

    public Ip6Defrag defrag() {
        return defrag;
    }

    /**
     * {@code ip -6 addr add ADDR/LEN dev DEV [nodad]}: the address, tentative with duplicate detection started when
     * the device runs it and the address did not say nodad, else usable at once.
     */
    public Inet6Ifaddr addAddress(Device dev, Ipv6Addr address, int prefixLen, boolean nodad) {
        Inet6Ifaddr ifa = addrconf.add(dev, address, prefixLen, Inet6Ifaddr.Origin.STATIC, nodad, runsDad(dev));
        if (dev.isUp() && dev.hasCarrier()) {
            ndisc.startDad(ifa);
            ndisc.addressReady(ifa);
            // The address's solicited-node group is joined: reported.
            mld.sync(dev);
        }
        return ifa;
    }

    /** ip6_forward's redirect limit: at most about one redirect a second per destination, bursts of six. */
    boolean redirectAllowed(long dstHi, long dstLo) {
        int hz = (int) netns.knobs().get(NetCoreSysctl.HZ);
        return redirectPeers.allow(dstHi, dstLo, netns.jiffies(), hz, hz);
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
            mld.linkDown(dev);
            return;
        }
        boolean loopback = dev instanceof Loopback;
        Inet6Ifaddr ll = null;
        if (loopback || netns.conf(dev).get(Ipv6Sysctl.ADDR_GEN_MODE) == 0) {
            ll = addrconf.linkUp(dev, loopback, dev.mac(), runsDad(dev));
        }
        if (ll != null) {
            // Usable at once without duplicate detection: what follows its success happens now.
            ndisc.addressReady(ll);
        } else if (!loopback) {
            ndisc.linkUpAgain(dev);
        }
        // Every tentative address of the device, the new link-local one and those added while it was down, starts
        // duplicate detection now that the link can carry it.
        for (Inet6Ifaddr a : addrconf.list(dev)) {
            ndisc.startDad(a);
        }
        // ipv6_mc_up: the groups the device is in are reported.
        mld.sync(dev);
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
        neigh.flushDevice(dev);
        mld.forget(dev);
    }

    /** The namespace closes: pending neighbour, reassembly and detection work is cancelled and freed. */
    public void close() {
        neigh.close();
        defrag.close();
        ndisc.close();
        mld.close();
    }
}
