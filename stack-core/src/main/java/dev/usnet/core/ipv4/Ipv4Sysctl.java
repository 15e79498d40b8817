package dev.usnet.core.ipv4;

import dev.usnet.core.knob.DeviceKnob;
import dev.usnet.core.knob.DeviceKnob.Combine;
import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/**
 * IPv4's knobs: the namespace-wide ones of Linux's ipv4_net_table (forwarding, TTL, reassembly, path MTU) and
 * devinet's per-device {@code net.ipv4.conf.<dev>.*}, read by input, forwarding, output and ARP.
 */
public final class Ipv4Sysctl implements SysctlTable {
    private static final long INT_MAX = Integer.MAX_VALUE;

    /** The per-device family of devinet's settings. */
    public static final String CONF = "net.ipv4.conf.";

    // Linux: writing ip_forward (or conf.all.forwarding) sets forwarding on all, default and every device.
    public static final LongKnob IP_FORWARD = LongKnob.define("net.ipv4.ip_forward", 0, 0, 1,
            "forward datagrams not addressed to this host (sets conf.<dev>.forwarding on every device)",
            (knobs, v) -> knobs.forEachDevConf(c -> c.set(Ipv4Sysctl.FORWARDING, v)));
    public static final LongKnob DEFAULT_TTL = LongKnob.define("net.ipv4.ip_default_ttl", 64, 1, 255,
            "TTL of datagrams this host originates");
    public static final LongKnob IPFRAG_TIME = LongKnob.define("net.ipv4.ipfrag_time", 30, 1, INT_MAX,
            "seconds an incomplete datagram waits for its fragments");
    public static final LongKnob IPFRAG_HIGH_THRESH = LongKnob.define("net.ipv4.ipfrag_high_thresh", 4 * 1024 * 1024,
            0, INT_MAX, "reassembly memory in bytes above which fragments are refused");
    public static final LongKnob NO_PMTU_DISC = LongKnob.define("net.ipv4.ip_no_pmtu_disc", 0, 0, 3,
            "path MTU discovery mode (0: DF set and ICMP frag-needed honoured)");
    public static final LongKnob MIN_PMTU = LongKnob.define("net.ipv4.route.min_pmtu", 552, 68, 65_535,
            "the smallest path MTU an ICMP frag-needed can set");
    public static final LongKnob MTU_EXPIRES = LongKnob.define("net.ipv4.route.mtu_expires", 600, 0, INT_MAX,
            "seconds a learned path MTU is kept");
    public static final LongKnob UDP_RMEM_PACKETS = LongKnob.define("net.ipv4.udp_rmem_packets", 256, 1, INT_MAX,
            "datagrams a UDP socket's receive queue holds");

    public static final DeviceKnob FORWARDING = DeviceKnob.define(CONF, "forwarding", 0, 0, 1, Combine.DEVICE,
            // Linux: writing conf.all.forwarding is writing ip_forward.
            (knobs, dev, v) -> {
                if (dev.equals("all")) {
                    knobs.set(IP_FORWARD, v);
                }
            },
            // A device created later forwards when the namespace does.
            knobs -> knobs.get(IP_FORWARD));
    public static final DeviceKnob PROXY_ARP = DeviceKnob.define(CONF, "proxy_arp", 0, 0, 1, Combine.OR);
    public static final DeviceKnob SEND_REDIRECTS = DeviceKnob.define(CONF, "send_redirects", 1, 0, 1, Combine.OR);
    public static final DeviceKnob ACCEPT_REDIRECTS = DeviceKnob.define(CONF, "accept_redirects", 1, 0, 1,
            Combine.DEVICE);
    public static final DeviceKnob RP_FILTER = DeviceKnob.define(CONF, "rp_filter", 0, 0, 2, Combine.MAX);
    public static final DeviceKnob ARP_IGNORE = DeviceKnob.define(CONF, "arp_ignore", 0, 0, 8, Combine.MAX);
    public static final DeviceKnob ARP_ANNOUNCE = DeviceKnob.define(CONF, "arp_announce", 0, 0, 2, Combine.MAX);
    public static final DeviceKnob ARP_ACCEPT = DeviceKnob.define(CONF, "arp_accept", 0, 0, 2, Combine.DEVICE);

    private static final List<Knob> KNOBS = List.of(IP_FORWARD, DEFAULT_TTL, IPFRAG_TIME, IPFRAG_HIGH_THRESH,
            NO_PMTU_DISC, MIN_PMTU, MTU_EXPIRES, UDP_RMEM_PACKETS);
    private static final List<DeviceKnob> DEVICE_KNOBS = List.of(FORWARDING, PROXY_ARP, SEND_REDIRECTS,
            ACCEPT_REDIRECTS, RP_FILTER, ARP_IGNORE, ARP_ANNOUNCE, ARP_ACCEPT);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public Ipv4Sysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return KNOBS;
    }

    @Override
    public List<DeviceKnob> deviceKnobs() {
        return DEVICE_KNOBS;
    }
}
