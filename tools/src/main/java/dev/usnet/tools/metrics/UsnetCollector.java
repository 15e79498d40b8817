package dev.usnet.tools.metrics;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.AppCounters;
import dev.usnet.tools.app.AppKind;
import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.conntrack.ConntrackInvalid;
import dev.usnet.core.conntrack.ConntrackStats;
import dev.usnet.core.conntrack.ConntrackSysctl;
import dev.usnet.core.nat.NatCore;
import dev.usnet.core.nat.NatStats;
import dev.usnet.core.device.Device;
import dev.usnet.core.neigh.NudState;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DeviceStats;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.core.stats.Mib;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.results.NetfilterCounters;
import dev.usnet.tools.topology.build.Topology;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.HdrHistogram.Histogram;

/**
 * usnet's metrics, built at scrape time from the counters the data path keeps anyway: device counters (volatile
 * fields of one writer), drop reasons and MIB counters (atomic arrays), copy-on-write counters (LongAdders), FDB
 * and neighbour table sizes (kept per kind and state at each change), the apps' counters, and each forwarding
 * path's HdrHistogram (read through its recorder's interval swap, which never blocks the recording thread). A
 * scrape takes no lock the packet path takes and makes the packet path allocate nothing. Names follow the
 * Prometheus conventions and node_exporter where it has the concept ({@code usnet_network_receive_bytes_total},
 * {@code usnet_netstat_Tcp_RetransSegs_total}).
 */
public final class UsnetCollector implements MultiCollector {
    /** Upper bounds of the forwarding-latency buckets, seconds: 1-2.5-5 steps from 1 µs to 1 s. */
    static final double[] LATENCY_BOUNDS = {1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3,
            1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1.0, Double.POSITIVE_INFINITY};

    /**
     * The MIB groups as nstat and node_exporter's netstat collector split the counter names, a group before any that
     * is a prefix of it: IPv6's are /proc/net/snmp6's ({@code Ip6InReceives} is {@code usnet_netstat_Ip6_InReceives},
     * as node_exporter names it {@code node_netstat_Ip6_InReceives}), so both families are exported alike.
     */
    private static final String[] MIB_GROUPS = {"IpExt", "TcpExt", "Icmp6", "Icmp", "Udp6", "Udp", "Tcp", "Arp", "Neigh",
        "Ip6", "Ip"};

    private final Topology topology;
    private final Supplier<Apps> apps;

    public UsnetCollector(Topology topology, Supplier<Apps> apps) {
        this.topology = topology;
        this.apps = apps;
    }

    /** {@code usnet_netstat_<Group>_<Counter>}: the metric a MIB counter is exported as (without {@code _total}). */
    public static String netstatName(Mib m) {
        String n = m.name();
        for (String g : MIB_GROUPS) {
            if (n.startsWith(g) && n.length() > g.length()) {
                return "usnet_netstat_" + g + "_" + n.substring(g.length());
            }
        }
        return "usnet_netstat_" + n;
    }

    @Override
    public MetricSnapshots collect() {
        List<NetStack> stacks = new ArrayList<>();
        for (NetNamespace n : topology.namespaces()) {
            stacks.add(n.stack());
        }
        MetricSnapshots.Builder out = MetricSnapshots.builder();
        devices(out, stacks);
        drops(out, stacks);
        tables(out, stacks);
        mib(out, stacks);
        cow(out, stacks);
        paths(out, stacks);
        netfilter(out, stacks);
        Apps a = apps.get();
        if (a != null) {
            apps(out, a);
        }
        return out.build();
    }

    private static CounterDataPointSnapshot counter(double v, Labels l) {
        return CounterDataPointSnapshot.builder().value(v).labels(l).build();
    }

    private static GaugeDataPointSnapshot gauge(double v, Labels l) {
        return GaugeDataPointSnapshot.builder().value(v).labels(l).build();
    }

    private record DeviceCounter(String name, String help, ToLongFunction<DeviceStats> get) {}

    private static final List<DeviceCounter> DEVICE_COUNTERS = List.of(
            new DeviceCounter("usnet_network_receive_packets", "Frames the device received (ip -s link RX packets).", s -> s.rxPackets),
            new DeviceCounter("usnet_network_receive_bytes", "Bytes the device received.", s -> s.rxBytes),
            new DeviceCounter("usnet_network_receive_drop", "Frames dropped on receive (device down, backlog full, too big).", s -> s.rxDropped),
            new DeviceCounter("usnet_network_receive_errs", "Receive errors.", s -> s.rxErrors),
            new DeviceCounter("usnet_network_receive_multicast", "Multicast and broadcast frames received.", s -> s.rxMulticast),
            new DeviceCounter("usnet_network_transmit_packets", "Frames the device sent.", s -> s.txPackets),
            new DeviceCounter("usnet_network_transmit_bytes", "Bytes the device sent.", s -> s.txBytes),
            new DeviceCounter("usnet_network_transmit_drop", "Frames dropped on transmit (device down, no carrier).", s -> s.txDropped),
            new DeviceCounter("usnet_network_transmit_errs", "Transmit errors.", s -> s.txErrors));

