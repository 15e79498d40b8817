package dev.usnet.tools.app;

import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Map;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tcp.app.MpiCgGrid;
import dev.usnet.tcp.app.MpiJob;
import dev.usnet.tcp.app.MpiPattern;
import dev.usnet.tcp.app.MpiResult;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.topology.file.TopologySpec.Mpi;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

/**
 * The {@code mpi} app kind: its keys, reader and checks (on the file) and the running job (an {@link App}
 * over {@link MpiJob}). The entry sits under the namespace that launches it, as mpirun runs on one machine, and
 * names the hosts the ranks run on (docs/topology.md, "MPI jobs").
 */
public final class MpiApp extends App {
    public static final Set<String> KEYS = Set.of("kind", "hosts", "ranks_per_host", "placement", "port", "pattern", "size",
            "iterations", "compute", "local", "congestion", "send_buffer", "receive_buffer");
    /** NAS CG class B on 8 x 16 ranks moves 23.4 MB per iteration: 43 iterations are about 1 GB (docs/topology.md). */
    static final int DEFAULT_ITERATIONS = 43;
    static final int DEFAULT_PORT = 7000;

    // ------------------------------------------------------------------------------------------------------
    // The file

    /** Reads an {@code mpi} entry; null when something is wrong (all of it reported with its line). */
    public static Mpi read(YamlMap m) {
        m.allow(KEYS);
        Problems p = m.problems();
        boolean ok = true;
        List<String> hosts = new ArrayList<>();
        if (m.require("hosts")) {
            if (m.node("hosts") instanceof ScalarNode) {
                String h = m.string("hosts");
                ok &= h != null;
                if (h != null) {
                    hosts.add(h.trim());
                }
            } else {
                for (YamlMap.Item it : m.list("hosts")) {
                    String h = m.scalar(it.node(), it.where(), "a namespace name or a glob like node*");
                    ok &= h != null;
                    if (h != null) {
                        hosts.add(h.trim());
                    }
                }
                if (hosts.isEmpty() && ok) {
                    p.add(m.where("hosts"), "expected at least one namespace name or glob");
                    ok = false;
                }
            }
        } else {
            ok = false;
        }
        Long rph = m.has("ranks_per_host") ? m.integer("ranks_per_host", 1, 4096) : Long.valueOf(1);
        String placement = m.has("placement") ? m.choice("placement", "block", "cyclic") : "block";
        Long port = m.has("port") ? m.integer("port", 1, 65535) : Long.valueOf(DEFAULT_PORT);
        String pattern = m.has("pattern") ? m.choice("pattern", "cg", "alltoall", "ring") : "cg";
        Long size = m.has("size") ? size(m, "size", 0) : Long.valueOf(0);
        Long iterations = m.has("iterations") ? m.integer("iterations", 1, 100_000_000) : Long.valueOf(DEFAULT_ITERATIONS);
        Long compute = m.has("compute") ? time(m, "compute") : Long.valueOf(0);
        String local = m.has("local") ? m.choice("local", "shm", "tcp") : "shm";
        String cc = null;
        if (m.has("congestion")) {
            cc = m.choice("congestion", dev.usnet.tcp.cc.CongestionControls.available().toArray(new String[0]));
            ok &= cc != null;
        }
        Long sndbuf = m.has("send_buffer") ? size(m, "send_buffer", 1) : Long.valueOf(0);
        Long rcvbuf = m.has("receive_buffer") ? size(m, "receive_buffer", 1) : Long.valueOf(0);
        ok &= rph != null && placement != null && port != null && pattern != null && size != null && iterations != null
                && compute != null && local != null && sndbuf != null && rcvbuf != null;
        if (ok && !pattern.equals("cg") && size == 0) {
            p.add(m.where(), "pattern " + pattern + " needs size: (bytes per message); only cg has a default");
            ok = false;
        }
        if (!ok) {
            return null;
        }
        return new Mpi(List.copyOf(hosts), m.where("hosts"), rph.intValue(), placement, port.intValue(),
                MpiPattern.of(pattern), size.intValue(), iterations.intValue(), compute, local.equals("tcp"), cc,
                sndbuf.intValue(), rcvbuf.intValue(), m.where());
    }

    /** A size in bytes (link emulation's units: 1500, 64k, 1m) of at least {@code min}; null when bad (reported). */
    private static Long size(YamlMap m, String key, long min) {
        String s = m.string(key);
        if (s == null) {
            return null;
        }
        try {
            long v = NetemParams.parseSize(key, s);
            if (v < min || v > Integer.MAX_VALUE) {
                m.problems().add(m.where(key), "expected a size of " + min + ".." + Integer.MAX_VALUE + " bytes, got "
                        + s.trim());
                return null;
            }
            return v;
        } catch (IllegalArgumentException e) {
            m.problems().add(m.where(key), e.getMessage());
            return null;
        }
    }

    private static Long time(YamlMap m, String key) {
        String s = m.string(key);
        if (s == null) {
            return null;
        }
        try {
            return NetemParams.parseTime(key, s);
        } catch (IllegalArgumentException e) {
            m.problems().add(m.where(key), e.getMessage());
            return null;
        }
    }

