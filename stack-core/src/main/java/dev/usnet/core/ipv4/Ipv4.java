package dev.usnet.core.ipv4;

import dev.usnet.core.device.Device;
import dev.usnet.core.neigh.NeighListener;
import dev.usnet.core.netfilter.Netfilter;
import dev.usnet.core.netfilter.NfHooks;
import dev.usnet.core.neigh.NeighTable;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.RouteListener;
import dev.usnet.core.route.Fib4;
import dev.usnet.core.wire.EthernetFrame;

/**
 * The IPv4 family of one namespace (what inet_init and the per-namespace ipv4 setup bring up): its addresses
 * (Devinet), routes, ARP and the neighbour table ARP resolves for, input, forwarding, output, defragmentation,
 * ICMP and UDP. Built on the namespace's {@link Netns} view and registered in its protocol table for IPv4 and ARP
 * frames; the parts find each other through this object.
 */
public final class Ipv4 {
    private final Netns netns;
    private final Fib4 routes = new Fib4();
    private final Devinet devinet = new Devinet(routes);
    private final Arp arp;
    private final NeighTable neigh;
    private final Icmp icmp;
    private final IpOutput ipOutput;
    private final IpForward ipForward;
    private final IpDefrag ipDefrag;
    private final Udp udp;
    private final IpInput ipInput;
    private final Netfilter netfilter;

    /** Brings IPv4 up in {@code netns}: builds its parts and registers for IPv4 and ARP frames there. */
    public Ipv4(Netns netns) {
        this.netns = netns;
        this.netfilter = new Netfilter(new NfHooks(netns));
        // The order the parts were always made in: IpOutput draws its first IP ID from the namespace's seeded
        // random source, so nothing before it may draw.
        this.arp = new Arp(this);
        this.neigh = new NeighTable(netns, arp);
        this.icmp = new Icmp(this);
        this.ipOutput = new IpOutput(this);
        this.ipForward = new IpForward(this);
        this.ipDefrag = new IpDefrag(this);
        this.udp = new Udp(this);
        this.ipInput = new IpInput(this);
        netns.registerPacketType(EthernetFrame.ETH_P_IP, ipInput::rcv);
        netns.registerPacketType(EthernetFrame.ETH_P_ARP, arp::rcv);
    }

    /** The namespace this family runs in. */
    public Netns netns() {
        return netns;
    }

    /** IPv4's netfilter hooks, connection tracking and NAT in this namespace. */
    public Netfilter netfilter() {
        return netfilter;
    }

    public Fib4 routes() {
        return routes;
    }

    public Devinet devinet() {
        return devinet;
    }

    /** The neighbour table ARP fills (arp_tbl). */
    public NeighTable neigh() {
        return neigh;
    }

    public Arp arp() {
        return arp;
    }

    public IpInput ipInput() {
        return ipInput;
    }

    public IpForward ipForward() {
        return ipForward;
    }

    public IpOutput ipOutput() {
        return ipOutput;
    }

    public IpDefrag ipDefrag() {
        return ipDefrag;
    }

    public Icmp icmp() {
        return icmp;
    }

    public Udp udp() {
        return udp;
    }

    /** Route and neighbour changes go to these ({@code ip monitor}); null stops telling. */
    public void setListeners(RouteListener routeListener, NeighListener neighListener) {
        routes.setListener(routeListener);
        neigh.setListener(neighListener);
    }

    /**
     * {@code dev} leaves the namespace (NETDEV_UNREGISTER): its addresses, the routes through it and its
     * neighbours go, as Linux flushes them.
     */
    public void deviceUnregistered(Device dev) {
        devinet.flush(dev);
        routes.removeDevice(dev);
        neigh.flushDevice(dev);
    }

    /** The namespace closes: pending neighbour, reassembly and proxy-ARP work is cancelled and freed. */
    public void close() {
        neigh.close();
        ipDefrag.close();
        arp.close();
    }
}
