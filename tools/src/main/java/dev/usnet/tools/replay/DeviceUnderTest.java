package dev.usnet.tools.replay;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.ipv6.Ipv6Sysctl;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.nftables.NftSyntaxException;
import dev.usnet.core.nftables.Nftables;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tcp.Tcp;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.iproute.Ip6RouteSyntax;
import dev.usnet.tools.iproute.IpRouteSyntax;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A fixture's device under test built inside usnet, mirroring the Linux oracle's setup: the DUT namespace
 * holds the bridge or router, each port is a veth whose peer sits in a tester namespace; frames are injected
 * from the tester ends and what arrives there is recorded. Runs in virtual time.
 */
public final class DeviceUnderTest implements AutoCloseable {
    private static final String DISABLE_IPV6_DEFAULT = "net.ipv6.conf.default.disable_ipv6";

    private final VirtualScheduler scheduler = new VirtualScheduler();
    private final NetStack dut;
    private final NetStack tester;
    private final Map<String, VethEnd> testerEnds = new LinkedHashMap<>();
    private final Map<String, List<PcapRecord>> captured = new LinkedHashMap<>();
    // tools/oracle/kernel_dut.py's IPv6 wait: its time limit, poll period and quiet time after.
    private static final long IPV6_READY_LIMIT_NANOS = 5_000_000_000L;
    private static final long IPV6_READY_POLL_NANOS = 20_000_000L;
    private static final long IPV6_QUIET_NANOS = 300_000_000L;
    private long captureStart;