    /** The namespaces {@code m.hosts()} names, in file order, each once; names or globs that match none are reported. */
    public static List<String> hosts(TopologySpec spec, Mpi m, Problems p) {
        Set<String> out = new LinkedHashSet<>();
        for (String h : m.hosts()) {
            int before = out.size();
            boolean matched = false;
            if (h.contains("*") || h.contains("?")) {
                Pattern glob = Pattern.compile(("\\Q" + h + "\\E").replace("*", "\\E.*\\Q").replace("?", "\\E.\\Q"));
                for (TopologySpec.Ns ns : spec.namespaces()) {
                    if (glob.matcher(ns.name()).matches()) {
                        matched = true;
                        out.add(ns.name());
                    }
                }
            } else if (spec.namespace(h) != null) {
                matched = true;
                out.add(h);
            }
            if (!matched && p != null) {
                p.add(m.hostsWhere(), "'" + h + "' " + (h.contains("*") || h.contains("?") ? "matches no namespace"
                        : "is no namespace of this file") + " (declared: " + names(spec) + ")");
            } else if (out.size() == before && p != null) {
                p.add(m.hostsWhere(), "'" + h + "' names only hosts listed already: each host once");
            }
        }
        return List.copyOf(out);
    }

    private static String names(TopologySpec spec) {
        List<String> n = spec.namespaces().stream().map(TopologySpec.Ns::name).toList();
        return n.size() <= 8 ? String.join(", ", n) : String.join(", ", n.subList(0, 8)) + ", ... (" + n.size() + ")";
    }

    /** Checks what spans namespaces: the hosts exist and have an address, the pattern fits the ranks, the ports fit. */
    public static void check(TopologySpec spec, Mpi m, Problems p) {
        int before = p.errorCount();
        List<String> hosts = hosts(spec, m, p);
        if (p.errorCount() > before) {
            return;
        }
        long ranks = (long) hosts.size() * m.ranksPerHost();
        try {
            m.pattern().check((int) Math.min(ranks, Integer.MAX_VALUE));
        } catch (IllegalArgumentException e) {
            p.add(m.where(), "mpi: " + hosts.size() + " hosts x " + m.ranksPerHost() + " ranks_per_host = " + ranks
                    + " ranks: " + e.getMessage());
            return;
        }
        if (m.port() + ranks - 1 > 65535) {
            p.add(m.where(), "mpi: ports " + m.port() + ".." + (m.port() + ranks - 1) + " (one per rank) go past 65535;"
                    + " give a lower port:");
        }
        for (String h : hosts) {
            if (address(spec, h) == null) {
                p.add(m.hostsWhere(), "mpi host " + h + " has no IPv4 address for the other ranks to connect to");
            }
        }
    }

    /** The address ranks on {@code host} are reached at: its first non-loopback address. */
    public static Integer address(TopologySpec spec, String host) {
        List<TopologySpec.Addr> a = spec.addresses(host);
        for (TopologySpec.Addr x : a) {
            if ((x.ip() >>> 24) != 127) {
                return x.ip();
            }
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------------------
    // The running job

    private final Mpi spec;
    private final List<String> hosts;
    private final List<MpiJob.Placement> placement = new ArrayList<>();
    private final String grid;
    private volatile MpiJob job;

    public MpiApp(String ns, NetStack stack, Mpi spec, Topology t) {
        super(ns, stack);
        this.spec = spec;
        this.hosts = hosts(t.spec(), spec, null);
        int n = hosts.size() * spec.ranksPerHost();
        for (int r = 0; r < n; r++) {
            int h = spec.placement().equals("cyclic") ? r % hosts.size() : r / spec.ranksPerHost();
            String host = hosts.get(h);
            placement.add(new MpiJob.Placement(t.stack(host), address(t.spec(), host)));
        }
        this.grid = spec.pattern() == MpiPattern.CG ? new MpiCgGrid(n).toString() : null;
    }

    public Mpi spec() {
        return spec;
    }

    /** The job once started (null before). */
    public MpiJob job() {
        return job;
    }

    /** The ranks' hosts, in file order. */
    public List<String> hosts() {
        return hosts;
    }

    /** The job's result (null before it started). */
    public MpiResult result() {
        MpiJob j = job;
        return j == null ? null : j.result();
    }

    @Override
    public String kind() {
        return "mpi";
    }

    @Override
    public void start() {
        running = true;
        int size = spec.size() > 0 ? spec.size() : spec.pattern().defaultSize(placement.size());
        MpiJob j = new MpiJob(placement, new MpiJob.Config(spec.pattern(), size, spec.iterations(), spec.computeNanos(),
                spec.localTcp(), spec.port(), spec.congestion(), spec.sendBufferBytes(), spec.receiveBufferBytes()));
        job = j;
        j.start();
    }

    @Override
    public void stop() {
        running = false;
        MpiJob j = job;
        if (j != null && !j.isFinished()) {
            j.abort();
        }
    }

    /** Whether the job finished every iteration (or can no longer). */
    public boolean isDone() {
        MpiJob j = job;
        return j != null && j.isDone();
    }

    @Override
    public String summary() {
        MpiResult r = result();
        return ns + ": " + (r == null ? "mpi " + spec.pattern().label() + ": not started" : r.format(grid))
                + ", hosts " + hostsText();
    }

    public String hostsText() {
        return hosts.size() <= 4 ? String.join(",", hosts)
                : hosts.getFirst() + ".." + hosts.getLast() + " (" + hosts.size() + ")";
    }

    @Override
    public Outcome outcome() {
        MpiResult r = result();
        return r == null ? Outcome.failed("the job never started") : r.outcome();
    }

    @Override
    public String peer() {
        return hostsText();
    }

    /** The job's bytes, bandwidth, iterations and their times, and its TCP losses; null before it has a result. */
    @Override
    public AppCounters counters() {
        MpiResult r = result();
        return r == null ? null : new AppCounters(r.bytesSent(), r.mbPerSecond() * 8, r.histogram().getTotalCount(),
                r.iteration(), r.retransmits(), r.timeouts());
    }

    @Override
    public void putResultFields(Map<String, Object> m) {
        MpiFields.put(m, this);
    }

    @Override
    public String label() {
        return ns + ": mpi " + spec.pattern().label() + " on " + hostsText();
    }
}
