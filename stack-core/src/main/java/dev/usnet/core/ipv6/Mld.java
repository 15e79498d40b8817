package dev.usnet.core.ipv6;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.netns.NetCoreSysctl;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The multicast listener side of MLD on each device (Linux's net/ipv6/mcast.c), answering queries as Linux does
 * with its defaults ({@code force_mld_version} 0: MLDv2, MLDv1 while an MLDv1 querier is heard).
 *
 * <p>The groups a device is in are those usnet's input accepts (ff02::1, ff02::2 while forwarding, the solicited-node
 * group of each address and, while forwarding, of each subnet-router anycast address), in the order Linux keeps them
 * (newest first): the link-local addresses' solicited-node groups, then for each other address from the newest the
 * anycast address's group and the address's own, then ff02::2. ff02::1 and groups of smaller than link-local scope
 * are never reported.
 *
 * <p>Queries must come from a link-local source. An MLDv2 general query is answered after a random 2 + 0..max-1
 * jiffies with one MLDv2 report (to ff02::16) holding an is-exclude record of no source per group; a group-specific
 * query, and every query while in MLDv1, arms the group's own answer at a random 0..max-1 jiffies, which is an MLDv2
 * report of that group or, in MLDv1, an MLDv1 report sent to the group. An MLDv1 query (24 bytes) puts the device in
 * MLDv1 for robustness × query interval + query response interval, the values the last MLDv2 query carried. Another
 * listener's MLDv1 report for a group cancels our pending answer for it. Reports leave with hop limit 1, a
 * hop-by-hop header holding a router alert (MLD) and padding, from the device's usable link-local address or
 * {@code ::} when it has none.
 */
public final class Mld {
    private static final int HBH_LEN = 8;
    private static final int MLD_V1_LEN = 24;
    private static final int MLD_V2_QUERY_MIN = 28;
    private static final int MLD2_RECORD_LEN = 20;
    private static final int MODE_IS_EXCLUDE = 2;
    private static final int CHANGE_TO_INCLUDE = 3;
    private static final int CHANGE_TO_EXCLUDE = 4;
    private static final long ALL_NODES_HI = 0xff02_0000_0000_0000L;
    private static final long SOLICITED_NODE_LO = 0x0000_0001_ff00_0000L;

    private final Ipv6 inet6;
    private final Netns ns;
    private final Map<Device, MldInterface> interfaces = new IdentityHashMap<>();

    Mld(Ipv6 inet6) {
        this.inet6 = inet6;
        this.ns = inet6.netns();
    }

    // ---- the groups ----

    /** The groups {@code dev} reports, in Linux's list order (newest first); ff02::1 is never among them. */
    public List<Ipv6Addr> reportedGroups(Device dev) {
        List<Ipv6Addr> out = new ArrayList<>();
        if (dev instanceof Loopback) {
            return out;
        }
        boolean forwarding = ns.knobs().effective(Ipv6Sysctl.FORWARDING, ns.conf(dev)) != 0;
        List<Inet6Ifaddr> addrs = inet6.addrconf().list(dev);
        for (Inet6Ifaddr a : addrs) {
            if (a.address().isLinkLocal() && a.state() != Inet6Ifaddr.DadState.FAILED) {
                addOnce(out, solicitedNode(a.address().lo()));
            }
        }
        for (int i = addrs.size() - 1; i >= 0; i--) {
            Inet6Ifaddr a = addrs.get(i);
            if (a.address().isLinkLocal() || a.state() == Inet6Ifaddr.DadState.FAILED) {
                continue;
            }
            if (forwarding && a.prefixLen() < 127) {
                long anycastLo = a.prefixLen() >= 64 ? a.address().lo() & prefixMask(a.prefixLen() - 64) : 0;
                addOnce(out, solicitedNode(anycastLo));
            }
            addOnce(out, solicitedNode(a.address().lo()));
        }
        if (forwarding) {
            addOnce(out, Ipv6Addr.ALL_ROUTERS);
        }
        return out;
    }

