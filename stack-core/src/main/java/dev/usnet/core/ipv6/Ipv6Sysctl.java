package dev.usnet.core.ipv6;

import dev.usnet.core.knob.DeviceKnob;
import dev.usnet.core.knob.DeviceKnob.Combine;
import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import dev.usnet.core.neigh.NeighSysctl;
import java.util.List;

/**
 * IPv6's knobs: the namespace-wide ones of Linux's ipv6 ctl tables (ICMPv6 rate limit, reassembly, route MTU expiry)
 * and addrconf's per-device {@code net.ipv6.conf.<dev>.*}, with Linux's defaults and ranges — except
 * {@code disable_ipv6}, which is on (1) in a namespace usnet makes until something gives it IPv6 (an address, a
 * route, a neighbour, or the knob set to 0): the namespaces every IPv4 experiment and fixture was made in had no
 * IPv6, and a Linux namespace with IPv6 on sends neighbour solicitations, MLD reports and router solicitations at
 * every link up.
 */
public final class Ipv6Sysctl implements SysctlTable {
    private static final long INT_MAX = Integer.MAX_VALUE;

    /** The per-device family of addrconf's settings. */
    public static final String CONF = "net.ipv6.conf.";

    /** The neighbour table neighbour discovery fills: {@code net.ipv6.neigh.*}, Linux's nd_tbl defaults. */
    public static final NeighSysctl.Table NEIGH = NeighSysctl.Table.declare("net.ipv6.neigh.");

    public static final LongKnob ICMP_RATELIMIT = LongKnob.define("net.ipv6.icmp.ratelimit", 1000, 0, INT_MAX,
            "milliseconds between ICMPv6 errors to one destination (a token bucket; 0 disables the limit)");
    public static final LongKnob ICMP_ECHO_IGNORE_ALL = LongKnob.define("net.ipv6.icmp.echo_ignore_all", 0, 0, 1,
            "ignore every ICMPv6 echo request");
    public static final LongKnob IP6FRAG_TIME = LongKnob.define("net.ipv6.ip6frag_time", 60, 1, INT_MAX,
            "seconds an incomplete IPv6 datagram waits for its fragments");
    public static final LongKnob IP6FRAG_HIGH_THRESH = LongKnob.define("net.ipv6.ip6frag_high_thresh", 4 * 1024 * 1024,
            0, INT_MAX, "IPv6 reassembly memory in bytes above which fragments are refused");
    public static final LongKnob MTU_EXPIRES = LongKnob.define("net.ipv6.route.mtu_expires", 600, 0, INT_MAX,
            "seconds a path MTU learned from a packet too big is kept");
    public static final LongKnob AUTO_FLOWLABELS = LongKnob.define("net.ipv6.auto_flowlabels", 1, 0, 3,
            "flow labels on locally sent packets from a hash of the flow (usnet writes 0 labels: see docs/data-plane.md)");
    public static final LongKnob FLOWLABEL_REFLECT = LongKnob.define("net.ipv6.flowlabel_reflect", 0, 0, 7,
            "bit 0: established sockets reflect the peer's flow label; bit 1: echo replies do; bit 2: TCP resets do");
    public static final LongKnob BINDV6ONLY = LongKnob.define("net.ipv6.bindv6only", 0, 0, 1,
            "IPv6 sockets bound to the unspecified address take IPv6 only, not IPv4-mapped, by default");