    public DeviceUnderTest(Scenario sc, long seed) {
        dut = new NetStack("dut", scheduler, seed);
        tester = new NetStack("tester", scheduler, seed);
        try {
            build(sc);
            // Linux always has TCP: a segment to one of the DUT's addresses with no socket gets a reset.
            Tcp.install(dut);
            loadRuleset(sc);
            if (sc.hasIpv6()) {
                settleIpv6();
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Runs the DUT until {@code nanos} after capturing began (the first input frame's time base). */
    public void runUntil(long nanos) {
        scheduler.runUntil(captureStart + nanos);
    }

    private void build(Scenario sc) {
        if (sc.hasIpv6()) {
            // usnet's namespaces start without IPv6 (disable_ipv6 1); a scenario with IPv6 addresses ran with it on.
            setKnob(DISABLE_IPV6_DEFAULT, "0", "ports.addresses");
        }
        for (var e : sc.linuxSysctl().entrySet()) {
            setKnob(e.getKey(), e.getValue(), "linux.sysctl");
        }
        int i = 0;
        for (Scenario.Port p : sc.ports()) {
            long testerMac = 0x02_00_5e_ff_00_00L | (++i);
            VethEnd[] pair = VethEnd.createPair(dut, p.name(), p.mac(), tester, "t-" + p.name(), testerMac);
            VethEnd dutEnd = pair[0];
            VethEnd testEnd = pair[1];
            dutEnd.setMtu(p.mtu());
            List<PcapRecord> out = new ArrayList<>();
            captured.put(p.name(), out);
            testEnd.addTap((dev, pkt, tx, now) -> {
                if (!tx) {
                    byte[] data = new byte[pkt.length()];
                    pkt.buf().getBytes(pkt.start(), data);
                    out.add(new PcapRecord(now - captureStart, data));
                }
            });
            // The tester only listens: frames it receives are consumed after capture.
            testEnd.setRxHandler((dev, pkt) -> {
                pkt.release();
                return true;
            });
            testEnd.setUp(true);
            testerEnds.put(p.name(), testEnd);
        }
        if (sc.device().equals("bridge")) {
            Scenario.Bridge b = sc.bridge();
            for (var e : b.sysctl().entrySet()) {
                setKnob(e.getKey(), e.getValue(), "bridge.sysctl");
            }
            Bridge br = new Bridge("br0", b.mac());
            dut.register(br);
            br.setAgeingNanos((long) (b.ageingTimeS() * 1e9));
            br.multicast().setEnabled(b.multicastSnooping());
            if (b.fdbMaxLearned() != null) {
                br.setFdbMaxLearned(b.fdbMaxLearned());
            }
            for (Scenario.Port p : sc.ports()) {
                br.addPort(dut.requireDevice(p.name()));
            }
            br.setUp(true);
        } else {
            Scenario.Router r = sc.router();
            for (var e : r.sysctl().entrySet()) {
                setKnob(e.getKey(), e.getValue(), "router.sysctl");
            }
            for (Scenario.Port p : sc.ports()) {
                Device d = dut.requireDevice(p.name());
                for (String a : p.addresses()) {
                    int slash = a.indexOf('/');
                    try {
                        if (a.indexOf(':') >= 0) {
                            dut.ipv6().addAddress(d, Ipv6Addr.parse(slash < 0 ? a : a.substring(0, slash)),
                                    slash < 0 ? 128 : Integer.parseInt(a.substring(slash + 1)), false);
                            continue;
                        }
                        dut.devinet().add(d, Ipv4Addr.parse(slash < 0 ? a : a.substring(0, slash)),
                                slash < 0 ? 32 : Integer.parseInt(a.substring(slash + 1)));
                    } catch (IllegalArgumentException ex) {
                        throw new UsageException("ports." + p.name() + ".addresses: '" + a + "': " + ex.getMessage());
                    }
                }
                for (var e : p.sysctl().entrySet()) {
                    String where = "ports." + p.name() + ".sysctl";
                    String key;
                    try {
                        key = portKey(p.name(), e.getKey());
                    } catch (IllegalArgumentException ex) {
                        throw new UsageException(where + ": " + ex.getMessage());
                    }
                    setKnob(key, e.getValue(), where);
                }
            }
        }
        for (Scenario.Port p : sc.ports()) {
            dut.requireDevice(p.name()).setUp(true);
        }
        if (sc.device().equals("router")) {
            Scenario.Router r = sc.router();
            for (String rt : r.routes()) {
                try {
                    if (Ip6RouteSyntax.isIpv6(rt)) {
                        dut.ipv6().fib().addNew(Ip6RouteSyntax.parse(rt, dut));
                        continue;
                    }
                    dut.routes().addNew(IpRouteSyntax.parse(rt, dut));
                } catch (IllegalArgumentException ex) {
                    throw new UsageException("router.routes: " + ex.getMessage());
                }
            }
            for (Scenario.Neighbor n : r.neighbors()) {
                try {
                    if (n.ip().indexOf(':') >= 0) {
                        Ipv6Addr a = Ipv6Addr.parse(n.ip());
                        dut.ipv6().neigh().addPermanent(dut.requireDevice(n.dev()), a.hi(), a.lo(), n.mac());
                        continue;
                    }
                    dut.neigh().addPermanent(dut.requireDevice(n.dev()), Ipv4Addr.parse(n.ip()), n.mac());
                } catch (IllegalArgumentException ex) {
                    throw new UsageException("router.neighbors: " + ex.getMessage());
                }
            }
        }
    }

    /**
     * As the recorder does after building the DUT and setting its sysctls (the {@code net.netfilter.*} ones among
     * them, applied with the section they sit in): loads the scenario's ruleset as one {@code nft -f}
     * transaction before the first step.
     */
    private void loadRuleset(Scenario sc) {
        if (sc.nftables() == null) {
            return;
        }
        String section = sc.device().equals("bridge") ? "bridge" : "router";
        try {
            Nftables.of(dut.ipv4()).apply(sc.nftables());
        } catch (NftSyntaxException e) {
            throw new UsageException(sc.name() + ": " + section + ".nftables: " + e.getMessage());
        }
    }

    /**
     * As the recorder does before it captures an IPv6 scenario: run until no address is tentative (duplicate
     * detection done, at most 5 s), then 0.3 s more, and forget what left the ports meanwhile (duplicate detection
     * probes, the first router solicitation, link-up reports). Inputs and captures count from the end of it.
     */
    private void settleIpv6() {
        long deadline = scheduler.nanoTime() + IPV6_READY_LIMIT_NANOS;
        while (anyTentative() && scheduler.nanoTime() < deadline) {
            scheduler.runFor(IPV6_READY_POLL_NANOS);
        }
        scheduler.runFor(IPV6_QUIET_NANOS);
        captured.values().forEach(List::clear);
        captureStart = scheduler.nanoTime();
    }

    private boolean anyTentative() {
        for (var a : dut.ipv6().addrconf().list()) {
            if (a.state() == dev.usnet.core.ipv6.Inet6Ifaddr.DadState.TENTATIVE) {
                return true;
            }
        }
        return false;
    }

    /**
     * A port's sysctl as the oracle names it: {@code ipv6.KNOB} is {@code net.ipv6.conf.<port>.KNOB},
     * {@code neigh6.KNOB} {@code net.ipv6.neigh.<port>.KNOB}, anything else the IPv4 family's.
     */
    private static String portKey(String port, String name) {
        if (name.startsWith("ipv6.")) {
            return Knobs.deviceKey(Ipv6Sysctl.CONF, port, name.substring(5));
        }
        if (name.startsWith("neigh6.")) {
            return Knobs.deviceKey(Ipv6Sysctl.NEIGH.family(), port, name.substring(7));
        }
        return Knobs.deviceKey(Ipv4Sysctl.CONF, port, name);
    }

    private void setKnob(String key, String value, String where) {
        try {
            dut.knobs().set(key, value);
        } catch (IllegalArgumentException e) {
            throw new UsageException(where + ": " + e.getMessage());
        }
    }

    public VirtualScheduler scheduler() {
        return scheduler;
    }

    public NetStack dut() {
        return dut;
    }

    /** Schedules {@code frame} to enter the DUT on {@code port} at virtual time {@code atNanos}. */
    public void inject(String port, byte[] frame, long atNanos) {
        VethEnd end = testerEnds.get(port);
        if (end == null) {
            throw new UsageException("input for unknown port '" + port + "' (ports: " + testerEnds.keySet() + ")");
        }
        scheduler.schedule(() -> {
            Packet p = Packet.allocate(Buffers.HEADROOM, frame.length);
            p.buf().writeBytes(frame);
            end.transmit(p);
        }, captureStart + atNanos - scheduler.nanoTime());
    }

    /** Frames the DUT sent out of each port so far, stamped with virtual time. */
    public Map<String, List<PcapRecord>> captured() {
        return captured;
    }

    @Override
    public void close() {
        // The ruleset registry holds the namespace's IPv4 strongly through its ruleset: let both go.
        Nftables ruleset = Nftables.existing(dut.ipv4());
        if (ruleset != null) {
            ruleset.close();
        }
        dut.close();
        tester.close();
        // Let the backlogs drain so every buffer is released.
        scheduler.runFor(1);
    }
}