    private static long prefixMask(int bits) {
        return bits == 0 ? 0 : -1L << (64 - bits);
    }

    private static Ipv6Addr solicitedNode(long lo) {
        return new Ipv6Addr(ALL_NODES_HI, SOLICITED_NODE_LO | (lo & 0xff_ffffL));
    }

    private static void addOnce(List<Ipv6Addr> l, Ipv6Addr g) {
        if (!l.contains(g)) {
            l.add(g);
        }
    }

    private boolean reports(Device dev, long hi, long lo) {
        return reportedGroups(dev).contains(new Ipv6Addr(hi, lo));
    }

    // ---- receiving ----

    /** igmp6_event_query and igmp6_event_report: an MLD query or MLDv1 report that arrived on {@code p.dev()}. Owns p. */
    void rcv(Packet p, int off, int len, int type) {
        Device dev = p.dev();
        if (dev == null || dev instanceof Loopback || !inet6.enabled(dev)) {
            p.release();
            return;
        }
        ByteBuf b = p.buf();
        long srcHi = b.getLong(p.network() + Ipv6Packet.SRC);
        if (type == Icmpv6Packet.MLD_QUERY) {
            if (!Ipv6Addr.isLinkLocalUnicast(srcHi) || len < MLD_V1_LEN) {
                ns.drop(p, DropReason.IPV6_MLD_BAD_QUERY);
                return;
            }
            query(dev, b, off, len);
        } else if (type == Icmpv6Packet.MLD_REPORT && len >= MLD_V1_LEN) {
            // Another listener answered for the group: ours would add nothing (report suppression).
            MldInterface mi = interfaces.get(dev);
            if (mi != null) {
                Ipv6Addr g = new Ipv6Addr(b.getLong(off + 8), b.getLong(off + 16));
                cancelGroupAnswer(mi, g);
                mi.lastReporter.remove(g);
            }
        }
        p.release();
    }

    private MldInterface state(Device dev) {
        return interfaces.computeIfAbsent(dev, d -> new MldInterface((int) ns.conf(d).get(MldSysctl.MLD_QRV), d.mac()));
    }

    /** mld_force_mld_version: a non-zero {@code all} wins over the device's own value. */
    private int forcedVersion(Device dev) {
        long all = ns.knobs().all().get(MldSysctl.FORCE_MLD_VERSION);
        return (int) (all != 0 ? all : ns.conf(dev).get(MldSysctl.FORCE_MLD_VERSION));
    }

    /** mld_in_v1_mode. */
    boolean inV1Mode(Device dev) {
        int forced = forcedVersion(dev);
        if (forced == 2) {
            return false;
        }
        if (forced == 1) {
            return true;
        }
        MldInterface mi = interfaces.get(dev);
        return mi != null && ns.now() < mi.v1SeenUntil;
    }

    private long jiffy() {
        return 1_000_000_000L / ns.knobs().get(NetCoreSysctl.HZ);
    }

    /** msecs_to_jiffies, at least one jiffy. */
    private long jiffies(long millis) {
        long j = jiffy();
        return Math.max((millis * 1_000_000L + j - 1) / j, 1);
    }

