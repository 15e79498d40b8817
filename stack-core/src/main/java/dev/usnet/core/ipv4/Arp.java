package dev.usnet.core.ipv4;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.neigh.NeighOps;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.ArpPacket;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.core.neigh.NeighSysctl;
import java.util.HashMap;
import java.util.Map;

/**
 * ARP (RFC 826) as Linux's arp_process: answers requests for our addresses, learns requesters, takes replies
 * into the neighbour table, and answers for other hosts when proxy ARP is on and the route to the target
 * leaves by another interface. Proxied answers to broadcast requests wait a random part of proxy_delay,
 * as in Linux.
 */
public final class Arp implements NeighOps {
    private final Netns ns;
    private final Ipv4 inet;
    private final ArpPacket arp = new ArpPacket();
    // The newest packet waiting for a neighbour, read for the source address of a solicitation.
    private final Ipv4Packet queuedIp = new Ipv4Packet();
    // Proxied requests waiting out their delay (proxy_queue), by their timer: made by the first one.
    private Map<Timeout, Packet> proxyPending;

    public Arp(Ipv4 inet) {
        this.inet = inet;
        this.ns = inet.netns();
    }

    /** arp_rcv + arp_process. Owns {@code p}. */
    public void rcv(Packet p) {
        process(p, false);
    }

    private void process(Packet p, boolean locallyEnqueued) {
        Device dev = p.dev();
        int off = p.network();
        DropReason bad = arp.check(p.buf(), off, p.start() + p.length() - off);
        if (bad != null) {
            ns.drop(p, bad);
            return;
        }
        if (p.pktType() == Packet.PACKET_OTHERHOST) {
            ns.drop(p, DropReason.OTHERHOST);
            return;
        }
        int op = arp.op();
        long sha = arp.sha();
        int sip = arp.spa();
        int tip = arp.tpa();
        ns.mib().inc(op == ArpPacket.OP_REQUEST ? Mib.ArpInRequests : Mib.ArpInReplies);
        if (Ipv4Addr.isMulticast(tip) || Ipv4Addr.isLoopback(tip) || Ipv4Addr.isMulticast(sip)) {
            ns.drop(p, DropReason.ARP_MALFORMED);
            return;
        }
        DevConf conf = ns.conf(dev);
        // Duplicate address detection probe: answer to 0.0.0.0 when the target is ours.
        if (sip == 0) {
            if (op == ArpPacket.OP_REQUEST && inet.devinet().isLocal(tip) && !ignore(conf, dev, tip)) {
                send(dev, ArpPacket.OP_REPLY, sha, tip, sha, sip);
            }
            p.release();
            return;
        }
        if (op == ArpPacket.OP_REQUEST) {
            if (inet.devinet().isLocal(tip)) {
                if (ignore(conf, dev, tip)) {
                    p.release();
                    return;
                }
                // Answered only when the requester's entry could be made: a full table answers nothing, so that
                // host can never reach us. Linux consumes the request and says so only in dmesg ("neighbour table
                // overflow") and the table_fulls column of /proc/net/stat/arp_cache; usnet has no kernel log, so
                // the request is counted as dropped and the run's drop table names the cause and its knob.
                if (inet.neigh().eventNs(dev, sip, sha) == null) {
                    ns.drop(p, DropReason.NEIGH_CREATEFAIL);
                    return;
                }
                send(dev, ArpPacket.OP_REPLY, sha, tip, sha, sip);
                p.release();
                return;
            }
            if (conf.get(Ipv4Sysctl.FORWARDING) != 0 && proxies(conf, dev, tip)) {
                inet.neigh().eventNs(dev, sip, sha);
                if (locallyEnqueued || p.pktType() == Packet.PACKET_HOST || conf.get(NeighSysctl.PROXY_DELAY) == 0) {
                    ns.mib().inc(Mib.ArpProxyReplies);
                    send(dev, ArpPacket.OP_REPLY, sha, tip, sha, sip);
                    p.release();
                } else {
                    enqueueProxy(p, conf);
                }
                return;
            }
        }
        // Not a request we answer: learn from it if we already know the sender (no unsolicited creation).
        Neighbour n = inet.neigh().lookup(dev, sip);
        if (n == null && conf.get(Ipv4Sysctl.ARP_ACCEPT) != 0 && op == ArpPacket.OP_REPLY) {
            n = inet.neigh().eventNs(dev, sip, sha);
        }
        if (n != null) {
            boolean reply = op == ArpPacket.OP_REPLY && p.pktType() == Packet.PACKET_HOST;
            boolean garp = sip == tip;
            // locktime (1 s): a different address is taken only when the entry is older than that.
            boolean override = garp || ns.now() - n.updated() > 1_000_000_000L;
            inet.neigh().update(n, sha, reply, override);
        }
        // A request for someone else is consumed, not dropped: Linux's arp_process frees it with consume_skb, so
        // every broadcast ARP on a segment would otherwise show up as a drop in each namespace that hears it.
        p.release();
    }

    /** arp_ignore modes 1 and 2: only answer for addresses on the receiving interface. */
    private boolean ignore(DevConf conf, Device dev, int tip) {
        int mode = (int) ns.knobs().effective(Ipv4Sysctl.ARP_IGNORE, conf);
        if (mode == 0) {
            return false;
        }
        var ifa = inet.devinet().local(tip);
        return ifa == null || ifa.dev() != dev;
    }

