package dev.usnet.core.fuzz;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.buf.CowPolicy;
import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.LeakGuard;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import java.util.HexFormat;
import java.util.List;

/**
 * A namespace under fuzzing, a dual-stack router or a bridge (IPv6 on the bridge device) with three ports wired to
 * a tester, built fresh for every input
 * so each input's outcome depends on that input alone. It runs a {@link FrameScript} and checks after every frame
 * and at the end of the input:
 * <ul>
 * <li>no exception escapes the stack (one thrown by a task propagates out of the virtual scheduler);</li>
 * <li>every frame has a fate: it was forwarded (routed or bridged), delivered to the namespace's own protocols
 *     (IP local delivery, ARP), taken by reassembly, or counted as dropped under a {@link DropReason} — a frame
 *     that leaves none of these traces vanished silently;</li>
 * <li>the link-layer accounting adds up: every frame the tester sent was received or counted as a receive drop
 *     by the port, and every frame a port transmitted reached the tester;</li>
 * <li>once every timer has run out (reassembly, neighbour resolution, proxy ARP), nothing is left waiting;</li>
 * <li>the namespace still forwards a known-good probe (the router one of each family);</li>
 * <li>no buffer leaks: after the namespace is closed, every buffer allocated for the input is released
 *     ({@link LeakGuard#liveBuffers()}, exact, no GC needed).</li>
 * </ul>
 */
public final class NamespaceUnderFuzz implements FrameScript.Sink, AutoCloseable {
    /** Which kind of namespace to build. */
    public enum Kind { ROUTER, BRIDGE }

    static final long PORT_MAC = 0x0200_0000_0100L;
    static final long H1 = 0x0200_0000_aa01L;
    static final long H2 = 0x0200_0000_bb02L;
    static final long BR_MAC = 0x0200_0000_00feL;
    /** Bridge probe hosts: X is announced behind port 2 before the probe, Y sends from port 1. */
    static final long X = 0x0200_0000_7702L;
    static final long Y = 0x0200_0000_7701L;
    private static final byte[] PROBE_MARK = "usnet-known-good-probe".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private final Kind kind;
    private final long liveBefore;
    private final TestNet net = new TestNet();
    private final NetStack dut;
    private NetStack tester;
    private final TestNet.Wire[] wires = new TestNet.Wire[3];
    private final FrameScript.Context context;
    private long framesSent;
    private int frameNo;