    private void query(Device dev, ByteBuf b, int off, int len) {
        long gHi = b.getLong(off + 8);
        long gLo = b.getLong(off + 16);
        boolean general = gHi == 0 && gLo == 0;
        if (!general && !Ipv6Addr.isMulticast(gHi)) {
            return;
        }
        MldInterface mi = state(dev);
        long maxDelayJiffies;
        if (len == MLD_V1_LEN) {
            if (forcedVersion(dev) == 2) {
                return;
            }
            maxDelayJiffies = jiffies(b.getUnsignedShort(off + 4));
            // mld_set_v1_mode, then what MLDv2 had pending is dropped.
            mi.v1SeenUntil = ns.now() + mi.qrv * mi.qiNanos + mi.qriNanos;
            if (mi.generalQueryAnswer != null) {
                mi.generalQueryAnswer.cancel();
                mi.generalQueryAnswer = null;
            }
            if (mi.ifcWork != null) {
                mi.ifcWork.cancel();
                mi.ifcWork = null;
            }
            mi.ifcCount = 0;
            mi.joinCounts.clear();
            mi.leaveCounts.clear();
        } else if (len >= MLD_V2_QUERY_MIN) {
            long mrc = mrcMillis(b.getUnsignedShort(off + 4));
            maxDelayJiffies = jiffies(mrc);
            int sources = b.getUnsignedShort(off + 26);
            if (!inV1Mode(dev)) {
                int qrv = b.getUnsignedByte(off + 24) & 0x7;
                if (qrv > 0) {
                    mi.qrv = Math.max(qrv, 1);
                }
                int qqic = b.getUnsignedByte(off + 25);
                mi.qiNanos = qqicSeconds(qqic) * 1_000_000_000L;
                mi.qriNanos = maxDelayJiffies * jiffy();
                if (general) {
                    if (sources == 0) {
                        answerGeneralQuery(dev, mi, maxDelayJiffies);
                    }
                    return;
                }
                if (sources != 0) {
                    // Group-and-source-specific: we listen to every source (exclude {}), so it is answered as the
                    // group's own query.
                    groupQueried(dev, mi, gHi, gLo, maxDelayJiffies);
                    return;
                }
            }
        } else {
            return;
        }
        if (general) {
            for (Ipv6Addr g : reportedGroups(dev)) {
                groupQueried(dev, mi, g.hi(), g.lo(), maxDelayJiffies);
            }
        } else {
            groupQueried(dev, mi, gHi, gLo, maxDelayJiffies);
        }
    }

    /** RFC 3810 §5.1.3. */
    static long mrcMillis(int code) {
        if (code < 32768) {
            return code;
        }
        return (long) ((code & 0xfff) | 0x1000) << (((code >>> 12) & 0x7) + 3);
    }

    /** RFC 3810 §5.1.9: the querier's query interval code in seconds, exponential from 128 on. */
    static long qqicSeconds(int code) {
        if (code < 128) {
            return code;
        }
        return (long) ((code & 0xf) | 0x10) << (((code >>> 4) & 0x7) + 3);
    }

    /** mld_gq_start_work: the report of every group after 2 + random 0..max-1 jiffies; a pending one is moved. */
    private void answerGeneralQuery(Device dev, MldInterface mi, long maxDelayJiffies) {
        if (mi.generalQueryAnswer != null) {
            mi.generalQueryAnswer.cancel();
        }
        long delay = (randomBelow(dev, maxDelayJiffies) + 2) * jiffy();
        mi.generalQueryAnswer = ns.schedule(() -> {
            mi.generalQueryAnswer = null;
            sendV2Report(dev, null);
        }, delay);
    }

    /**
     * igmp6_group_queried: the group's answer at a random 0..max-1 jiffies, or when its pending one was due if that
     * is sooner. ff02::1 and groups we do not report are never answered.
     */
    private void groupQueried(Device dev, MldInterface mi, long gHi, long gLo, long maxDelayJiffies) {
        if (!reports(dev, gHi, gLo)) {
            return;
        }
        MldInterface.Group g = new MldInterface.Group(gHi, gLo);
        long delay = randomBelow(dev, maxDelayJiffies) * jiffy();
        Timeout pending = mi.groupAnswers.get(g);
        if (pending != null && pending.isPending()) {
            return;
        }
        mi.groupAnswers.put(g, ns.schedule(() -> {
            mi.groupAnswers.remove(g);
            if (!reports(dev, gHi, gLo)) {
                return;
            }
            if (inV1Mode(dev)) {
                sendV1Report(dev, gHi, gLo);
                mi.lastReporter.add(new Ipv6Addr(gHi, gLo));
            } else {
                sendV2Report(dev, new Ipv6Addr(gHi, gLo));
            }
        }, delay));
    }