    public static final DeviceKnob FORWARDING = DeviceKnob.define(CONF, "forwarding", 0, 0, 1, Combine.DEVICE,
            // Linux: writing conf.all.forwarding writes every device's (addrconf_fixup_forwarding).
            (knobs, dev, v) -> {
                if (dev.equals("all")) {
                    knobs.forEachDevConf(c -> c.set(Ipv6Sysctl.FORWARDING, v));
                }
            },
            null);
    public static final DeviceKnob DISABLE_IPV6 = DeviceKnob.define(CONF, "disable_ipv6", 1, 0, 1, Combine.DEVICE,
            // Linux: writing conf.all.disable_ipv6 writes every device's (addrconf_disable_ipv6).
            (knobs, dev, v) -> {
                if (dev.equals("all")) {
                    knobs.forEachDevConf(c -> c.set(Ipv6Sysctl.DISABLE_IPV6, v));
                }
            },
            null);
    public static final DeviceKnob HOP_LIMIT = DeviceKnob.define(CONF, "hop_limit", 64, 1, 255, Combine.DEVICE);
    public static final DeviceKnob MTU = DeviceKnob.define(CONF, "mtu", 1280, 1280, 65535, Combine.DEVICE);
    public static final DeviceKnob ACCEPT_DAD = DeviceKnob.define(CONF, "accept_dad", 1, 0, 2, Combine.MAX);
    public static final DeviceKnob DAD_TRANSMITS = DeviceKnob.define(CONF, "dad_transmits", 1, 0, INT_MAX,
            Combine.DEVICE);
    /** 0: EUI-64 link-local addresses; 1: none. Stable-privacy (2) and random (3) are not modelled. */
    public static final DeviceKnob ADDR_GEN_MODE = DeviceKnob.define(CONF, "addr_gen_mode", 0, 0, 1, Combine.DEVICE);
    public static final DeviceKnob ACCEPT_RA = DeviceKnob.define(CONF, "accept_ra", 1, 0, 2, Combine.DEVICE);
    public static final DeviceKnob AUTOCONF = DeviceKnob.define(CONF, "autoconf", 1, 0, 1, Combine.DEVICE);
    /** SLAAC makes no address on a device that has this many already (0: no limit). */
    public static final DeviceKnob MAX_ADDRESSES = DeviceKnob.define(CONF, "max_addresses", 16, 0, INT_MAX,
            Combine.DEVICE);
    /** Whether a router advertisement's router lifetime makes (or ends) a default route through its sender. */
    public static final DeviceKnob ACCEPT_RA_DEFRTR = DeviceKnob.define(CONF, "accept_ra_defrtr", 1, 0, 1,
            Combine.DEVICE);
    /** Whether a router advertisement's prefix information options make on-link routes and SLAAC addresses. */
    public static final DeviceKnob ACCEPT_RA_PINFO = DeviceKnob.define(CONF, "accept_ra_pinfo", 1, 0, 1,
            Combine.DEVICE);
    /** Whether a router advertisement's MTU option sets the device's IPv6 MTU ({@code mtu}). */
    public static final DeviceKnob ACCEPT_RA_MTU = DeviceKnob.define(CONF, "accept_ra_mtu", 1, 0, 1, Combine.DEVICE);
    /** A router advertisement's current hop limit below this is not taken. */
    public static final DeviceKnob ACCEPT_RA_MIN_HOP_LIMIT = DeviceKnob.define(CONF, "accept_ra_min_hop_limit", 1,
            0, 255, Combine.DEVICE);
    /** The metric of default routes learned from router advertisements (IP6_RT_PRIO_USER). */
    public static final DeviceKnob RA_DEFRTR_METRIC = DeviceKnob.define(CONF, "ra_defrtr_metric", 1024, 1,
            0xffff_ffffL, Combine.DEVICE);
    public static final DeviceKnob ACCEPT_REDIRECTS = DeviceKnob.define(CONF, "accept_redirects", 1, 0, 1,
            Combine.DEVICE);
    /** -1 (Linux's default since 4.x): solicit until a router answers. */
    public static final DeviceKnob ROUTER_SOLICITATIONS = DeviceKnob.define(CONF, "router_solicitations", -1, -1,
            INT_MAX, Combine.DEVICE);
    public static final DeviceKnob ROUTER_SOLICITATION_INTERVAL = DeviceKnob.define(CONF,
            "router_solicitation_interval", 4, 0, INT_MAX, Combine.DEVICE);
    public static final DeviceKnob ROUTER_SOLICITATION_DELAY = DeviceKnob.define(CONF, "router_solicitation_delay",
            1, 0, INT_MAX, Combine.DEVICE);
    /** Seconds: the ceiling of the backoff between unanswered router solicitations (RFC 7559). */
    public static final DeviceKnob ROUTER_SOLICITATION_MAX_INTERVAL = DeviceKnob.define(CONF,
            "router_solicitation_max_interval", 3600, 0, INT_MAX, Combine.DEVICE);
    /** Duplicate detection probes carry a random nonce (RFC 7527); on when on for {@code all} or the device. */
    public static final DeviceKnob ENHANCED_DAD = DeviceKnob.define(CONF, "enhanced_dad", 1, 0, 1, Combine.OR);
    /** An unsolicited NA to all nodes for each address that becomes usable; on when on for all or the device. */
    public static final DeviceKnob NDISC_NOTIFY = DeviceKnob.define(CONF, "ndisc_notify", 0, 0, 1, Combine.OR);