    public NamespaceUnderFuzz(Kind kind, int variant) {
        this.kind = kind;
        this.liveBefore = LeakGuard.liveBuffers();
        this.dut = net.ns(kind == Kind.ROUTER ? "r" : "b");
        if (kind == Kind.ROUTER) {
            // IPv6 on every port before the ports exist, so each comes up with its link-local address; duplicate
            // address detection (for the link-local addresses; the global ones say nodad) only in some variants.
            dut.knobs().set("net.ipv6.conf.default.disable_ipv6", "0");
            dut.knobs().set("net.ipv6.conf.default.accept_dad", (variant & 0x80) != 0 ? "1" : "0");
            dut.knobs().set("net.ipv6.conf.all.forwarding", "1");
            dut.knobs().set("net.ipv6.icmp.ratelimit", (variant & 0x40) != 0 ? "1000" : "0");
            for (int i = 0; i < 3; i++) {
                wires[i] = net.wire(dut, "r" + (i + 1), PORT_MAC | (i + 1));
                TestNet.addr(dut, wires[i].dutEnd, "198.18." + (i + 1) + ".1/24");
                dut.ipv6().addAddress(wires[i].dutEnd, Ipv6Addr.parse("2001:db8:" + (i + 1) + "::1"), 64, true);
            }
            dut.knobs().set("net.ipv4.ip_forward", "1");
            dut.knobs().set("net.ipv4.icmp_ratelimit", (variant & 0x40) != 0 ? "1000" : "0");
            dut.knobs().set("usnet.forward.cow", CowPolicy.values()[variant & 3].name().toLowerCase().replace('_', '-'));
            if ((variant & 4) != 0) {
                dut.knobs().set("net.ipv4.conf.all.rp_filter", "1");
            }
            if ((variant & 8) != 0) {
                dut.knobs().set("net.ipv4.conf.r1.proxy_arp", "1");
                dut.knobs().set("net.ipv4.conf.r3.proxy_arp", "1");
            }
            if ((variant & 0x10) != 0) {
                wires[1].dutEnd.setMtu(576);
            }
            if ((variant & 0x20) != 0) {
                dut.knobs().set("net.ipv4.conf.all.send_redirects", "0");
            }
            dut.neigh().addPermanent(wires[0].dutEnd, Ipv4Addr.parse("198.18.1.2"), H1);
            dut.neigh().addPermanent(wires[1].dutEnd, Ipv4Addr.parse("198.18.2.2"), H2);
            dut.routes().add(new Route(Ipv4Addr.parse("198.19.1.0"), 24, RouteType.UNREACHABLE, 0, null, 0, 0, false));
            dut.routes().add(new Route(Ipv4Addr.parse("198.19.2.0"), 24, RouteType.PROHIBIT, 0, null, 0, 0, false));
            dut.routes().add(new Route(Ipv4Addr.parse("198.19.3.0"), 24, RouteType.BLACKHOLE, 0, null, 0, 0, false));
            dut.routes().add(new Route(Ipv4Addr.parse("198.19.4.0"), 24, RouteType.UNICAST,
                    Ipv4Addr.parse("198.18.3.9"), wires[2].dutEnd, 0, 0, false));
            dut.ipv6().neigh().addPermanent(wires[0].dutEnd, H1_6.hi(), H1_6.lo(), H1);
            dut.ipv6().neigh().addPermanent(wires[1].dutEnd, H2_6.hi(), H2_6.lo(), H2);
            dut.ipv6().fib().add(route6("2001:db8:f1::", RouteType.UNREACHABLE, null, null));
            dut.ipv6().fib().add(route6("2001:db8:f2::", RouteType.PROHIBIT, null, null));
            dut.ipv6().fib().add(route6("2001:db8:f3::", RouteType.BLACKHOLE, null, null));
            dut.ipv6().fib().add(route6("2001:db8:f4::", RouteType.UNICAST, "2001:db8:3::9", wires[2].dutEnd));
            UdpSocket echo = dut.udp().bind(0, 7);
            echo.setReceiver((s, src, sport, payload, off, len) -> s.sendTo(src, sport, payload, off, len));
            dut.udp().bind(0, 53);
            context = new FrameScript.Context(3,
                    new long[] {PORT_MAC | 1, PORT_MAC | 2, PORT_MAC | 3, H1, H2},
                    new int[] {ip("198.18.1.1"), ip("198.18.2.1"), ip("198.18.3.1"), ip("198.18.1.2"),
                        ip("198.18.2.2"), ip("198.18.3.7"), ip("198.18.1.255"), ip("198.19.1.1"), ip("198.19.2.1"),
                        ip("198.19.3.1"), ip("198.19.4.1"), ip("198.19.99.1")},
                    addrs6("2001:db8:1::1", "2001:db8:2::1", "2001:db8:3::1", "2001:db8:1::2", "2001:db8:2::2",
                            "2001:db8:3::7", "2001:db8:3::9", "2001:db8:f1::1", "2001:db8:f2::1", "2001:db8:f3::1",
                            "2001:db8:f4::1", "2001:db8:99::1", linkLocal(PORT_MAC | 1), linkLocal(PORT_MAC | 2),
                            linkLocal(PORT_MAC | 3), linkLocal(H1), linkLocal(H2)));
        } else {
            Bridge br = new Bridge("br0", BR_MAC);
            dut.register(br);
            for (int i = 0; i < 3; i++) {
                wires[i] = net.wire(dut, "p" + (i + 1), PORT_MAC | (i + 1));
                var port = br.addPort(wires[i].dutEnd);
                if (i == 0 && (variant & 4) != 0) {
                    port.setHairpin(true);
                }
                if (i == 2 && (variant & 8) != 0) {
                    port.setLearning(false);
                }
                if (i == 1 && (variant & 0x10) != 0) {
                    port.setUnicastFlood(false);
                }
            }
            // IPv6 on the bridge device alone (its ports are enslaved and never see IP), a host: router
            // advertisements from the fuzzer are taken (accept_ra, SLAAC), no router solicitations of its own.
            dut.knobs().set("net.ipv6.conf.br0.disable_ipv6", "0");
            dut.knobs().set("net.ipv6.conf.br0.accept_dad", "0");
            dut.knobs().set("net.ipv6.conf.br0.router_solicitations", "0");
            br.setUp(true);
            TestNet.addr(dut, br, "198.18.0.1/24");
            dut.ipv6().addAddress(br, Ipv6Addr.parse("2001:db8::1"), 64, true);
            if ((variant & 1) != 0) {
                dut.knobs().set("net.bridge.bridge-nf-call-iptables", "1");
            }
            if ((variant & 2) != 0) {
                br.setGroupFwdMask(0xfff8);
            }
            if ((variant & 0x20) != 0) {
                br.setAgeingNanos(1_000_000_000L);
            }
            dut.knobs().set("net.ipv4.icmp_ratelimit", "0");
            context = new FrameScript.Context(3,
                    new long[] {BR_MAC, PORT_MAC | 1, PORT_MAC | 2, PORT_MAC | 3, X, Y, H1},
                    new int[] {ip("198.18.0.1"), ip("198.18.0.2"), ip("198.18.0.255"), ip("198.18.0.9")},
                    addrs6("2001:db8::1", "2001:db8::2", "2001:db8::9", linkLocal(BR_MAC), linkLocal(X), linkLocal(Y)));
        }
    }