    // ---- unsolicited reports: joins and leaves ----

    /**
     * ipv6_mc_up and the joins and leaves after it: compares the groups {@code dev} reports now with those it
     * reported before. In MLDv2 every change goes into state-change reports (change-to-exclude of no source for a
     * join, change-to-include of none for a leave), each change in mld_qrv of them: the first two jiffies after the
     * change, the others a random 0..mldv2_unsolicited_report_interval-1 jiffies (+2) apart. In MLDv1 a join is
     * reported at once and once more a random 0..mldv1_unsolicited_report_interval later, a leave sends a done to
     * ff02::2 when we were the group's last reporter.
     *
     * <p>Called at link up and when {@link Ipv6#addAddress} adds an address to a running device; addresses added or
     * removed another way are reported at the next of those.
     */
    public void sync(Device dev) {
        if (dev instanceof Loopback || !dev.isUp() || !dev.hasCarrier() || !inet6.enabled(dev)) {
            return;
        }
        MldInterface mi = state(dev);
        List<Ipv6Addr> now = reportedGroups(dev);
        boolean v1 = inV1Mode(dev);
        boolean changed = false;
        for (Ipv6Addr g : mi.joined) {
            if (!now.contains(g)) {
                changed = true;
                mi.joinCounts.remove(g);
                cancelGroupAnswer(mi, g);
                if (v1) {
                    if (mi.lastReporter.remove(g)) {
                        sendV1(dev, Icmpv6Packet.MLD_DONE, g.hi(), g.lo(), Ipv6Addr.ALL_ROUTERS);
                    }
                } else {
                    mi.leaveCounts.put(g, mi.qrv);
                }
            }
        }
        for (Ipv6Addr g : now) {
            if (!mi.joined.contains(g)) {
                changed = true;
                mi.leaveCounts.remove(g);
                if (v1) {
                    joinV1(dev, mi, g);
                } else {
                    mi.joinCounts.put(g, mi.qrv);
                }
            }
        }
        mi.joined = List.copyOf(now);
        if (changed && !v1) {
            mi.ifcCount = mi.qrv;
            startIfcWork(dev, mi, 1);
        }
    }

    /** ipv6_mc_down: the device went down or lost IPv6; what it joined is reported again when it comes back. */
    public void linkDown(Device dev) {
        MldInterface mi = interfaces.get(dev);
        if (mi != null) {
            mi.cancelAll();
            mi.joined = List.of();
            mi.lastReporter.clear();
        }
    }

    private void cancelGroupAnswer(MldInterface mi, Ipv6Addr g) {
        Timeout t = mi.groupAnswers.remove(new MldInterface.Group(g.hi(), g.lo()));
        if (t != null) {
            t.cancel();
        }
    }

    /** igmp6_join_group in MLDv1. */
    private void joinV1(Device dev, MldInterface mi, Ipv6Addr g) {
        sendV1(dev, Icmpv6Packet.MLD_REPORT, g.hi(), g.lo(), g);
        mi.lastReporter.add(g);
        MldInterface.Group key = new MldInterface.Group(g.hi(), g.lo());
        Timeout pending = mi.groupAnswers.get(key);
        if (pending != null && pending.isPending()) {
            return;
        }
        long delay = randomBelow(dev, unsolicitedIntervalJiffies(dev)) * jiffy();
        mi.groupAnswers.put(key, ns.schedule(() -> {
            mi.groupAnswers.remove(key);
            if (reports(dev, g.hi(), g.lo()) && inV1Mode(dev)) {
                sendV1(dev, Icmpv6Packet.MLD_REPORT, g.hi(), g.lo(), g);
            }
        }, delay));
    }

    /**
     * A random 0..bound-1 jiffies for {@code dev}'s reports, from a source of MLD's own seeded by the device's MAC: the
     * namespace's stream feeds other timers (duplicate address detection's delay, reachable time), whose draws the
     * reports must not shift.
     */
    private long randomBelow(Device dev, long bound) {
        return bound <= 1 ? 0 : state(dev).random.nextLong(bound);
    }

