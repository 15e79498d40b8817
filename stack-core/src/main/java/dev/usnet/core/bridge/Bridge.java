package dev.usnet.core.bridge;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.DeviceHost;
import dev.usnet.core.device.RxHandler;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayList;
import java.util.List;

/**
 * A learning bridge with Linux's semantics (net/bridge, STP off, no VLAN filtering, IPv6 multicast snooping as
 * {@link BridgeMulticast} describes): learns source MACs per port, ages them out, forwards known unicast to one port, floods unknown
 * unicast, broadcast and multicast to every other port, never back out of the ingress port, drops frames
 * with a multicast or zero source MAC, and handles the 01:80:c2:00:00:0X groups as Linux does (BPDUs
 * flooded while STP is off, PAUSE dropped, the rest passed up unless group_fwd_mask allows them). Tagged
 * frames pass unchanged. Forwarding hands on the same packet; flooding clones, sharing the bytes.
 * As a device it is the bridge's own interface ({@code br0}): frames to its MAC or its ports' MACs and all
 * broadcasts go up to its stack.
 */
public final class Bridge extends Device implements RxHandler {
    /** Linux default ageing_time: 300 s. */
    public static final long DEFAULT_AGEING_NANOS = 300_000_000_000L;
    /** usnet's default cap on learned entries (Linux's fdb_max_learned default 0 means unlimited). */
    public static final int DEFAULT_FDB_MAX_LEARNED = 65_536;

    private final Fdb fdb = new Fdb(this);
    private final BridgeMulticast multicast = new BridgeMulticast();
    /**
     * The ports in the order they joined (the flood order), as an immutable view republished on every change:
     * adding appends into spare room (the slots array doubles when full), removing clears the port's slot and
     * compacts only when half the slots are empty, so building or tearing down a bridge of N ports costs O(N), not
     * O(N^2). Readers (flooding, on the namespace thread) skip cleared slots. Changed under the bridge's lock.
     */
    private volatile PortList ports = PortList.EMPTY;

    private record PortList(BridgePort[] slots, int n, int holes) {
        static final PortList EMPTY = new PortList(new BridgePort[0], 0, 0);
    }
    private volatile long ageingNanos = DEFAULT_AGEING_NANOS;
    private volatile int fdbMaxLearned = DEFAULT_FDB_MAX_LEARNED;
    private volatile int groupFwdMask;
    // br_fdb_cleanup, armed by the first learned entry and re-armed only while learned entries remain: a bridge
    // whose ports never learned (idle containers) has no timer waking it. Namespace thread (and attach) only.
    private Timeout gcTimer;
    private static final int ETH_P_IPV6 = 0x86dd;
    private final EthernetFrame eth = new EthernetFrame();
    private final dev.usnet.core.wire.Ipv4Packet ip = new dev.usnet.core.wire.Ipv4Packet();
    // br_netfilter of the namespace the bridge is registered in (given by the namespace, which knows its IPv4
    // family; this package cannot name the namespace's class), or null: bridged IPv4 is only header-checked.
    private volatile BrNetfilter netfilter;

    public Bridge(String name, long mac) {
        super("bridge", name, mac);
    }

    public Fdb fdb() {
        return fdb;
    }

    /**
     * The namespace's br_netfilter, through whose IPv4 hooks bridged IPv4 passes while
     * {@code net.bridge.bridge-nf-call-iptables} is 1 (null: none). Set by the namespace the bridge joins.
     */
    public void setNetfilter(BrNetfilter nf) {
        this.netfilter = nf;
    }

    /** IPv6 multicast snooping (multicast_snooping, on by default as in Linux) and its group table. */
    public BridgeMulticast multicast() {
        return multicast;
    }

    public long ageingNanos() {
        return ageingNanos;
    }