    private static String hex(byte[] f) {
        return f.length + " bytes: " + HexFormat.of().formatHex(f, 0, Math.min(f.length, 96))
                + (f.length > 96 ? "..." : "");
    }

    private static int ip(String s) {
        return Ipv4Addr.parse(s);
    }

    static final Ipv6Addr H1_6 = Ipv6Addr.parse("2001:db8:1::2");
    static final Ipv6Addr H2_6 = Ipv6Addr.parse("2001:db8:2::2");

    private static Route6 route6(String prefix, RouteType type, String gateway, Device dev) {
        return new Route6(Ipv6Addr.parse(prefix), 48, type, gateway == null ? null : Ipv6Addr.parse(gateway), dev,
                Route6.METRIC_USER, false);
    }

    /** The link-local address a port with {@code mac} makes at link up (EUI-64, addr_gen_mode 0). */
    static String linkLocal(long mac) {
        long iid = ((mac >>> 24) << 40) | (0xfffeL << 24) | (mac & 0xff_ffffL);
        return new Ipv6Addr(0xfe80_0000_0000_0000L, iid ^ 0x0200_0000_0000_0000L).toString();
    }

    private static long[] addrs6(String... text) {
        long[] a = new long[text.length * 2];
        for (int i = 0; i < text.length; i++) {
            Ipv6Addr x = Ipv6Addr.parse(text[i]);
            a[2 * i] = x.hi();
            a[2 * i + 1] = x.lo();
        }
        return a;
    }

    public FrameScript.Context context() {
        return context;
    }

    /** The namespace under test, for tests that check what a script did to it. */
    NetStack dut() {
        return dut;
    }

    /** Runs one input: a variant byte, then the script. */
    public static void fuzz(Kind kind, byte[] data) {
        FuzzBytes in = new FuzzBytes(data);
        try (NamespaceUnderFuzz n = new NamespaceUnderFuzz(kind, in.u8())) {
            FrameScript.run(in, n.context, n);
            n.finish();
        }
    }

    /** The router the IPv6 input target keeps from one input to the next (built at its first input). */
    private static NamespaceUnderFuzz ipv6Router;

    /**
     * The IPv6 input target: an IPv6-only script into one dual-stack router kept across inputs (building a
     * namespace per input would cost more than the input), so the IPv6 parsers — the header check, the
     * extension-header walk, reassembly, ICMPv6 and neighbour discovery — run as fast as they go. Each frame keeps
     * the per-frame fate check; after each input and 70 s of timers (ip6frag_time is 60 s) nothing waits on a
     * neighbour or in the backlog, the link accounting adds up, and no buffer is held that was not before it.
     */
    public static void fuzzIpv6Input(byte[] data) {
        if (ipv6Router == null) {
            ipv6Router = new NamespaceUnderFuzz(Kind.ROUTER, 0);
        }
        ipv6Router.runIpv6(new FuzzBytes(data));
    }