    /** unsolicited_report_interval: the MLDv1 or MLDv2 knob as the mode says, in jiffies, at least one. */
    private long unsolicitedIntervalJiffies(Device dev) {
        long ms = ns.conf(dev).get(inV1Mode(dev) ? Ipv6Sysctl.MLDV1_UNSOLICITED_REPORT_INTERVAL
                : Ipv6Sysctl.MLDV2_UNSOLICITED_REPORT_INTERVAL);
        return ms > 0 ? jiffies(ms) : 1;
    }

    /** mld_ifc_start_work: the next state-change report after 2 + random 0..bound-1 jiffies. */
    private void startIfcWork(Device dev, MldInterface mi, long boundJiffies) {
        if (mi.ifcWork != null) {
            mi.ifcWork.cancel();
        }
        long delay = (randomBelow(dev, boundJiffies) + 2) * jiffy();
        mi.ifcWork = ns.schedule(() -> {
            mi.ifcWork = null;
            sendStateChange(dev, mi);
            if (mi.ifcCount > 0 && --mi.ifcCount > 0) {
                startIfcWork(dev, mi, unsolicitedIntervalJiffies(dev));
            }
        }, delay);
    }

    /** mld_send_cr: the leaves still to report, then the joins, each record counting down. */
    private void sendStateChange(Device dev, MldInterface mi) {
        List<Ipv6Addr> groups = new ArrayList<>();
        List<Integer> types = new ArrayList<>();
        countDown(mi.leaveCounts, CHANGE_TO_INCLUDE, groups, types);
        for (Ipv6Addr g : mi.joined) {
            Integer c = mi.joinCounts.get(g);
            if (c != null) {
                groups.add(g);
                types.add(CHANGE_TO_EXCLUDE);
                if (c <= 1) {
                    mi.joinCounts.remove(g);
                } else {
                    mi.joinCounts.put(g, c - 1);
                }
            }
        }
        if (!groups.isEmpty()) {
            sendV2Records(dev, groups, types);
        }
    }

    private static void countDown(Map<Ipv6Addr, Integer> counts, int type, List<Ipv6Addr> groups,
                                  List<Integer> types) {
        for (var it = counts.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            groups.add(e.getKey());
            types.add(type);
            if (e.getValue() <= 1) {
                it.remove();
            } else {
                e.setValue(e.getValue() - 1);
            }
        }
    }

    // ---- sending ----

    /** mld_send_report: is-exclude records of no source, for {@code only} or for every reported group. */
    private void sendV2Report(Device dev, Ipv6Addr only) {
        List<Ipv6Addr> groups = only != null ? List.of(only) : reportedGroups(dev);
        List<Integer> types = new ArrayList<>();
        for (int i = 0; i < groups.size(); i++) {
            types.add(MODE_IS_EXCLUDE);
        }
        sendV2Records(dev, groups, types);
    }