    private static void devices(MetricSnapshots.Builder out, List<NetStack> stacks) {
        Map<String, CounterSnapshot.Builder> counters = new LinkedHashMap<>();
        for (DeviceCounter c : DEVICE_COUNTERS) {
            counters.put(c.name(), CounterSnapshot.builder().name(c.name()).help(c.help()));
        }
        GaugeSnapshot.Builder up = GaugeSnapshot.builder().name("usnet_network_up")
                .help("1 while the device is administratively up (ip link set DEV up).");
        GaugeSnapshot.Builder carrier = GaugeSnapshot.builder().name("usnet_network_carrier")
                .help("1 while the device has carrier (LOWER_UP).");
        GaugeSnapshot.Builder mtu = GaugeSnapshot.builder().name("usnet_network_mtu_bytes").help("The device's MTU.");
        for (NetStack s : stacks) {
            for (Device d : s.devices()) {
                Labels l = Labels.of("namespace", s.name(), "device", d.name());
                DeviceStats st = d.stats();
                for (DeviceCounter c : DEVICE_COUNTERS) {
                    counters.get(c.name()).dataPoint(counter(c.get().applyAsLong(st), l));
                }
                up.dataPoint(gauge(d.isUp() ? 1 : 0, l));
                carrier.dataPoint(gauge(d.hasCarrier() ? 1 : 0, l));
                mtu.dataPoint(gauge(d.mtu(), l));
            }
        }
        counters.values().forEach(b -> out.metricSnapshot(b.build()));
        out.metricSnapshot(up.build());
        out.metricSnapshot(carrier.build());
        out.metricSnapshot(mtu.build());
    }