    private void runIpv6(FuzzBytes in) {
        long live = LeakGuard.liveBuffers();
        FrameScript.runIpv6(in, context, this);
        net.run(70_000_000_000L);
        for (Neighbour n : dut.ipv6().neigh().list()) {
            if (n.queued() != 0) {
                throw new AssertionError("IPv6 neighbour " + n + " still holds " + n.queued() + " packet(s) after 70 s");
            }
        }
        // ip6frag_time is 60 s: every datagram of the input is reassembled or timed out by now.
        if (dut.ipv6().defrag().pending() != 0) {
            throw new AssertionError(dut.ipv6().defrag().pending() + " IPv6 datagram(s) still wait for fragments after 70 s");
        }
        if (dut.backlogLength() != 0) {
            throw new AssertionError(dut.backlogLength() + " frame(s) left in the receive backlog");
        }
        checkLinkAccounting();
        long now = LeakGuard.liveBuffers();
        if (now != live) {
            throw new AssertionError((now - live) + " buffer(s) more held after the input and 70 s of timers than"
                    + " before it (a leak, or a queue that never drains)");
        }
        // The router lives across inputs: what its wires captured must not (a campaign of 2.4 million inputs
        // filled a 1 GiB heap with these copies).
        for (TestNet.Wire w : wires) {
            w.clear();
        }
    }

    @Override
    public void frame(int port, byte[] frame) {
        frameNo++;
        long before = fates();
        framesSent++;
        wires[port].send(frame);
        net.settle();
        if (fates() == before) {
            throw new AssertionError("frame " + frameNo + " into port " + (port + 1) + " of the " + kind
                    + " left no trace: not forwarded, delivered, queued for reassembly nor counted as dropped: "
                    + hex(frame));
        }
    }

    @Override
    public void advance(long nanos) {
        net.run(nanos);
    }

    /**
     * The sum of the counters that mark a frame's end in this namespace: every drop by reason (the tester's too:
     * an oversized frame is refused on its way in and counted by the sender, as veth does), IP local deliveries,
     * forwarded datagrams, fragments taken by reassembly, ARP packets processed, frames the bridge forwarded or
     * flooded; and frames still waiting in the receive backlog (the CPU model can hold them back).
     */
    private long fates() {
        tester = wires[0].end.stack();
        var m = dut.mib();
        return dut.drops().total() + tester.drops().get(DropReason.PKT_TOO_BIG) + m.get(Mib.IpInDelivers)
                + m.get(Mib.IpForwDatagrams) + m.get(Mib.IpReasmReqds) + m.get(Mib.ArpInRequests)
                + m.get(Mib.ArpInReplies) + m.get(Mib.Ip6InDelivers) + m.get(Mib.Ip6OutForwDatagrams)
                + m.get(Mib.Ip6ReasmReqds) + dut.cpu().bridgeForwards() + dut.backlogLength();
    }

    /**
     * Knob values: up to four knobs of the router set from the input (a key the stack knows, with a device put in,
     * or any text; a value from the edges of the ranges, or any text), then the rest of the input as a script. A
     * knob either takes the value or refuses it with an IllegalArgumentException that names the key; a value it
     * took reads back as text that sets the same value again. The traffic after it must keep the per-frame and
     * link checks and leak nothing; the probe and the end-of-input queue checks are left out, as knobs may turn
     * forwarding off or stretch timers past any bound.
     */
    public static void fuzzKnobs(byte[] data) {
        FuzzBytes in = new FuzzBytes(data);
        try (NamespaceUnderFuzz n = new NamespaceUnderFuzz(Kind.ROUTER, in.u8() & 0x3f)) {
            int k = 1 + in.u8() % 4;
            for (int i = 0; i < k; i++) {
                n.setKnob(knobKey(in), knobValue(in));
            }
            FrameScript.run(in, n.context, n);
            n.net.run(120_000_000_000L);
            n.checkLinkAccounting();
        }
    }

    private static final List<String> KNOWN = dev.usnet.core.knob.Knobs.known();
    private static final String[] DEVS = {"r1", "r2", "r3", "all", "default", "lo", "eth9", ""};
    private static final String[] VALUES = {"0", "1", "2", "-1", "3", "64", "255", "65535", "65536", "2147483647",
        "2147483648", "-2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "0x10",
        " 7 ", "", "1e3", "1.5", "on", "none", "rate 1kbit", "delay 10ms 5ms", "loss 100%", "limit 1", "4096 87380 6291456",
        "head-copy", "skip-ttl", "reno", "cubic", "3.19"};

    /** Knob values alone, on a fresh {@code Knobs} (no namespace, no traffic): the same checks, much faster. */
    public static void fuzzKnobValues(byte[] data) {
        FuzzBytes in = new FuzzBytes(data);
        var knobs = new dev.usnet.core.knob.Knobs();
        while (in.hasMore()) {
            setKnob(knobs, knobKey(in), knobValue(in));
        }
    }

