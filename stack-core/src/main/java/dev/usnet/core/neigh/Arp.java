package dev.usnet.core.neigh;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.ArpPacket;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import java.util.HashMap;
import java.util.Map;

/**
 * ARP (RFC 826) as Linux's arp_process: answers requests for our addresses, learns requesters, takes replies
 * into the neighbour table, and answers for other hosts when proxy ARP is on and the route to the target
 * leaves by another interface. Proxied answers to broadcast requests wait a random part of proxy_delay,
 * as in Linux.
 */
public final class Arp {
    private final NetStack stack;
    private final ArpPacket arp = new ArpPacket();
    // Proxied requests waiting out their delay (proxy_queue), by their timer: made by the first one.
    private Map<Timeout, Packet> proxyPending;

    public Arp(NetStack stack) {
        this.stack = stack;
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
            stack.drop(p, bad);
            return;
        }
        if (p.pktType() == Packet.PACKET_OTHERHOST) {
            stack.drop(p, DropReason.OTHERHOST);
            return;
        }
        int op = arp.op();
        long sha = arp.sha();
        int sip = arp.spa();
        int tip = arp.tpa();
        stack.mib().inc(op == ArpPacket.OP_REQUEST ? Mib.ArpInRequests : Mib.ArpInReplies);
        if (Ipv4Addr.isMulticast(tip) || Ipv4Addr.isLoopback(tip) || Ipv4Addr.isMulticast(sip)) {
            stack.drop(p, DropReason.ARP_MALFORMED);
            return;
        }
        DevConf conf = stack.conf(dev);
        // Duplicate address detection probe: answer to 0.0.0.0 when the target is ours.
        if (sip == 0) {
            if (op == ArpPacket.OP_REQUEST && stack.devinet().isLocal(tip) && !ignore(conf, dev, tip)) {
                send(dev, ArpPacket.OP_REPLY, sha, tip, sha, sip);
            }
            p.release();
            return;
        }
        if (op == ArpPacket.OP_REQUEST) {
            if (stack.devinet().isLocal(tip)) {
                if (ignore(conf, dev, tip)) {
                    p.release();
                    return;
                }
                // Answered only when the requester's entry could be made: a full table answers nothing, so that
                // host can never reach us. Linux consumes the request and says so only in dmesg ("neighbour table
                // overflow") and the table_fulls column of /proc/net/stat/arp_cache; usnet has no kernel log, so
                // the request is counted as dropped and the run's drop table names the cause and its knob.
                if (stack.neigh().eventNs(dev, sip, sha) == null) {
                    stack.drop(p, DropReason.NEIGH_CREATEFAIL);
                    return;
                }
                send(dev, ArpPacket.OP_REPLY, sha, tip, sha, sip);
                p.release();
                return;
            }
            if (conf.get(Ipv4Sysctl.FORWARDING) != 0 && proxies(conf, dev, tip)) {
                stack.neigh().eventNs(dev, sip, sha);
                if (locallyEnqueued || p.pktType() == Packet.PACKET_HOST || conf.get(NeighSysctl.PROXY_DELAY) == 0) {
                    stack.mib().inc(Mib.ArpProxyReplies);
                    send(dev, ArpPacket.OP_REPLY, sha, tip, sha, sip);
                    p.release();
                } else {
                    enqueueProxy(p, conf);
                }
                return;
            }
        }
        // Not a request we answer: learn from it if we already know the sender (no unsolicited creation).
        Neighbour n = stack.neigh().lookup(dev, sip);
        if (n == null && conf.get(Ipv4Sysctl.ARP_ACCEPT) != 0 && op == ArpPacket.OP_REPLY) {
            n = stack.neigh().eventNs(dev, sip, sha);
        }
        if (n != null) {
            boolean reply = op == ArpPacket.OP_REPLY && p.pktType() == Packet.PACKET_HOST;
            boolean garp = sip == tip;
            // locktime (1 s): a different address is taken only when the entry is older than that.
            boolean override = garp || stack.now() - n.updated > 1_000_000_000L;
            stack.neigh().update(n, sha, reply, override);
        }
        // A request for someone else is consumed, not dropped: Linux's arp_process frees it with consume_skb, so
        // every broadcast ARP on a segment would otherwise show up as a drop in each namespace that hears it.
        p.release();
    }

    /** arp_ignore modes 1 and 2: only answer for addresses on the receiving interface. */
    private boolean ignore(DevConf conf, Device dev, int tip) {
        int mode = (int) stack.knobs().effective(Ipv4Sysctl.ARP_IGNORE, conf);
        if (mode == 0) {
            return false;
        }
        var ifa = stack.devinet().local(tip);
        return ifa == null || ifa.dev() != dev;
    }

    /** arp_fwd_proxy: proxy_arp on, and the route to the target is unicast out of another interface. */
    private boolean proxies(DevConf conf, Device dev, int tip) {
        if (stack.knobs().effective(Ipv4Sysctl.PROXY_ARP, conf) == 0) {
            return false;
        }
        Route r = stack.routes().lookup(tip);
        return r != null && r.type() == RouteType.UNICAST && r.dev() != dev;
    }

    private void enqueueProxy(Packet p, DevConf conf) {
        if (proxyPending == null) {
            proxyPending = new HashMap<>();
        }
        if (proxyPending.size() >= conf.get(NeighSysctl.PROXY_QLEN)) {
            stack.drop(p, DropReason.ARP_PROXY_QUEUE_FULL);
            return;
        }
        // pneigh_enqueue: a uniformly random delay below proxy_delay (in 1/100 s).
        long delay = stack.randomBelow(conf.get(NeighSysctl.PROXY_DELAY) * 10_000_000L);
        Timeout[] self = new Timeout[1];
        self[0] = stack.schedule(() -> {
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

    /** Sends a who-has for {@code tip} from {@code sip}; broadcast unless {@code knownMac} is given (a probe). */
    public void sendRequest(Device dev, int sip, int tip, long knownMac) {
        stack.mib().inc(Mib.ArpOutRequests);
        long ethDst = knownMac != 0 ? knownMac : MacAddr.BROADCAST;
        // arp_solicit passes no target hardware address: the body's is zero even when the frame goes unicast.
        Packet p = frame(dev, ArpPacket.OP_REQUEST, ethDst, sip, 0L, tip);
        dev.transmit(p);
    }

    /** arp_send_dst: one ARP frame out of {@code dev} with our MAC as sender. */
    private void send(Device dev, int op, long ethDst, int sip, long tha, int tip) {
        if (op == ArpPacket.OP_REPLY) {
            stack.mib().inc(Mib.ArpOutReplies);
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