    /**
     * ageing_time. 0 makes the bridge a hub, as in Linux (br_fdb_update returns at once when the hold time is 0,
     * "some users want to always flood"): nothing is learned, and what was learned goes at once, as Linux's gc
     * work, rescheduled by the change, finds every learned entry expired.
     */
    public void setAgeingNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("ageing_time must not be negative: " + nanos + " ns");
        }
        this.ageingNanos = nanos;
        if (nanos == 0) {
            fdb.expire(now(), 0);
        }
    }

    public int fdbMaxLearned() {
        return fdbMaxLearned;
    }

    /** fdb_max_learned; 0 is unlimited, as in Linux. */
    public void setFdbMaxLearned(int max) {
        this.fdbMaxLearned = max;
    }

    public int groupFwdMask() {
        return groupFwdMask;
    }

    /** group_fwd_mask: which 01:80:c2:00:00:0X groups to forward; Linux refuses bits 0, 1 and 2. */
    public void setGroupFwdMask(int mask) {
        if ((mask & 0x7) != 0) {
            throw new IllegalArgumentException("group_fwd_mask: bits 0-2 (STP, PAUSE, LACP) cannot be forwarded");
        }
        this.groupFwdMask = mask & 0xffff;
    }

    public List<BridgePort> ports() {
        PortList l = ports;
        List<BridgePort> out = new ArrayList<>(l.n - l.holes);
        for (int i = 0; i < l.n; i++) {
            BridgePort bp = l.slots[i];
            if (bp != null) {
                out.add(bp);
            }
        }
        return out;
    }

    /** The port {@code dev} is of this bridge, or null: kept on the device (br_port_get_rcu), no search. */
    public BridgePort port(Device dev) {
        return dev.master() == this && dev.rxHandlerData() instanceof BridgePort bp && bp.bridge() == this ? bp : null;
    }

    /** {@code ip link set DEV master BRIDGE}: the device must live in the bridge's namespace. */
    public synchronized BridgePort addPort(Device dev) {
        if (dev.stack() != stack()) {
            throw new IllegalArgumentException(dev.name() + " is not in the namespace of bridge " + name());
        }
        if (dev == this || dev.master() != null) {
            throw new IllegalArgumentException(dev.name() + " is already enslaved or is the bridge itself");
        }
        BridgePort bp = new BridgePort(this, dev);
        PortList l = ports;
        BridgePort[] slots = l.slots;
        if (l.n == slots.length) {
            slots = java.util.Arrays.copyOf(slots, Math.max(4, slots.length * 2));
        }
        slots[l.n] = bp;
        bp.slot = l.n;
        ports = new PortList(slots, l.n + 1, l.holes);
        dev.setRxHandlerData(bp);
        dev.setMaster(this);
        dev.setRxHandler(this);
        dev.setPromisc(true);
        fdb.addLocal(dev.mac(), bp, now());
        return bp;
    }

    /** br_port_carrier_check / br_stp_disable_port: what was learned behind a port that went down is forgotten. */
    @Override
    protected void portDown(Device dev) {
        BridgePort bp = port(dev);
        if (bp != null) {
            fdb.flushLearned(bp);
            multicast.forgetPort(bp, now());
        }
    }

    /** {@code ip link set DEV nomaster}. */
    public synchronized void removePort(Device dev) {
        BridgePort bp = port(dev);
        if (bp == null) {
            return;
        }
        PortList l = ports;
        l.slots[bp.slot] = null;
        int holes = l.holes + 1;
        if (holes == l.n) {
            ports = PortList.EMPTY;
        } else if (holes > l.n / 2) {
            // Compact into a new array: readers of the old one keep a consistent (if stale) view.
            BridgePort[] slots = new BridgePort[Math.max(4, Integer.highestOneBit(l.n - holes) * 2)];
            int n = 0;
            for (int i = 0; i < l.n; i++) {
                BridgePort x = l.slots[i];
                if (x != null) {
                    x.slot = n;
                    slots[n++] = x;
                }
            }
            ports = new PortList(slots, n, 0);
        } else {
            ports = new PortList(l.slots, l.n, holes);
        }
        fdb.flushPort(bp);
        multicast.forgetPort(bp, now());
        dev.setMaster(null);
        dev.setRxHandler(null);
        dev.setRxHandlerData(null);
        dev.setPromisc(false);
    }

    /** A port leaving its namespace leaves the bridge (ndo_del_slave). */
    @Override
    public void releasePort(Device port) {
        removePort(port);
    }

    @Override
    public void attach(DeviceHost stack, int ifindex) {
        super.attach(stack, ifindex);
        if (stack != null) {
            fdb.addLocal(mac(), null, stack.now());
            if (fdb.learnedCount() > 0) {
                scheduleGc();
            }
        } else if (gcTimer != null) {
            gcTimer.cancel();
            gcTimer = null;
        }
    }

    private void scheduleGc() {
        Netns s = stack();
        if (s == null) {
            return;
        }
        long a = ageingNanos;
        long interval = a > 0 ? Math.max(1_000_000_000L, Math.min(a / 10, 10_000_000_000L)) : 10_000_000_000L;
        gcTimer = s.schedule(() -> {
            fdb.expire(now(), ageingNanos);
            gcTimer = null;
            if (fdb.learnedCount() > 0) {
                scheduleGc();
            }
        }, interval);
    }

    private long now() {
        Netns s = stack();
        return s == null ? 0 : s.now();
    }

    /** br_handle_frame: a frame arrived on port {@code in}. Always consumes it. */
    @Override
    public boolean handleFrame(Device in, Packet p) {
        BridgePort port = port(in);
        Netns s = stack();
        if (port == null || s == null) {
            return false;
        }
        if (eth.check(p.buf(), p.start(), p.length()) != null) {
            s.drop(p, DropReason.PKT_TOO_SMALL);
            return true;
        }
        long src = eth.src();
        if (!MacAddr.isValidUnicast(src)) {
            s.drop(p, DropReason.MAC_INVALID_SOURCE);
            return true;
        }
        long dst = eth.dst();
        int group = MacAddr.linkLocalGroup(dst);
        if (group >= 0) {
            switch (group) {
                case 0x00 -> { }
                case 0x01 -> {
                    s.drop(p, DropReason.BRIDGE_LINK_LOCAL);
                    return true;
                }
                default -> {
                    if (((groupFwdMask >>> group) & 1) == 0) {
                        // Passed up to the port's own stack (RX_HANDLER_PASS) after learning the source.
                        learn(src, port, s);
                        s.drops().count(DropReason.BRIDGE_LINK_LOCAL);
                        return false;
                    }
                }
            }
        }
        if (!port.forwarding()) {
            s.drop(p, DropReason.DEV_DOWN);
            return true;
        }
        DropReason nf = netfilterPreRouting(p, port, s);
        if (nf != null) {
            s.drop(p, nf);
            return true;
        }
        BrNetfilter brnf = netfilter;
        if (brnf != null && p.nfBridgePhysIn() != 0) {
            p = brnf.preRouting(this, p);
            if (p == null) {
                return true;
            }
            // Destination NAT may have readdressed the frame, or a hook replaced it.
            eth.check(p.buf(), p.start(), p.length());
            dst = eth.dst();
        }
        handleFrameFinish(p, port, src, dst, s);
        return true;
    }

    /**
     * br_handle_frame_finish: learns the source of a frame from {@code port} and forwards it by its destination:
     * up to the bridge's stack, to one port, or flooded. Also where a bridged-DNAT frame resumes once its new
     * next hop's address is known ({@link #xmit}).
     */
    private void handleFrameFinish(Packet p, BridgePort port, long src, long dst, Netns s) {
        learn(src, port, s);
        long now = s.now();
        if (MacAddr.isMulticast(dst)) {
            s.cpu().bridgeForwarded();
            if (!MacAddr.isBroadcast(dst) && snoop(p, port, s, now, isUp())) {
                return;
            }
            flood(p, port, MacAddr.isBroadcast(dst) ? Kind.BROADCAST : Kind.MULTICAST, isUp());
            return;
        }
        FdbEntry e = fdb.find(dst, now, ageingNanos);
        if (e != null && e.local) {
            passUp(p);
            return;
        }
        if (e != null) {
            BridgePort out = e.port;
            if (out == port && !out.hairpin()) {
                s.drop(p, DropReason.BRIDGE_SAME_PORT);
                return;
            }
            if (!out.forwarding()) {
                s.drop(p, DropReason.BRIDGE_NO_PORT);
                return;
            }
            s.cpu().bridgeForwarded();
            forward(out, p, port);
            return;
        }
        s.cpu().bridgeForwarded();
        flood(p, port, Kind.UNICAST, isUp() && isPromisc());
    }

    /**
     * br_nf_pre_routing with bridge-nf-call-iptables/ip6tables on: an untagged IPv4 frame must carry a valid
     * header (br_validate_ipv4) and is trimmed to its total length; IPv6 likewise by version and payload
     * length. Returns why to drop, or null. A valid IPv4 frame is marked with its port for {@link BrNetfilter}.
     */
    private DropReason netfilterPreRouting(Packet p, BridgePort port, Netns s) {
        int type = eth.outerType();
        var knobs = s.knobs();
        int l3 = p.start() + EthernetFrame.HEADER_LEN;
        int avail = p.length() - EthernetFrame.HEADER_LEN;
        if (type == EthernetFrame.ETH_P_IP && knobs.get(BridgeSysctl.NF_CALL_IPTABLES) != 0) {
            DropReason bad = ip.check(p.buf(), l3, avail);
            if (bad != null) {
                return bad;
            }
            p.trim(EthernetFrame.HEADER_LEN + ip.totalLength());
            if (netfilter != null) {
                p.setNfBridgePhysIn(port.dev().ifindex());
            }
        } else if (type == ETH_P_IPV6 && knobs.get(BridgeSysctl.NF_CALL_IP6TABLES) != 0) {
            if (avail < 40 || (p.buf().getUnsignedByte(l3) >>> 4) != 6) {
                return DropReason.IP_VERSION;
            }
            int total = 40 + p.buf().getUnsignedShort(l3 + 4);
            if (total > avail) {
                return DropReason.IP_TRUNCATED;
            }
            p.trim(EthernetFrame.HEADER_LEN + total);
        }
        return null;
    }

    private void learn(long src, BridgePort port, Netns s) {
        if (ageingNanos == 0) {
            return;
        }
        if (port.learning() && !fdb.learn(src, port, s.now(), fdbMaxLearned)) {
            s.drops().count(DropReason.FDB_FULL);
        }
        if (gcTimer == null && fdb.learnedCount() > 0) {
            scheduleGc();
        }
    }

    /**
     * br_multicast_rcv and the snooped half of multicast forwarding, for an untagged IPv6 frame to a multicast MAC
     * that came in on {@code in} (null: from the bridge's own stack). True when it dealt with the frame (dropped
     * it as broken, or forwarded it by the group table because a querier exists); false to flood it as usual.
     * With a querier, the bridge's own stack gets the frame only when it joined the group itself.
     */
    private boolean snoop(Packet p, BridgePort in, Netns s, long now, boolean local) {
        if (eth.outerType() != ETH_P_IPV6 || !multicast.enabled()) {
            return false;
        }
        int l3 = p.start() + EthernetFrame.HEADER_LEN;
        BridgeMulticast.Verdict v = multicast.receive(p.buf(), l3, p.length() - EthernetFrame.HEADER_LEN, in, now);
        if (v == BridgeMulticast.Verdict.INVALID) {
            s.drop(p, DropReason.BRIDGE_MCAST_INVALID);
            return true;
        }
        if (v == BridgeMulticast.Verdict.FLOOD || !multicast.querierExists(now)) {
            return false;
        }
        MdbEntry group = v == BridgeMulticast.Verdict.GROUP ? multicast.group() : null;
        flood(p, in, Kind.SNOOPED, local && group != null && group.hostJoined(now), group, now);
        return true;
    }

    private enum Kind { UNICAST, MULTICAST, BROADCAST, SNOOPED }

    /**
     * br_flood: one copy to every forwarding port except {@code in} (unless hairpin) whose flood flag for this
     * kind is on, and one up to the bridge device when {@code local}. Copies share the bytes; the last
     * recipient gets the original packet.
     */
    private void flood(Packet p, BridgePort in, Kind kind, boolean local) {
        flood(p, in, kind, local, null, 0);
    }

    /**
     * br_flood, or br_multicast_flood when {@code kind} is {@link Kind#SNOOPED}: then the candidates are the
     * members of {@code group} (none when null) and the router ports at {@code now}, whatever their flood flags.
     */
    private void flood(Packet p, BridgePort in, Kind kind, boolean local, MdbEntry group, long now) {
        PortList ps = ports;
        // The copies inherit it; the original loses it again before it goes up to the bridge's own stack.
        p.setFlooded(true);
        BridgePort last = null;
        boolean first = true;
        for (int i = 0; i < ps.n; i++) {
            BridgePort bp = ps.slots[i];
            if (bp == null || !eligible(bp, in, kind, group, now)) {
                continue;
            }
            if (last != null) {
                if (first) {
                    flattenClone(p);
                    first = false;
                }
                forward(last, p.cloneShared(), in);
            }
            last = bp;
        }
        if (local) {
            if (last != null) {
                if (first) {
                    flattenClone(p);
                }
                forward(last, p.cloneShared(), in);
            }
            p.setFlooded(false);
            passUp(p);
            return;
        }
        if (last != null) {
            forward(last, p, in);
        } else {
            stack().drop(p, DropReason.BRIDGE_NO_PORT);
        }
    }

    /**
     * br_forward: {@code p} leaves by {@code to}. A frame that came in by the port {@code in} (null: from the
     * bridge's own stack) and passed br_netfilter's prerouting passes the IPv4 forward and postrouting hooks first.
     */
    private void forward(BridgePort to, Packet p, BridgePort in) {
        BrNetfilter nf = netfilter;
        if (in != null && nf != null && p.nfBridgePhysIn() != 0) {
            p = nf.forward(this, p, to);
            if (p == null) {
                return;
            }
        }
        to.dev().transmit(p);
    }

    /**
     * Before a packet that is itself a clone is cloned again, it gets bytes of its own. A clone's buffer is a view
     * whose reference count is held by the view it was made from, so cloning a clone adds a link to a chain that is
     * released link by link, recursively. Linux's clones share one flat data reference however often they are
     * cloned; here a frame flooded round a loop of bridges (no spanning tree) would otherwise grow its chain by one
     * link per lap, without bound, until the release of the chain overflows the thread's stack. Only frames that a
     * flood or a TCP sender cloned before take this copy, and only when this flood makes copies: a broadcast flooded
     * by the first bridge it meets is not one.
     */
    private static void flattenClone(Packet p) {
        if (p.isCloned()) {
            p.copyAll(null);
        }
    }

    private boolean eligible(BridgePort bp, BridgePort in, Kind kind, MdbEntry group, long now) {
        if ((bp == in && !bp.hairpin()) || !bp.forwarding()) {
            return false;
        }
        return switch (kind) {
            case UNICAST -> bp.unicastFlood();
            case MULTICAST -> bp.multicastFlood();
            case BROADCAST -> bp.broadcastFlood();
            case SNOOPED -> (group != null && group.hasMember(bp, now)) || multicast.isRouterPort(bp, now);
        };
    }

    /**
     * br_pass_frame_up: the frame is for the bridge device's own stack. Its way from the port to here is the
     * bridge's part of its forwarding, recorded as the path {@code port->bridge} (e.g. {@code hb1->br0}) before
     * the bridge device's receive stamps it again for what its stack does next (a routed {@code br0->hr3}).
     */
    private void passUp(Packet p) {
        Netns s = stack();
        if (!isUp()) {
            s.drop(p, DropReason.DEV_DOWN);
            return;
        }
        recordPath(p, s, s.now());
        receive(p);
    }

    /** br_dev_xmit: the bridge's own stack sends; forward by FDB or flood to every port. */
    @Override
    protected void xmit(Packet p) {
        Netns s = stack();
        if (eth.check(p.buf(), p.start(), p.length()) != null) {
            s.drop(p, DropReason.PKT_TOO_SMALL);
            return;
        }
        BrNetfilter nf = netfilter;
        if (nf != null && p.nfBridgeDnatSrc() != 0) {
            // Not the stack's own: a bridged-DNAT frame the neighbour layer held until its next hop answered.
            BridgePort port = nf.resumeBridgedDnat(this, p);
            if (port != null) {
                eth.check(p.buf(), p.start(), p.length());
                handleFrameFinish(p, port, eth.src(), eth.dst(), s);
            }
            return;
        }
        long dst = eth.dst();
        p.setDev(null);
        p.setRxTimeNanos(0);
        if (MacAddr.isMulticast(dst)) {
            s.cpu().bridgeForwarded();
            // br_dev_xmit snoops the bridge's own MLD too: its reports make it a listener (host_joined).
            if (!MacAddr.isBroadcast(dst) && snoop(p, null, s, s.now(), false)) {
                return;
            }
            flood(p, null, MacAddr.isBroadcast(dst) ? Kind.BROADCAST : Kind.MULTICAST, false);
            return;
        }
        FdbEntry e = fdb.find(dst, s.now(), ageingNanos);
        if (e != null && !e.local && e.port.forwarding()) {
            e.port.dev().transmit(p);
            return;
        }
        if (e != null && e.local) {
            s.drop(p, DropReason.BRIDGE_NO_PORT);
            return;
        }
        flood(p, null, Kind.UNICAST, false);
    }

    @Override
    protected void destroy() {
        for (BridgePort bp : ports()) {
            removePort(bp.dev());
        }
        if (gcTimer != null) {
            gcTimer.cancel();
            gcTimer = null;
        }
    }

    /** Whether the FDB ageing timer is armed (only while learned entries exist). */
    public boolean fdbGcArmed() {
        return gcTimer != null && gcTimer.isPending();
    }
}