    /**
     * usnet's own router advertisement daemon, per device ({@code usnet.ipv6.ra.<dev>.*}; Linux leaves this to
     * radvd, whose AdvSendAdvert, MinRtrAdvInterval, ... these follow). The advertised prefixes are those of the
     * device's global addresses, each with the prefix knobs' flags and lifetimes.
     */
    public static final String RA = "usnet.ipv6.ra.";
    public static final DeviceKnob RA_SEND = DeviceKnob.define(RA, "send", 0, 0, 1, Combine.DEVICE);
    public static final DeviceKnob RA_MAX_INTERVAL = DeviceKnob.define(RA, "max_interval", 600, 4, 1800,
            Combine.DEVICE);
    /** Seconds; 0 means a third of {@code max_interval}, as radvd's default. */
    public static final DeviceKnob RA_MIN_INTERVAL = DeviceKnob.define(RA, "min_interval", 0, 0, 1350,
            Combine.DEVICE);
    public static final DeviceKnob RA_ROUTER_LIFETIME = DeviceKnob.define(RA, "router_lifetime", 1800, 0, 9000,
            Combine.DEVICE);
    public static final DeviceKnob RA_CUR_HOP_LIMIT = DeviceKnob.define(RA, "cur_hop_limit", 64, 0, 255,
            Combine.DEVICE);
    /** 0: no MTU option. */
    public static final DeviceKnob RA_MTU = DeviceKnob.define(RA, "mtu", 0, 0, INT_MAX, Combine.DEVICE);
    public static final DeviceKnob RA_REACHABLE_TIME_MS = DeviceKnob.define(RA, "reachable_time_ms", 0, 0, 3_600_000,
            Combine.DEVICE);
    public static final DeviceKnob RA_RETRANS_TIMER_MS = DeviceKnob.define(RA, "retrans_timer_ms", 0, 0, INT_MAX,
            Combine.DEVICE);
    public static final DeviceKnob RA_MANAGED = DeviceKnob.define(RA, "managed", 0, 0, 1, Combine.DEVICE);
    public static final DeviceKnob RA_OTHER_CONFIG = DeviceKnob.define(RA, "other_config", 0, 0, 1, Combine.DEVICE);
    public static final DeviceKnob RA_PREFIX_ON_LINK = DeviceKnob.define(RA, "prefix_on_link", 1, 0, 1,
            Combine.DEVICE);
    public static final DeviceKnob RA_PREFIX_AUTONOMOUS = DeviceKnob.define(RA, "prefix_autonomous", 1, 0, 1,
            Combine.DEVICE);
    /** Seconds; 4294967295 is infinity. */
    public static final DeviceKnob RA_PREFIX_VALID_LIFETIME = DeviceKnob.define(RA, "prefix_valid_lifetime",
            2_592_000, 0, 0xffff_ffffL, Combine.DEVICE);
    public static final DeviceKnob RA_PREFIX_PREFERRED_LIFETIME = DeviceKnob.define(RA, "prefix_preferred_lifetime",
            604_800, 0, 0xffff_ffffL, Combine.DEVICE);
    public static final DeviceKnob MLDV1_UNSOLICITED_REPORT_INTERVAL = DeviceKnob.define(CONF,
            "mldv1_unsolicited_report_interval", 10_000, 0, INT_MAX, Combine.DEVICE);
    public static final DeviceKnob MLDV2_UNSOLICITED_REPORT_INTERVAL = DeviceKnob.define(CONF,
            "mldv2_unsolicited_report_interval", 1_000, 0, INT_MAX, Combine.DEVICE);
    public static final DeviceKnob PROXY_NDP = DeviceKnob.define(CONF, "proxy_ndp", 0, 0, 1, Combine.DEVICE);

    private static final List<Knob> KNOBS = concat(List.of(ICMP_RATELIMIT, ICMP_ECHO_IGNORE_ALL, IP6FRAG_TIME,
            IP6FRAG_HIGH_THRESH, MTU_EXPIRES, AUTO_FLOWLABELS, FLOWLABEL_REFLECT, BINDV6ONLY), NEIGH.knobs());
    private static final List<DeviceKnob> DEVICE_KNOBS = List.of(FORWARDING, DISABLE_IPV6, HOP_LIMIT, MTU, ACCEPT_DAD,
            DAD_TRANSMITS, ADDR_GEN_MODE, ACCEPT_RA, AUTOCONF, MAX_ADDRESSES, ACCEPT_RA_DEFRTR, ACCEPT_RA_PINFO, ACCEPT_RA_MTU,
            ACCEPT_RA_MIN_HOP_LIMIT, RA_DEFRTR_METRIC, ACCEPT_REDIRECTS, ROUTER_SOLICITATIONS,
            ROUTER_SOLICITATION_INTERVAL, ROUTER_SOLICITATION_DELAY, ROUTER_SOLICITATION_MAX_INTERVAL, ENHANCED_DAD,
            NDISC_NOTIFY, MLDV1_UNSOLICITED_REPORT_INTERVAL, MLDV2_UNSOLICITED_REPORT_INTERVAL, PROXY_NDP,
            RA_SEND, RA_MAX_INTERVAL, RA_MIN_INTERVAL, RA_ROUTER_LIFETIME, RA_CUR_HOP_LIMIT, RA_MTU,
            RA_REACHABLE_TIME_MS, RA_RETRANS_TIMER_MS, RA_MANAGED, RA_OTHER_CONFIG, RA_PREFIX_ON_LINK,
            RA_PREFIX_AUTONOMOUS, RA_PREFIX_VALID_LIFETIME, RA_PREFIX_PREFERRED_LIFETIME);
    private static final List<DeviceKnob> ALL_DEVICE_KNOBS = concat(DEVICE_KNOBS, NEIGH.deviceKnobs());

    private static <T> List<T> concat(List<? extends T> a, List<? extends T> b) {
        List<T> l = new java.util.ArrayList<>(a);
        l.addAll(b);
        return List.copyOf(l);
    }

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public Ipv6Sysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return KNOBS;
    }

    @Override
    public List<DeviceKnob> deviceKnobs() {
        return ALL_DEVICE_KNOBS;
    }
}