    private static void drops(MetricSnapshots.Builder out, List<NetStack> stacks) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name("usnet_drops")
                .help("Packets dropped, by namespace and reason (Linux's skb drop reasons; docs/data-plane.md).");
        for (NetStack s : stacks) {
            for (DropReason r : DropReason.values()) {
                long v = s.drops().get(r);
                if (v != 0) {
                    b.dataPoint(counter(v, Labels.of("namespace", s.name(), "reason", r.name())));
                }
            }
        }
        out.metricSnapshot(b.build());
    }

    private static void tables(MetricSnapshots.Builder out, List<NetStack> stacks) {
        GaugeSnapshot.Builder fdb = GaugeSnapshot.builder().name("usnet_bridge_fdb_entries")
                .help("Forwarding database entries per bridge, by kind: learned, static, local (the bridge's and its ports' own).");
        CounterSnapshot.Builder fdbFail = CounterSnapshot.builder().name("usnet_bridge_fdb_learn_failures")
                .help("New addresses not learned because the table was at fdb_max_learned.");
        GaugeSnapshot.Builder neigh = GaugeSnapshot.builder().name("usnet_neighbours")
                .help("ARP cache entries per namespace, by NUD state (ip neigh).");
        for (NetStack s : stacks) {
            for (NudState st : NudState.values()) {
                neigh.dataPoint(gauge(s.neigh().count(st), Labels.of("namespace", s.name(), "state", st.name())));
            }
            for (Device d : s.devices()) {
                if (d instanceof Bridge br) {
                    var f = br.fdb();
                    fdb.dataPoint(gauge(f.learnedCount(), Labels.of("namespace", s.name(), "bridge", br.name(), "kind", "learned")));
                    fdb.dataPoint(gauge(f.staticCount(), Labels.of("namespace", s.name(), "bridge", br.name(), "kind", "static")));
                    fdb.dataPoint(gauge(f.localCount(), Labels.of("namespace", s.name(), "bridge", br.name(), "kind", "local")));
                    fdbFail.dataPoint(counter(f.learnFailures(), Labels.of("namespace", s.name(), "bridge", br.name())));
                }
            }
        }
        out.metricSnapshot(fdb.build());
        out.metricSnapshot(fdbFail.build());
        out.metricSnapshot(neigh.build());
    }

    private static void mib(MetricSnapshots.Builder out, List<NetStack> stacks) {
        for (Mib m : Mib.values()) {
            CounterSnapshot.Builder b = CounterSnapshot.builder().name(netstatName(m))
                    .help("SNMP/netstat counter " + m.name() + " (nstat).");
            for (NetStack s : stacks) {
                b.dataPoint(counter(s.mib().get(m), Labels.of("namespace", s.name())));
            }
            out.metricSnapshot(b.build());
        }
    }

    private static void cow(MetricSnapshots.Builder out, List<NetStack> stacks) {
        CounterSnapshot.Builder copies = CounterSnapshot.builder().name("usnet_cow_copies")
                .help("Copies copy-on-write made (skb_cow / pskb_expand_head), per namespace.");
        CounterSnapshot.Builder bytes = CounterSnapshot.builder().name("usnet_cow_copied_bytes")
                .help("Bytes those copies copied.");
        CounterSnapshot.Builder shared = CounterSnapshot.builder().name("usnet_cow_shared")
                .help("Packets copy-on-write found shared with another holder (skb_cloned).");
        CounterSnapshot.Builder headroom = CounterSnapshot.builder().name("usnet_cow_headroom_copies")
                .help("Copies made only because headroom was short for the outgoing device.");
        for (NetStack s : stacks) {
            Labels l = Labels.of("namespace", s.name());
            copies.dataPoint(counter(s.cow().copies(), l));
            bytes.dataPoint(counter(s.cow().bytesCopied(), l));
            shared.dataPoint(counter(s.cow().shared(), l));
            headroom.dataPoint(counter(s.cow().headroomCopies(), l));
        }
        out.metricSnapshot(copies.build());
        out.metricSnapshot(bytes.build());
        out.metricSnapshot(shared.build());
        out.metricSnapshot(headroom.build());
    }

    private static void paths(MetricSnapshots.Builder out, List<NetStack> stacks) {
        HistogramSnapshot.Builder lat = HistogramSnapshot.builder().name("usnet_forward_latency_seconds")
                .help("Forwarding latency per path, receive on the ingress device to transmit on the egress device"
                        + " (sum from the HdrHistogram's mean: values within 0.1 %).");
        CounterSnapshot.Builder bytes = CounterSnapshot.builder().name("usnet_forward_bytes")
                .help("Bytes forwarded per path (ingress -> egress device of one namespace).");
        for (NetStack s : stacks) {
            for (LatencyPaths.Path p : s.latency().all()) {
                String[] io = p.name().split("->", 2);
                Labels l = Labels.of("namespace", s.name(), "ingress", io[0], "egress", io.length > 1 ? io[1] : "");
                Histogram h = p.snapshot();
                long[] counts = new long[LATENCY_BOUNDS.length];
                long below = 0;
                for (int i = 0; i < LATENCY_BOUNDS.length; i++) {
                    long upTo = Double.isInfinite(LATENCY_BOUNDS[i]) ? h.getTotalCount()
                            : h.getCountBetweenValues(0, Math.round(LATENCY_BOUNDS[i] * 1e9));
                    counts[i] = Math.max(0, upTo - below);
                    below = Math.max(below, upTo);
                }
                double sum = h.getTotalCount() == 0 ? 0 : h.getMean() * h.getTotalCount() / 1e9;
                lat.dataPoint(HistogramDataPointSnapshot.builder().classicHistogramBuckets(
                        ClassicHistogramBuckets.of(LATENCY_BOUNDS, counts)).sum(sum).labels(l).build());
                bytes.dataPoint(counter(p.bytes(), l));
            }
        }
        out.metricSnapshot(lat.build());
        out.metricSnapshot(bytes.build());
    }

    /**
     * Connection tracking and NAT, for the namespaces where connection tracking ever ran (NetfilterCounters.ran):
     * there every counter is exported, zeros too, except invalid reasons, which like drop reasons appear once they
     * occurred. The table counters are read as {@code conntrack -C} and {@code -S} print them.
     */
    private static void netfilter(MetricSnapshots.Builder out, List<NetStack> stacks) {
        GaugeSnapshot.Builder entries = GaugeSnapshot.builder().name("usnet_nf_conntrack_entries")
                .help("Confirmed connection tracking entries (conntrack -C, nf_conntrack_count).");
        GaugeSnapshot.Builder max = GaugeSnapshot.builder().name("usnet_nf_conntrack_max")
                .help("The table's limit, net.netfilter.nf_conntrack_max.");
        CounterSnapshot.Builder stat = CounterSnapshot.builder().name("usnet_nf_conntrack_stat")
                .help("Connection tracking counters by their conntrack -S names.");
        CounterSnapshot.Builder invalid = CounterSnapshot.builder().name("usnet_nf_conntrack_invalid")
                .help("Packets connection tracking gave no entry, by reason (only reasons that occurred).");
        CounterSnapshot.Builder bindings = CounterSnapshot.builder().name("usnet_nf_nat_bindings")
                .help("Connections NAT gave a new tuple: snat (snat, masquerade), dnat, null (the null binding moved"
                        + " a clashing source port or ICMP id).");
        CounterSnapshot.Builder rewrites = CounterSnapshot.builder().name("usnet_nf_nat_rewrites")
                .help("Packet headers NAT rewrote, once per hook that rewrote one.");
        CounterSnapshot.Builder icmp = CounterSnapshot.builder().name("usnet_nf_nat_icmp_translated")
                .help("ICMP errors whose quoted header NAT translated, once per hook.");
        CounterSnapshot.Builder noTuple = CounterSnapshot.builder().name("usnet_nf_nat_no_free_tuple")
                .help("NAT bindings that found no free tuple in their range (the packet was dropped).");
        for (NetStack s : stacks) {
            if (!NetfilterCounters.ran(s)) {
                continue;
            }
            Labels l = Labels.of("namespace", s.name());
            ConntrackCore ct = ConntrackCore.of(s.ipv4());
            ConntrackStats cs = ct.stats();
            entries.dataPoint(gauge(ct.table().count(), l));
            max.dataPoint(gauge(s.knobs().get(ConntrackSysctl.MAX), l));
            cs.asMap().forEach((k, v) -> stat.dataPoint(counter(v, l.add("stat", k))));
            for (ConntrackInvalid r : ConntrackInvalid.values()) {
                long v = cs.byReason(r);
                if (v != 0) {
                    invalid.dataPoint(counter(v, l.add("reason", r.name().toLowerCase(Locale.ROOT))));
                }
            }
            NatCore nat = NatCore.of(s.ipv4());
            if (nat != null) {
                NatStats ns = nat.stats();
                bindings.dataPoint(counter(ns.sourceBindings(), l.add("kind", "snat")));
                bindings.dataPoint(counter(ns.destinationBindings(), l.add("kind", "dnat")));
                bindings.dataPoint(counter(ns.nullBindingsMoved(), l.add("kind", "null")));
                rewrites.dataPoint(counter(ns.packetsRewritten(), l));
                icmp.dataPoint(counter(ns.icmpErrorsTranslated(), l));
                noTuple.dataPoint(counter(ns.noFreeTupleFailures(), l));
            }
        }
        out.metricSnapshot(entries.build());
        out.metricSnapshot(max.build());
        out.metricSnapshot(stat.build());
        out.metricSnapshot(invalid.build());
        out.metricSnapshot(bindings.build());
        out.metricSnapshot(rewrites.build());
        out.metricSnapshot(icmp.build());
        out.metricSnapshot(noTuple.build());
    }

    private static void apps(MetricSnapshots.Builder out, Apps apps) {
        CounterSnapshot.Builder bytes = CounterSnapshot.builder().name("usnet_app_bytes")
                .help("Payload bytes an app moved so far: udp-send sent, udp-sink received, TCP what its two ends received.");
        CounterSnapshot.Builder ops = CounterSnapshot.builder().name("usnet_app_operations")
                .help("Ping replies, datagrams, rr transactions or bursts so far.");
        GaugeSnapshot.Builder outcome = GaugeSnapshot.builder().name("usnet_app_outcome")
                .help("1 for the app's outcome so far (ok, failed, or pending while a TCP app runs), 0 for the others.");
        GaugeSnapshot.Builder done = GaugeSnapshot.builder().name("usnet_app_done")
                .help("1 once a TCP app has finished (both ends closed), else 0.");
        GaugeSnapshot.Builder tput = GaugeSnapshot.builder().name("usnet_app_throughput_bytes_per_second")
                .help("A finished TCP app's throughput (its client's bytes over its duration).");
        Map<String, Integer> index = new HashMap<>();
        for (App a : apps.list()) {
            String kind = a.kind();
            int i = index.merge(a.namespace() + "." + kind, 1, Integer::sum) - 1;
            Labels l = Labels.of("app", a.namespace() + "." + kind + "-" + i, "namespace", a.namespace(), "kind", kind);
            AppCounters c = a.counters();
            long b = a.bytesSoFar();
            long n = c == null ? 0 : c.operations();
            if (c != null && c.mbitPerSecond() != null) {
                tput.dataPoint(gauge(c.mbitPerSecond() * 1e6 / 8, l));
            }
            if (a.order() == AppKind.Order.CLIENT_SERVER) {
                done.dataPoint(gauge(a.isRunning() ? 0 : 1, l));
            }
            bytes.dataPoint(counter(b, l));
            ops.dataPoint(counter(n, l));
            // A state set: ok, failed, or pending (a TCP app whose ends have no result yet).
            String state = a.outcomePending() ? "pending" : a.outcome().ok() ? "ok" : "failed";
            for (String st : new String[] {"ok", "failed", "pending"}) {
                outcome.dataPoint(gauge(st.equals(state) ? 1 : 0, l.add("outcome", st)));
            }
        }
        out.metricSnapshot(bytes.build());
        out.metricSnapshot(ops.build());
        out.metricSnapshot(outcome.build());
        out.metricSnapshot(done.build());
        out.metricSnapshot(tput.build());
    }
}