    private static String knobKey(FuzzBytes in) {
        int s = in.u8();
        if (s == 255) {
            return new String(in.bytes(in.u8() % 64), java.nio.charset.StandardCharsets.ISO_8859_1);
        }
        String k = KNOWN.get(s % KNOWN.size());
        return k.replace("<dev>", DEVS[in.u8() % DEVS.length]);
    }

    private static String knobValue(FuzzBytes in) {
        int s = in.u8();
        if (s < VALUES.length) {
            return VALUES[s];
        }
        if (s < 200) {
            return Long.toString((long) in.u32() << (in.u8() % 33));
        }
        return new String(in.bytes(in.u8() % 48), java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    private void setKnob(String key, String value) {
        setKnob(dut.knobs(), key, value);
    }

    private static void setKnob(dev.usnet.core.knob.Knobs knobs, String key, String value) {
        try {
            knobs.set(key, value);
        } catch (IllegalArgumentException e) {
            String m = e.getMessage();
            if (m == null || !m.contains(key.trim())) {
                throw new AssertionError("refusing '" + value + "' for '" + key + "' must name the key: " + m, e);
            }
            return;
        }
        String k = key.trim();
        String shown = knobs.get(k);
        try {
            knobs.set(k, shown);
        } catch (IllegalArgumentException e) {
            throw new AssertionError(k + " took '" + value + "' and shows it as '" + shown + "', which it refuses", e);
        }
        if (!knobs.get(k).equals(shown)) {
            throw new AssertionError(k + ": '" + value + "' shows as '" + shown + "', set again as '" + knobs.get(k) + "'");
        }
    }

    /** The end-of-input checks, see the class comment. */
    public void finish() {
        // Every timer that can hold a packet runs out well within this: ipfrag_time 30 s, ARP 3 x 1 s, proxy_delay.
        net.run(120_000_000_000L);
        if (dut.ipDefrag().pending() != 0) {
            throw new AssertionError(dut.ipDefrag().pending() + " datagram(s) still wait for fragments after 120 s");
        }
        // ip6frag_time is 60 s: no IPv6 datagram may still wait either.
        if (dut.ipv6().defrag().pending() != 0 || dut.ipv6().defrag().memory() != 0) {
            throw new AssertionError(dut.ipv6().defrag().pending() + " IPv6 datagram(s) still wait for fragments after 120 s ("
                    + dut.ipv6().defrag().memory() + " bytes held)");
        }
        for (Neighbour n : dut.neigh().list()) {
            if (n.queued() != 0) {
                throw new AssertionError("neighbour " + n + " still holds " + n.queued() + " packet(s) after 120 s");
            }
        }
        for (Neighbour n : dut.ipv6().neigh().list()) {
            if (n.queued() != 0) {
                throw new AssertionError("IPv6 neighbour " + n + " still holds " + n.queued() + " packet(s) after 120 s");
            }
        }
        if (dut.backlogLength() != 0) {
            throw new AssertionError(dut.backlogLength() + " frame(s) left in the receive backlog");
        }
        checkLinkAccounting();
        probe();
        checkLinkAccounting();
    }

    private void checkLinkAccounting() {
        tester = wires[0].end.stack();
        long received = 0;
        long sentByPorts = 0;
        long seenByTester = 0;
        for (TestNet.Wire w : wires) {
            Device d = w.dutEnd;
            received += d.stats().rxPackets + d.stats().rxDropped;
            sentByPorts += d.stats().txPackets;
            seenByTester += w.end.stats().rxPackets + w.end.stats().rxDropped;
        }
        // A frame too big for a port is refused on the way in and counted as the port's rx drop (veth).
        if (received != framesSent) {
            throw new AssertionError("the tester sent " + framesSent + " frames; the ports received or dropped "
                    + received);
        }
        if (sentByPorts != seenByTester) {
            throw new AssertionError("the ports transmitted " + sentByPorts + " frames; the tester saw " + seenByTester);
        }
    }

    /** A datagram the namespace must forward whatever came before: exactly one copy out of the right port. */
    private void probe() {
        for (TestNet.Wire w : wires) {
            w.clear();
        }
        byte[] probe;
        if (kind == Kind.ROUTER) {
            probe = Frames.udp(H1, PORT_MAC | 1, "198.18.1.2", "198.18.2.2", 64, 40, 4242, false);
        } else {
            // X announces itself behind port 2; then Y on port 1 sends to X.
            frame(1, Frames.udp(X, 0xffff_ffff_ffffL, "198.18.0.77", "198.18.0.255", 64, 8, 1, false));
            for (TestNet.Wire w : wires) {
                w.clear();
            }
            probe = Frames.udp(Y, X, "198.18.0.78", "198.18.0.77", 64, 40, 4242, false);
        }
        System.arraycopy(PROBE_MARK, 0, probe, probe.length - PROBE_MARK.length, PROBE_MARK.length);
        Frames.fixIpChecksum(probe);
        probe[14 + 20 + 6] = 0;
        probe[14 + 20 + 7] = 0;
        frame(0, probe);
        int out = 1;
        List<byte[]> got = wires[out].frames().stream().filter(NamespaceUnderFuzz::isProbe).toList();
        if (got.size() != 1) {
            throw new AssertionError("the known-good probe came out of port " + (out + 1) + " " + got.size()
                    + " times, expected once; drops: " + dut.drops().snapshot());
        }
        if (wires[0].frames().stream().anyMatch(NamespaceUnderFuzz::isProbe)) {
            throw new AssertionError("the known-good probe went back out of the port it came in on");
        }
        byte[] f = got.get(0);
        if (kind == Kind.ROUTER && (f[22] & 0xff) != 63) {
            throw new AssertionError("the routed probe left with TTL " + (f[22] & 0xff) + ", expected 63");
        }
        if (kind == Kind.ROUTER) {
            probe6();
        }
    }

    /** The IPv6 probe: a UDP datagram from H1 to H2 routed once, out of port 2 only, hop limit 63. */
    private void probe6() {
        for (TestNet.Wire w : wires) {
            w.clear();
        }
        int udpLen = 8 + PROBE_MARK.length;
        byte[] l4 = new byte[udpLen];
        FrameScript.put16at(l4, 0, 4242);
        FrameScript.put16at(l4, 2, 9);
        FrameScript.put16at(l4, 4, udpLen);
        System.arraycopy(PROBE_MARK, 0, l4, 8, PROBE_MARK.length);
        long[] src = {H1_6.hi(), H1_6.lo()};
        long[] dst = {H2_6.hi(), H2_6.lo()};
        Ipv6Frames.fixL4(l4, 0, udpLen, Ipv6Frames.UDP, src, dst);
        byte[] probe = new byte[14 + 40 + udpLen];
        FrameScript.put48at(probe, 0, PORT_MAC | 1);
        FrameScript.put48at(probe, 6, H1);
        FrameScript.put16at(probe, 12, Ipv6Frames.ETH_P_IPV6);
        FrameScript.put32at(probe, 14, 6 << 28);
        FrameScript.put16at(probe, 18, udpLen);
        probe[20] = (byte) Ipv6Frames.UDP;
        probe[21] = 64;
        for (int i = 0; i < 8; i++) {
            probe[22 + i] = (byte) (src[0] >>> (56 - 8 * i));
            probe[30 + i] = (byte) (src[1] >>> (56 - 8 * i));
            probe[38 + i] = (byte) (dst[0] >>> (56 - 8 * i));
            probe[46 + i] = (byte) (dst[1] >>> (56 - 8 * i));
        }
        System.arraycopy(l4, 0, probe, 54, udpLen);
        frame(0, probe);
        List<byte[]> got = wires[1].frames().stream().filter(NamespaceUnderFuzz::isProbe).toList();
        if (got.size() != 1) {
            throw new AssertionError("the known-good IPv6 probe came out of port 2 " + got.size()
                    + " times, expected once; drops: " + dut.drops().snapshot());
        }
        if (wires[0].frames().stream().anyMatch(NamespaceUnderFuzz::isProbe)) {
            throw new AssertionError("the known-good IPv6 probe went back out of the port it came in on");
        }
        if ((got.get(0)[21] & 0xff) != 63) {
            throw new AssertionError("the routed IPv6 probe left with hop limit " + (got.get(0)[21] & 0xff)
                    + ", expected 63");
        }
    }

    private static boolean isProbe(byte[] f) {
        if (f.length < PROBE_MARK.length) {
            return false;
        }
        return java.util.Arrays.equals(f, f.length - PROBE_MARK.length, f.length, PROBE_MARK, 0, PROBE_MARK.length);
    }

    @Override
    public void close() {
        net.close();
        long live = LeakGuard.liveBuffers();
        if (live != liveBefore) {
            throw new AssertionError((live - liveBefore) + " buffer(s) not released after the namespace was closed"
                    + " (a leak)");
        }
    }
}