    /** arp_fwd_proxy: proxy_arp on, and the route to the target is unicast out of another interface. */
    private boolean proxies(DevConf conf, Device dev, int tip) {
        if (ns.knobs().effective(Ipv4Sysctl.PROXY_ARP, conf) == 0) {
            return false;
        }
        Route r = inet.routes().lookup(tip);
        return r != null && r.type() == RouteType.UNICAST && r.dev() != dev;
    }

    private void enqueueProxy(Packet p, DevConf conf) {
        if (proxyPending == null) {
            proxyPending = new HashMap<>();
        }
        if (proxyPending.size() >= conf.get(NeighSysctl.PROXY_QLEN)) {
            ns.drop(p, DropReason.ARP_PROXY_QUEUE_FULL);
            return;
        }
        // pneigh_enqueue: a uniformly random delay below proxy_delay (in 1/100 s).
        long delay = ns.randomBelow(conf.get(NeighSysctl.PROXY_DELAY) * 10_000_000L);
        Timeout[] self = new Timeout[1];
        self[0] = ns.schedule(() -> {
            proxyPending.remove(self[0]);
            process(p, true);
        }, delay);
        proxyPending.put(self[0], p);
    }

    public void close() {
        if (proxyPending == null) {
            return;
        }
        for (Map.Entry<Timeout, Packet> e : proxyPending.entrySet()) {
            e.getKey().cancel();
            e.getValue().release();
        }
        proxyPending.clear();
    }

    // ---- the neighbour table's operations for IPv4 (arp_hh_ops / arp_generic_ops, arp_constructor) ----

    /** IPv4 addresses: 4 bytes, in the low 32 bits of the table's {@code lo}. */
    @Override
    public int keyLength() {
        return 4;
    }

    @Override
    public int ethertype() {
        return EthernetFrame.ETH_P_IP;
    }

    /** arp_constructor: broadcast and multicast next hops are NOARP, mapped without asking. */
    @Override
    public long mapWithoutAsking(Device dev, long hi, long lo) {
        int nextHop = (int) lo;
        if (Ipv4Addr.isMulticast(nextHop)) {
            return 0x0100_5e00_0000L | (nextHop & 0x7f_ffff);
        }
        if (inet.devinet().isBroadcastOn(dev, nextHop)) {
            return MacAddr.BROADCAST;
        }
        return RESOLVE;
    }

    /**
     * arp_solicit: a who-has for the entry's address, from the source of the packet waiting for it when that is
     * ours and arp_announce allows it, else from the address the device would choose.
     */
    @Override
    public void solicit(Neighbour n, boolean unicast, Packet lastQueued) {
        Device dev = n.dev();
        DevConf c = ns.conf(dev);
        int saddr = 0;
        if (lastQueued != null) {
            int s = queuedIp.wrap(lastQueued.buf(), lastQueued.start() + EthernetFrame.HEADER_LEN).src();
            if (inet.devinet().isLocal(s) && (int) ns.knobs().effective(Ipv4Sysctl.ARP_ANNOUNCE, c) < 2) {
                saddr = s;
            }
        }
        if (saddr == 0) {
            saddr = inet.devinet().selectSource(dev, n.ip());
        }
        sendRequest(dev, saddr, n.ip(), unicast ? n.mac() : 0L);
    }

    /** arp_error_report: a packet that waited for a neighbour never resolved gets ICMP host unreachable. */
    @Override
    public void reportUnreachable(Packet p) {
        inet.icmp().sendHostUnreachableForQueued(p);
    }

    /** Sends a who-has for {@code tip} from {@code sip}; broadcast unless {@code knownMac} is given (a probe). */
    public void sendRequest(Device dev, int sip, int tip, long knownMac) {
        ns.mib().inc(Mib.ArpOutRequests);
        long ethDst = knownMac != 0 ? knownMac : MacAddr.BROADCAST;
        // arp_solicit passes no target hardware address: the body's is zero even when the frame goes unicast.
        Packet p = frame(dev, ArpPacket.OP_REQUEST, ethDst, sip, 0L, tip);
        dev.transmit(p);
    }

    /** arp_send_dst: one ARP frame out of {@code dev} with our MAC as sender. */
    private void send(Device dev, int op, long ethDst, int sip, long tha, int tip) {
        if (op == ArpPacket.OP_REPLY) {
            ns.mib().inc(Mib.ArpOutReplies);
        }
        dev.transmit(frame(dev, op, ethDst, sip, tha, tip));
    }

    private static Packet frame(Device dev, int op, long ethDst, int sip, long tha, int tip) {
        Packet p = Packet.allocate(Buffers.HEADROOM, EthernetFrame.HEADER_LEN + ArpPacket.LEN);
        var b = p.buf();
        int s = p.start();
        b.writerIndex(s + EthernetFrame.HEADER_LEN + ArpPacket.LEN);
        EthernetFrame.write(b, s, ethDst, dev.mac(), EthernetFrame.ETH_P_ARP);
        ArpPacket.write(b, s + EthernetFrame.HEADER_LEN, op, dev.mac(), sip, tha, tip);
        p.setNetwork(s + EthernetFrame.HEADER_LEN);
        return p;
    }
}
