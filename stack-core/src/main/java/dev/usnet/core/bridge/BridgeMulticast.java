package dev.usnet.core.bridge;

import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Packet;
import io.netty.buffer.ByteBuf;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * A bridge's IPv6 multicast snooping (Linux's br_multicast for MLD, net_bridge_mcast) with Linux's defaults:
 * multicast_snooping 1, no querier of its own (multicast_querier 0), ports learn to be router ports from the
 * queries they receive (multicast_router 1), MLDv1 snooping (multicast_mld_version 1: an MLDv2 record counts as
 * a join of its group, or a leave when it is an include of no source).
 *
 * <p>What the kernel showed (fixture bridge-mld): the bridge learns groups from reports at once, but forwards by
 * them only while a querier exists, that is while another querier's query was heard in the last
 * {@link #QUERIER_INTERVAL_NANOS} and that query's maximum response delay has passed. Until then every multicast
 * frame floods as without snooping. With a querier, a frame to a registered group goes to the group's member ports
 * and the router ports; a frame to an unregistered group, an MLDv1 report and any non-MLD IPv6 multicast except to
 * ff02::1 goes to the router ports only; ff02::1, MLDv2 reports (to ff02::16) and dones (to ff02::2) are
 * flooded. A multicast IPv6 frame that fails the MLD checks (header beyond the frame, bad ICMPv6 checksum, a query
 * from a non-link-local source or a general query not to ff02::1) is dropped. IGMP (IPv4) snooping is not
 * modelled: IPv4 multicast floods as on a Linux bridge that never heard an IGMP querier.
 *
 * <p>Namespace thread only, apart from {@link #setEnabled}.
 */
public final class BridgeMulticast {
    /** multicast_querier_interval (255 s): another querier counts as present, a router port stays one. */
    public static final long QUERIER_INTERVAL_NANOS = 255_000_000_000L;
    /** multicast_membership_interval (260 s): a report keeps its port a member this long. */
    public static final long MEMBERSHIP_INTERVAL_NANOS = 260_000_000_000L;
    /** multicast_last_member_count (2) and multicast_last_member_interval (1 s). */
    public static final int LAST_MEMBER_COUNT = 2;
    public static final long LAST_MEMBER_INTERVAL_NANOS = 1_000_000_000L;
    /** One jiffy at HZ=250: the least maximum response delay an MLDv2 query gives. */
    private static final long JIFFY_NANOS = 4_000_000L;

    /** What {@link #receive} found. */
    public enum Verdict {
        /** Not multicast IPv6 this bridge snoops, or snooping is off: flood as usual. */
        FLOOD,
        /** Forward to the group's members and the router ports when a querier exists ({@link #group()}). */
        GROUP,
        /** Forward to the router ports only when a querier exists. */
        ROUTERS_ONLY,
        /** Broken MLD or IPv6 header: drop. */
        INVALID
    }

    private volatile boolean enabled = true;
    private final Mdb mdb = new Mdb();
    private final Map<BridgePort, Long> routerPortUntil = new IdentityHashMap<>();
    /** The other querier's timer (other_query.timer) and the delay after its first query (other_query.delay_timer). */
    private long otherQuerierUntil = Long.MIN_VALUE;
    private long querierDelayUntil = Long.MIN_VALUE;
    private long querierHi;
    private long querierLo;
    /** The group the last {@link #receive} found in the table, or null. */
    private MdbEntry group;

    public boolean enabled() {
        return enabled;
    }

    /** multicast_snooping; turning it off forgets what was learned, as Linux does. */
    public void setEnabled(boolean on) {
        if (!on) {
            reset();
        }
        enabled = on;
    }

    public Mdb mdb() {
        return mdb;
    }

    /** The group of the last frame {@link #receive} gave {@link Verdict#GROUP}. */
    public MdbEntry group() {
        return group;
    }

    /** Whether another querier exists at {@code now} and its first query's maximum response delay has passed. */
    public boolean querierExists(long now) {
        return !(now < querierDelayUntil) && now < otherQuerierUntil;
    }

    /** Whether {@code port} is a router port (a querier was heard on it) at {@code now}. */
    public boolean isRouterPort(BridgePort port, long now) {
        Long until = routerPortUntil.get(port);
        return until != null && until > now;
    }

    /**
     * br_multicast_ipv6_rcv: the untagged IPv6 packet at {@code l3} ({@code avail} bytes to the frame's end) with a
     * multicast destination MAC arrived on {@code in} (null: sent by the bridge's own stack). Learns from MLD and
     * says how to forward the frame.
     */
    public Verdict receive(ByteBuf buf, int l3, int avail, BridgePort in, long now) {
        group = null;
        if (!enabled) {
            return Verdict.FLOOD;
        }
        if (avail < Ipv6Packet.HEADER_LEN || (buf.getUnsignedByte(l3) >>> 4) != 6) {
            return Verdict.INVALID;
        }
        int payload = buf.getUnsignedShort(l3 + Ipv6Packet.PAYLOAD_LEN);
        int end = Ipv6Packet.HEADER_LEN + payload;
        if (avail < end || payload == 0) {
            return Verdict.INVALID;
        }
        long dstHi = buf.getLong(l3 + Ipv6Packet.DST);
        long dstLo = buf.getLong(l3 + Ipv6Packet.DST + 8);
        int mld = mldOffset(buf, l3, avail, end);
        if (mld == MLD_INVALID) {
            return Verdict.INVALID;
        }
        if (mld < 0) {
            return notMld(dstHi, dstLo);
        }
        int type = buf.getUnsignedByte(l3 + mld);
        int len = end - mld;
        int at = l3 + mld;
        switch (type) {
            case Icmpv6Packet.MLD_REPORT -> {
                addGroup(buf.getLong(at + 8), buf.getLong(at + 16), in, now);
                return lookup(dstHi, dstLo, true);
            }
            case Icmpv6Packet.MLD2_REPORT -> {
                if (!report2(buf, at, len, in, now)) {
                    return Verdict.INVALID;
                }
                return lookup(dstHi, dstLo, false);
            }
            case Icmpv6Packet.MLD_QUERY -> {
                query(buf, l3, at, len, in, now);
                return lookup(dstHi, dstLo, false);
            }
            case Icmpv6Packet.MLD_DONE -> {
                leaveGroup(buf.getLong(at + 8), buf.getLong(at + 16), in, now);
                return lookup(dstHi, dstLo, false);
            }
            default -> {
                return notMld(dstHi, dstLo);
            }
        }
    }

    /** Not MLD: to the router ports only, unless it is for ff02::1 (mrouters_only is not set for all-nodes). */
    private Verdict notMld(long dstHi, long dstLo) {
        return lookup(dstHi, dstLo, !isAllNodes(dstHi, dstLo));
    }

    private Verdict lookup(long dstHi, long dstLo, boolean routersOnly) {
        MdbEntry e = mdb.get(dstHi, dstLo);
        if (e != null) {
            group = e;
            return Verdict.GROUP;
        }
        return routersOnly ? Verdict.ROUTERS_ONLY : Verdict.FLOOD;
    }

    private static final int MLD_INVALID = -2;
    private static final int NOT_MLD = -1;

    /**
     * ipv6_mc_check_mld: the MLD message's offset from {@code l3}, {@link #NOT_MLD} when the packet is not one (no
     * hop-by-hop header first, not ICMPv6, not an MLD type, shorter than an MLD message), {@link #MLD_INVALID} when
     * it is broken. {@code end} is where the IPv6 payload ends.
     */
    private static int mldOffset(ByteBuf buf, int l3, int avail, int end) {
        int next = buf.getUnsignedByte(l3 + Ipv6Packet.NEXT_HEADER);
        if (next != Ipv6Packet.NEXTHDR_HOP) {
            return NOT_MLD;
        }
        // ipv6_skip_exthdr: reads bounded by the frame; a "no next header" in the chain is an error.
        int off = Ipv6Packet.HEADER_LEN;
        while (isExtension(next)) {
            if (next == Ipv6Packet.NEXTHDR_NONE || off + 2 > avail) {
                return MLD_INVALID;
            }
            int hdrLen;
            if (next == Ipv6Packet.NEXTHDR_FRAGMENT) {
                if (off + 4 > avail) {
                    return MLD_INVALID;
                }
                int nh = buf.getUnsignedByte(l3 + off);
                if ((buf.getUnsignedShort(l3 + off + 2) & ~0x7) != 0) {
                    next = nh;
                    break;
                }
                hdrLen = 8;
            } else if (next == Ipv6Packet.NEXTHDR_AUTH) {
                hdrLen = (buf.getUnsignedByte(l3 + off + 1) + 2) << 2;
            } else {
                hdrLen = (buf.getUnsignedByte(l3 + off + 1) + 1) << 3;
            }
            next = buf.getUnsignedByte(l3 + off);
            off += hdrLen;
        }
        if (next != Ipv6Packet.NEXTHDR_ICMPV6) {
            return NOT_MLD;
        }
        // ipv6_mc_check_icmpv6: the ICMPv6 header within the payload and its checksum.
        if (end < off + Icmpv6Packet.HEADER_LEN) {
            return MLD_INVALID;
        }
        int len = end - off;
        long sum = Ipv6Packet.pseudoHeaderSum(buf, l3, len, Ipv6Packet.NEXTHDR_ICMPV6);
        if (Checksum.finish(Checksum.add(buf, l3 + off, len, sum)) != 0) {
            return MLD_INVALID;
        }
        // ipv6_mc_check_mld_msg: an MLD message is at least 24 bytes.
        if (len < 24) {
            return NOT_MLD;
        }
        int type = buf.getUnsignedByte(l3 + off);
        switch (type) {
            case Icmpv6Packet.MLD_REPORT, Icmpv6Packet.MLD_DONE, Icmpv6Packet.MLD2_REPORT -> {
                return off;
            }
            case Icmpv6Packet.MLD_QUERY -> {
                // RFC 2710 and 3810: a query comes from a link-local address; a general one goes to ff02::1.
                long srcHi = buf.getLong(l3 + Ipv6Packet.SRC);
                if ((srcHi & 0xffc0_0000_0000_0000L) != 0xfe80_0000_0000_0000L) {
                    return MLD_INVALID;
                }
                if (len != 24 && len < 28) {
                    return MLD_INVALID;
                }
                boolean general = buf.getLong(l3 + off + 8) == 0 && buf.getLong(l3 + off + 16) == 0;
                if (general && !isAllNodes(buf.getLong(l3 + Ipv6Packet.DST), buf.getLong(l3 + Ipv6Packet.DST + 8))) {
                    return MLD_INVALID;
                }
                return off;
            }
            default -> {
                return NOT_MLD;
            }
        }
    }

    private static boolean isExtension(int next) {
        return next == Ipv6Packet.NEXTHDR_HOP || next == Ipv6Packet.NEXTHDR_ROUTING
                || next == Ipv6Packet.NEXTHDR_FRAGMENT || next == Ipv6Packet.NEXTHDR_AUTH
                || next == Ipv6Packet.NEXTHDR_NONE || next == Ipv6Packet.NEXTHDR_DEST;
    }

    private static boolean isAllNodes(long hi, long lo) {
        return hi == 0xff02_0000_0000_0000L && lo == 1;
    }

    /**
     * br_ip6_multicast_mld2_report with MLDv1 snooping: each record of a known type joins its group, except an
     * include (is-include, change-to-include) of no source, which leaves it. A record is 20 bytes and its sources
     * (Linux does not count the auxiliary data); one that runs past the message makes the frame invalid, after the
     * records before it took effect.
     */
    private boolean report2(ByteBuf buf, int at, int len, BridgePort in, long now) {
        int records = buf.getUnsignedShort(at + 6);
        int off = Icmpv6Packet.HEADER_LEN;
        for (int i = 0; i < records; i++) {
            if (off + 4 > len) {
                return false;
            }
            int sources = buf.getUnsignedShort(at + off + 2);
            int recLen = 20 + 16 * sources;
            if (off + recLen > len) {
                return false;
            }
            int recType = buf.getUnsignedByte(at + off);
            long hi = buf.getLong(at + off + 4);
            long lo = buf.getLong(at + off + 12);
            off += recLen;
            if (recType < 1 || recType > 6) {
                continue;
            }
            boolean include = recType == 1 || recType == 3;
            if (include && sources == 0) {
                leaveGroup(hi, lo, in, now);
            } else {
                addGroup(hi, lo, in, now);
            }
        }
        return true;
    }

    /** br_ip6_multicast_add_group: {@code in} (or the bridge itself) listens to the group; never ff02::1. */
    private void addGroup(long hi, long lo, BridgePort in, long now) {
        if (isAllNodes(hi, lo)) {
            return;
        }
        MdbEntry e = mdb.getOrCreate(hi, lo);
        if (e == null) {
            mdb.expire(now);
            e = mdb.getOrCreate(hi, lo);
            if (e == null) {
                // Linux: "Multicast hash table maximum reached, disabling snooping".
                setEnabled(false);
                return;
            }
        }
        if (in == null) {
            e.hostUntil = now + MEMBERSHIP_INTERVAL_NANOS;
        } else {
            e.join(in, now + MEMBERSHIP_INTERVAL_NANOS);
        }
    }

    /**
     * br_multicast_leave_group without fast leave and without a querier of its own: nothing while another querier
     * exists (it will query the group itself); otherwise the membership ends after last_member_count times
     * last_member_interval unless it would end sooner.
     */
    private void leaveGroup(long hi, long lo, BridgePort in, long now) {
        if (isAllNodes(hi, lo) || now < otherQuerierUntil) {
            return;
        }
        MdbEntry e = mdb.get(hi, lo);
        if (e == null) {
            return;
        }
        long time = now + LAST_MEMBER_COUNT * LAST_MEMBER_INTERVAL_NANOS;
        if (in == null) {
            if (e.hostUntil > now && e.hostUntil > time) {
                e.hostUntil = time;
            }
        } else {
            e.shorten(in, time, now);
        }
    }

    /**
     * br_ip6_multicast_query. A general query from the elected querier (the lowest address heard, or any when none
     * is present) starts or renews the other-querier timer, with the query's maximum response delay as the delay
     * before snooping takes effect when no querier was present, and makes its port a router port. A
     * group-specific query brings the group's memberships forward to last_member_count times its delay.
     */
    private void query(ByteBuf buf, int l3, int at, int len, BridgePort in, long now) {
        long delay;
        boolean hasGroup;
        if (len == 24) {
            delay = buf.getUnsignedShort(at + 4) * 1_000_000L;
            hasGroup = delay != 0;
        } else {
            delay = Math.max(mrcMillis(buf.getUnsignedShort(at + 4)) * 1_000_000L, JIFFY_NANOS);
            hasGroup = buf.getUnsignedShort(at + 26) == 0;
        }
        if (!hasGroup) {
            return;
        }
        long gHi = buf.getLong(at + 8);
        long gLo = buf.getLong(at + 16);
        if (gHi == 0 && gLo == 0) {
            long sHi = buf.getLong(l3 + Ipv6Packet.SRC);
            long sLo = buf.getLong(l3 + Ipv6Packet.SRC + 8);
            boolean present = now < otherQuerierUntil;
            int cmp = present ? compare(sHi, sLo, querierHi, querierLo) : -1;
            if (cmp > 0) {
                return;
            }
            querierHi = sHi;
            querierLo = sLo;
            if (!present) {
                querierDelayUntil = now + delay;
            }
            otherQuerierUntil = now + QUERIER_INTERVAL_NANOS;
            if (in != null) {
                routerPortUntil.put(in, now + QUERIER_INTERVAL_NANOS);
            }
            return;
        }
        MdbEntry e = mdb.get(gHi, gLo);
        if (e != null) {
            e.shortenAll(now + delay * LAST_MEMBER_COUNT, now);
        }
    }

    /** RFC 3810 §5.1.3: the maximum response code in milliseconds, exponential from 32768 on. */
    static long mrcMillis(int code) {
        if (code < 32768) {
            return code;
        }
        int mant = code & 0xfff;
        int exp = (code >>> 12) & 0x7;
        return (long) (mant | 0x1000) << (exp + 3);
    }

    private static int compare(long aHi, long aLo, long bHi, long bLo) {
        int c = Long.compareUnsigned(aHi, bHi);
        return c != 0 ? c : Long.compareUnsigned(aLo, bLo);
    }

    /** br_multicast_disable_port: a port that went down or left forgets its groups and its router status. */
    void forgetPort(BridgePort port, long now) {
        mdb.forgetPort(port, now);
        routerPortUntil.remove(port);
    }

    private void reset() {
        mdb.clear();
        routerPortUntil.clear();
        otherQuerierUntil = Long.MIN_VALUE;
        querierDelayUntil = Long.MIN_VALUE;
        group = null;
    }
}
