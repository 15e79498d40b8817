package dev.usnet.core.bridge;

import dev.usnet.core.buf.CowPolicy;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.Ipv4;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHooks;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;

/**
 * br_netfilter for IPv4 in one namespace: with {@code net.bridge.bridge-nf-call-iptables} on, frames its bridges
 * carry between ports pass the IPv4 netfilter hooks of the namespace as if the bridge device were a router
 * interface. A frame a port receives passes prerouting with the bridge as its input device (the port is kept on
 * the packet as its physindev); each copy the bridge forwards to a port passes forward (the bridge in and out) and
 * postrouting (the bridge out). What goes up to the bridge device's own stack or comes down from it takes the
 * ordinary IPv4 path, whose input, forward, output and postrouting hooks run there; its prerouting hooks are not
 * run a second time for a frame the bridge already showed them to.
 *
 * <p>Prerouting may change the destination address (destination NAT, or the reply of a source NAT). The frame is
 * then routed from the bridge device: when the route leads back out of the bridge itself, its destination MAC
 * becomes the new next hop's (once the neighbour layer knows it) and it is bridged on by that ("bridged DNAT");
 * otherwise the frame is addressed to the bridge's own MAC and goes up to IPv4 input, which delivers, forwards or
 * refuses it.
 *
 * <p>The bridge calls in only for untagged IPv4 frames whose header it validated; the hooks cost one length test
 * each while nothing is registered at them, and nothing here allocates per frame. Runs on the namespace's thread.
 */
public final class BrNetfilter {
    private final Ipv4 ipv4;
    private final NfHooks hooks;

    public BrNetfilter(Ipv4 ipv4) {
        this.ipv4 = ipv4;
        this.hooks = ipv4.netfilter().hooks();
    }

    /**
     * br_nf_pre_routing and its finish: {@code p}, untagged IPv4 with a valid header that {@code br} received on
     * the port {@code p.dev()}, passes the IPv4 prerouting hooks with the bridge as input device. Returns the
     * frame to bridge on (the same or a replacement, its destination MAC changed when its destination address
     * was), or null when it was dropped (counted) or taken.
     */
    Packet preRouting(Bridge br, Packet p) {
        Device port = p.dev();
        if (!hooks.active(NfHook.PRE_ROUTING)) {
            return p;
        }
        int l3 = setHeaders(p);
        int daddr = p.buf().getInt(l3 + 16);
        // During the hooks the packet is the bridge device's, as for a router interface (REDIRECT reads it).
        p.setDev(br);
        p = hooks.run(NfHook.PRE_ROUTING, p, br, null);
        if (p == null) {
            return null;
        }
        p.setDev(port);
        p.setNfBridgePhysIn(port.ifindex());
        Netns s = br.stack();
        if (p.network() - p.start() != EthernetFrame.HEADER_LEN) {
            // A hook replaced the frame by one without its Ethernet header in front: nothing to bridge.
            s.drop(p, DropReason.NETFILTER_DROP);
            return null;
        }
        int newDaddr = p.buf().getInt(p.network() + 16);
        if (newDaddr == daddr) {
            return p;
        }
        return destinationChanged(br, p, s, newDaddr);
    }