    /** MLDv2 reports to ff02::16 with a record of no source per group, as many as the MTU takes in each. */
    private void sendV2Records(Device dev, List<Ipv6Addr> groups, List<Integer> types) {
        if (!dev.isUp() || !inet6.enabled(dev) || groups.isEmpty()) {
            return;
        }
        int perPacket = Math.max(1, (Math.max(dev.mtu(), Ipv6Packet.MIN_MTU) - Ipv6Packet.HEADER_LEN - HBH_LEN
                - Icmpv6Packet.HEADER_LEN) / MLD2_RECORD_LEN);
        for (int from = 0; from < groups.size(); from += perPacket) {
            int n = Math.min(perPacket, groups.size() - from);
            int msgLen = Icmpv6Packet.HEADER_LEN + n * MLD2_RECORD_LEN;
            Packet r = Ip6Output.allocate(HBH_LEN + msgLen);
            ByteBuf b = r.buf();
            int m = r.transport() + HBH_LEN;
            b.setByte(m + Icmpv6Packet.TYPE, Icmpv6Packet.MLD2_REPORT);
            b.setByte(m + Icmpv6Packet.CODE, 0);
            b.setShort(m + 4, 0);
            b.setShort(m + 6, n);
            int rec = m + Icmpv6Packet.HEADER_LEN;
            for (int i = 0; i < n; i++) {
                Ipv6Addr g = groups.get(from + i);
                b.setByte(rec, types.get(from + i));
                b.setByte(rec + 1, 0);
                b.setShort(rec + 2, 0);
                b.setLong(rec + 4, g.hi());
                b.setLong(rec + 12, g.lo());
                rec += MLD2_RECORD_LEN;
            }
            transmit(dev, r, msgLen, Ipv6Addr.ALL_MLDV2_ROUTERS.hi(), Ipv6Addr.ALL_MLDV2_ROUTERS.lo());
        }
    }

    /** igmp6_send: an MLDv1 report (sent to the group it reports) or done (sent to ff02::2). */
    private void sendV1(Device dev, int type, long gHi, long gLo, Ipv6Addr to) {
        if (!dev.isUp() || !inet6.enabled(dev)) {
            return;
        }
        Packet r = Ip6Output.allocate(HBH_LEN + MLD_V1_LEN);
        ByteBuf b = r.buf();
        int m = r.transport() + HBH_LEN;
        b.setByte(m + Icmpv6Packet.TYPE, type);
        b.setByte(m + Icmpv6Packet.CODE, 0);
        b.setInt(m + 4, 0);
        b.setLong(m + 8, gHi);
        b.setLong(m + 16, gLo);
        transmit(dev, r, MLD_V1_LEN, to.hi(), to.lo());
    }

    private void sendV1Report(Device dev, long gHi, long gLo) {
        sendV1(dev, Icmpv6Packet.MLD_REPORT, gHi, gLo, new Ipv6Addr(gHi, gLo));
    }

    /**
     * The IPv6 header (hop limit 1, from the usable link-local address or ::), the hop-by-hop header with the
     * router alert for MLD and a PadN, the checksum, and the frame to the group's 33:33 MAC.
     */
    private void transmit(Device dev, Packet r, int msgLen, long dh, long dl) {
        ByteBuf b = r.buf();
        int h = r.transport();
        b.setByte(h, Ipv6Packet.NEXTHDR_ICMPV6);
        b.setByte(h + 1, 0);
        b.setInt(h + 2, 0x0502_0000);
        b.setShort(h + 6, 0x0100);
        Inet6Ifaddr ll = inet6.addrconf().linkLocal(dev);
        long sh = ll == null ? 0 : ll.address().hi();
        long sl = ll == null ? 0 : ll.address().lo();
        Ipv6Packet.writeHeader(b, r.network(), 0, 0, HBH_LEN + msgLen, Ipv6Packet.NEXTHDR_HOP, 1, sh, sl, dh, dl);
        int m = h + HBH_LEN;
        r.setTransport(m);
        Icmpv6Packet.fillChecksum(b, r.network(), m, msgLen);
        ns.mib().inc(Mib.Ip6OutRequests);
        ns.mib().inc(Mib.Ip6OutMcastPkts);
        ns.mib().inc(Mib.Icmp6OutMsgs);
        EthernetFrame.write(b, r.start(), Ipv6Addr.multicastMac(dl), dev.mac(), EthernetFrame.ETH_P_IPV6);
        dev.transmit(r);
    }

    /** The device left the namespace or IPv6 went off on it: its pending answers go. */
    void forget(Device dev) {
        MldInterface mi = interfaces.remove(dev);
        if (mi != null) {
            mi.cancelAll();
        }
    }

    void close() {
        for (MldInterface mi : interfaces.values()) {
            mi.cancelAll();
        }
        interfaces.clear();
    }
}