    /**
     * The destination address changed at prerouting: route the frame from the bridge device (ip_route_input).
     * When the route leads back out of the bridge, the frame is bridged to the new next hop; otherwise (a local
     * address, a route through another device, no route, forwarding off) it is addressed to the bridge and goes up,
     * where IPv4 delivers, forwards, or refuses it with its usual errors and counters, as Linux's input route does.
     */
    private Packet destinationChanged(Bridge br, Packet p, Netns s, int daddr) {
        long newMac = br.mac();
        if (!Ipv4Addr.isLimitedBroadcast(daddr) && !Ipv4Addr.isMulticast(daddr) && !ipv4.devinet().isLocal(daddr)
                && !ipv4.devinet().isBroadcast(daddr) && s.conf(br).get(Ipv4Sysctl.FORWARDING) != 0) {
            Route rt = ipv4.routes().lookup(daddr);
            if (rt != null && rt.type() == RouteType.UNICAST && rt.dev() == br) {
                // Bridged DNAT: the next hop is on this bridge, and the frame is bridged to it, keeping its source
                // MAC. With the next hop's address confirmed (NUD_CONNECTED) that is done here; otherwise the
                // neighbour layer resolves it (or sends at once from a stale entry), and hands the frame to the
                // bridge device, which puts the source back and bridges it on (resumeBridgedDnat).
                int nextHop = rt.nextHop(daddr);
                Neighbour n = ipv4.neigh().lookup(br, nextHop);
                if (n == null || !n.state().connected()) {
                    makeHeaderWritable(p, s);
                    p.setNfBridgeDnatSrc(MacAddr.get(p.buf(), p.start() + 6));
                    ipv4.neigh().output(br, nextHop, p);
                    return null;
                }
                newMac = n.mac();
            }
        }
        makeHeaderWritable(p, s);
        writeDst(p, newMac);
        return p;
    }

    /**
     * br_nf_pre_routing_finish_bridge_slow: a bridged-DNAT frame the neighbour layer sent to {@code br} once its
     * next hop was known (its destination MAC now the next hop's, its source the bridge's) gets its own source MAC
     * back. Returns the port it came in by, from which the bridge forwards it on, or null when that port is gone
     * (the frame dropped and counted).
     */
    BridgePort resumeBridgedDnat(Bridge br, Packet p) {
        long src = p.nfBridgeDnatSrc();
        p.setNfBridgeDnatSrc(0);
        Netns s = br.stack();
        Device in = s.device(p.nfBridgePhysIn());
        BridgePort port = in == null ? null : br.port(in);
        if (port == null || !port.forwarding()) {
            s.drop(p, DropReason.BRIDGE_NO_PORT);
            return null;
        }
        MacAddr.set(p.buf(), p.start() + 6, src);
        p.setDev(in);
        return port;
    }

    private static void makeHeaderWritable(Packet p, Netns s) {
        if (p.isShared()) {
            p.makeWritable(EthernetFrame.HEADER_LEN, CowPolicy.HEAD_COPY, s.cow());
        }
    }

    /**
     * br_nf_forward_ip and br_nf_post_routing for one copy of a frame that passed {@link #preRouting} and leaves
     * {@code br} by the port {@code out}: the IPv4 forward hooks (the bridge in and out), then postrouting (the
     * bridge out). Returns the frame to transmit, or null when it was dropped (counted) or taken.
     */
    Packet forward(Bridge br, Packet p, BridgePort out) {
        boolean fwd = hooks.active(NfHook.FORWARD);
        boolean post = hooks.active(NfHook.POST_ROUTING);
        if (!fwd && !post) {
            return p;
        }
        Device port = p.dev();
        int physIn = p.nfBridgePhysIn();
        setHeaders(p);
        p.setDev(br);
        if (fwd) {
            p = hooks.run(NfHook.FORWARD, p, br, br);
            if (p == null) {
                return null;
            }
        }
        if (post) {
            p = hooks.run(NfHook.POST_ROUTING, p, null, br);
            if (p == null) {
                return null;
            }
        }
        p.setDev(port);
        p.setNfBridgePhysIn(physIn);
        if (p.network() - p.start() != EthernetFrame.HEADER_LEN) {
            br.stack().drop(p, DropReason.NETFILTER_DROP);
            return null;
        }
        return p;
    }

    /** The IPv4 path's view of a bridged frame: network header after the Ethernet header, transport after IP's. */
    private static int setHeaders(Packet p) {
        int l3 = p.start() + EthernetFrame.HEADER_LEN;
        p.setNetwork(l3);
        p.setTransport(l3 + (p.buf().getUnsignedByte(l3) & 0x0f) * 4);
        return l3;
    }

    private static void writeDst(Packet p, long mac) {
        MacAddr.set(p.buf(), p.start(), mac);
    }
}
