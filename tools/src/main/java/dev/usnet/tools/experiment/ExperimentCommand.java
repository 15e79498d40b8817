package dev.usnet.tools.experiment;

import dev.usnet.tcp.cc.KernelPreset;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.tcp.TcpCommand;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code usnet experiment ...}: reproducible experiments in virtual time, and measurements of namespace costs. */
@Command(name = "experiment", mixinStandardHelpOptions = true,
        description = "Reproducible experiments in virtual time (credit-bug), the netns-over-native table of MPI compare runs (mpi-regression), and measurements of what namespaces cost in"
                + " usnet and on the kernel here (nsid, pidns).",
        subcommands = {ExperimentCommand.CreditBug.class, MpiRegressionCommand.class, ExperimentCommand.Nsid.class, ExperimentCommand.Pidns.class})
public final class ExperimentCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** {@code usnet experiment credit-bug}. */
    @Command(name = "credit-bug", mixinStandardHelpOptions = true,
            description = {"The tcp_cong_avoid_ai credit bug (the 2015 netns + bridge + veth regression bisected to 9949afa4): an MPI-like burst app over CUBIC between two "
                    + "namespaces joined by veth + bridge with microsecond RTTs and a 1000-frame receive queue, once per "
                    + "kernel preset, in virtual time.",
                "Runs the topology file examples/credit-bug.yaml (or --file) with the topology builder, setting"
                    + " usnet.tcp.kernel to each preset and the options below as the file's knobs and app settings.",
                "Writes per preset K: trace-K.csv (cwnd, ssthresh, snd_cwnd_cnt per ACK), bursts-K.csv and"
                    + " cwnd-K.png; then cwnd-all.png and summary.txt. Same seed, same bytes."})
    public static final class CreditBug implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--out", required = true, paramLabel = "DIR", description = "output directory")
        Path out;

        @Option(names = "--kernel", split = ",", paramLabel = "K",
                description = "presets to run (default: 3.18,3.19,4.0,4.3)")
        List<String> kernels = new ArrayList<>(List.of("3.18", "3.19", "4.0", "4.3"));

        @Option(names = "--file", paramLabel = "FILE",
                description = "the topology file to run (default: examples/credit-bug.yaml); the options below override it")
        Path file;

        @Option(names = "--seed", description = "seed of the namespaces' random sources (default: the file's seed:, 1)")
        Long seed;

        @Option(names = "--bursts", description = "bursts per preset (default: the burst app's count:, 300)")
        Integer bursts;

        @Option(names = "--burst-bytes", description = "bytes per burst (default: the burst app's burst_size:, 2m)")
        Integer burstBytes;

        @Option(names = "--compute-us", description = "idle compute time between bursts in us (default: the burst app's"
                + " compute:, 100ms)")
        Long computeUs;

        @Option(names = "--rate-mbit", description = "link rate toward the receiver in Mbit/s (default: the netem rate"
                + " of the bridge port toward the server, 10gbit)")
        Long rateMbit;

        @Option(names = "--delay-us", description = "one-way delay in us (default: that port's netem delay, 10us)")
        Double delayUs;

        @Option(names = "--queue", description = "receive queue limit in frames (default: that port's netem limit, 1000)")
        Integer queue;

        @Option(names = "--hz", description = "CONFIG_HZ of the emulated kernels, 100..1000 like usnet.hz (Linux offers 100, 250, 300"
                + " and 1000; default: the client namespace's usnet.hz, 1000)")
        Integer hz;

        @Option(names = "--set", paramLabel = "KEY=VALUE",
                description = "a knob for both end namespaces after the preset (repeatable), for example one switch on its"
                        + " own: usnet.tcp.ai=per-ack")
        java.util.Map<String, String> knobs = new java.util.LinkedHashMap<>();

        @Option(names = "--gso", description = "TSO/GSO super-segments on the veths (the receive queue then counts super-segments;"
                + " default: that port's gso:, off)")
        boolean gso;

        @Override
        public Integer call() throws Exception {
            List<KernelPreset> ks = new ArrayList<>();
            for (String k : kernels) {
                try {
                    ks.add(KernelPreset.parse(k.trim()));
                } catch (IllegalArgumentException e) {
                    throw new UsageException("--kernel: " + e.getMessage());
                }
            }
            if (bursts != null && (bursts < 1 || bursts > 100_000)) {
                throw new UsageException("--bursts must be 1..100000, got " + bursts);
            }
            if (burstBytes != null && (burstBytes < 1 || burstBytes > 1 << 30)) {
                throw new UsageException("--burst-bytes must be 1..1073741824, got " + burstBytes);
            }
            if (computeUs != null && computeUs < 0 || rateMbit != null && rateMbit < 1 || delayUs != null && delayUs < 0
                    || queue != null && queue < 1) {
                throw new UsageException("--compute-us and --delay-us must not be negative, --rate-mbit and --queue must be positive");
            }
            if (hz != null) {
                TcpCommand.hz(hz);
            }
            CreditBugExperiment.Params p;
            try {
                p = file == null ? CreditBugExperiment.Params.defaults()
                        : CreditBugExperiment.Params.of(dev.usnet.tools.topology.TopologyFile.load(file));
            } catch (IllegalArgumentException | dev.usnet.tools.topology.file.TopologyException e) {
                throw new UsageException(e.getMessage());
            }
            p = p.withKernels(ks).withKnobs(knobs);
            if (seed != null) {
                p = p.withSeed(seed);
            }
            if (bursts != null) {
                p = p.withBursts(bursts);
            }
            if (burstBytes != null) {
                p = p.withBurstBytes(burstBytes);
            }
            if (computeUs != null) {
                p = p.withComputeNanos(computeUs * 1000);
            }
            if (rateMbit != null) {
                p = p.withRateBps(rateMbit * 1_000_000);
            }
            if (delayUs != null) {
                p = p.withOneWayDelayNanos(Math.round(delayUs * 1000));
            }
            if (queue != null) {
                p = p.withQueueLimit(queue);
            }
            if (hz != null) {
                p = p.withHz(hz);
            }
            if (gso) {
                p = p.withGso(true);
            }
            try {
                var probe = new dev.usnet.core.knob.Knobs();
                for (var e : knobs.entrySet()) {
                    probe.set(e.getKey(), e.getValue());
                }
            } catch (IllegalArgumentException e) {
                throw new UsageException("--set: " + e.getMessage());
            }
            PrintWriter o = spec.commandLine().getOut();
            // A preset takes seconds: say what runs at once and report each preset as it finishes.
            o.print(CreditBugExperiment.header(p));
            o.printf("running %d kernel presets in virtual time: %s%n", ks.size(),
                    String.join(", ", ks.stream().map(KernelPreset::label).toList()));
            o.flush();
            long[] t = {System.nanoTime()};
            int[] n = {0};
            var results = CreditBugExperiment.run(p, out, r -> {
                long now = System.nanoTime();
                o.printf(java.util.Locale.ROOT, "preset %s done (%d of %d, %.1f s): burst p99 %.1f us, %d retransmits%n",
                        r.kernel().label(), ++n[0], ks.size(), (now - t[0]) / 1e9, r.completionUs(99), r.retransmits());
                o.flush();
                t[0] = now;
            });
            o.print(CreditBugExperiment.table(results));
            o.println("wrote traces, bursts, plots and summary.txt to " + out.toAbsolutePath());
            return 0;
        }
    }

    /** A list option's values, each checked to lie in min..max; a UsageException naming the option otherwise. */
    static List<Integer> within(String option, List<Integer> values, int min, int max) {
        if (values.isEmpty()) {
            throw new UsageException(option + ": give at least one value");
        }
        for (int v : values) {
            if (v < min || v > max) {
                throw new UsageException(option + ": " + v + " is out of range " + min + ".." + max);
            }
        }
        return values;
    }

    static int atLeast(String option, int v, int min) {
        if (v < min) {
            throw new UsageException(option + " must be at least " + min + ", got " + v);
        }
        return v;
    }

    /** {@code usnet experiment nsid}. */
    @Command(name = "nsid", mixinStandardHelpOptions = true,
            description = {"Another namespace's addresses asked for by nsid, without entering it, against entering it: in usnet"
                    + " (NamespaceRegistry's dump by nsid on the asking thread against the same dump run as a task on the"
                    + " namespace's own event loop, real time) and on the kernel here (RTM_GETADDR with IFA_TARGET_NETNSID"
                    + " against setns + RTM_GETADDR + setns back, over kernel namespaces usnet-nsq-PID-* it creates and deletes;"
                    + " needs root), beside the historical 81 us against 162 us.",
                "Prints per namespace count the median and mean of each way, each query timed; docs/namespace-queries.md."})
    public static final class Nsid implements java.util.concurrent.Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--namespaces", split = ",", paramLabel = "N", description = "usnet namespace counts (default: 1,100,10000)")
        List<Integer> namespaces = new ArrayList<>(List.of(1, 100, 10_000));

        @Option(names = "--queries", paramLabel = "N", description = "usnet queries per dump, way and count (default: 100000)")
        int queries = 100_000;

        @Option(names = "--loops", paramLabel = "L", description = "event loops the usnet namespaces run on (default: 2)")
        int loops = 2;

        @Option(names = "--kernel-namespaces", split = ",", paramLabel = "N",
                description = "kernel namespace counts (default: 1,100,1000)")
        List<Integer> kernelNamespaces = new ArrayList<>(List.of(1, 100, 1000));

        @Option(names = "--kernel-queries", paramLabel = "N", description = "kernel queries per way and count (default: 100000)")
        int kernelQueries = 100_000;

        @Option(names = "--no-kernel", description = "only the usnet part")
        boolean noKernel;

        @Option(names = "--no-usnet", description = "only the kernel part")
        boolean noUsnet;

        @Option(names = "--json", paramLabel = "FILE", description = "also write the tables as JSON")
        Path json;

        @Override
        public Integer call() throws Exception {
            within("--namespaces", namespaces, 1, 1_000_000);
            within("--kernel-namespaces", kernelNamespaces, 1, 100_000);
            atLeast("--queries", queries, 1);
            atLeast("--kernel-queries", kernelQueries, 1);
            atLeast("--loops", loops, 1);
            if (noKernel && noUsnet) {
                throw new UsageException("--no-kernel and --no-usnet leave nothing to run");
            }
            return dev.usnet.tools.experiment.nsid.NsidExperiment.run(new dev.usnet.tools.experiment.nsid.NsidExperiment.Options(
                    noUsnet ? List.of() : namespaces, queries, loops, !noKernel, kernelNamespaces, kernelQueries, json),
                    dev.usnet.tools.kernel.Privileges.ofThisProcess(), spec.commandLine().getOut());
        }
    }

    /** {@code usnet experiment pidns}. */
    @Command(name = "pidns", mixinStandardHelpOptions = true,
            description = {"What pid namespaces cost, by model and nesting depth: usnet's models (none, flat, multilevel) in"
                    + " process (spawn+exit, lookup by pid in the process's own namespace, a ps walk) at each depth, and the"
                    + " kernel here (its multilevel model) with nested unshare --pid --fork running spawn and exec loops at"
                    + " each depth (needs root), beside the 2007 unixbench figures of the flat and multilevel patches.",
                "Medians over interleaved rounds; docs/pid-namespaces.md."})
    public static final class Pidns implements java.util.concurrent.Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--depths", split = ",", paramLabel = "D", description = "usnet nesting depths (default: 1,2,3,4)")
        List<Integer> depths = new ArrayList<>(List.of(1, 2, 3, 4));

        @Option(names = "--rounds", paramLabel = "R", description = "usnet rounds (default: 15)")
        int rounds = 15;

        @Option(names = "--spawns", paramLabel = "N", description = "spawn+exit per round and combination (default: 20000)")
        int spawns = 20_000;

        @Option(names = "--lookups", paramLabel = "N", description = "lookups per round and combination (default: 100000)")
        int lookups = 100_000;

        @Option(names = "--walks", paramLabel = "N", description = "ps walks per round and combination (default: 100)")
        int walks = 100;

        @Option(names = "--tasks", paramLabel = "N", description = "live processes in each namespace (default: 1000)")
        int tasks = 1000;

        @Option(names = "--kernel-depths", split = ",", paramLabel = "D", description = "kernel depths (default: 0,1,2,3,4)")
        List<Integer> kernelDepths = new ArrayList<>(List.of(0, 1, 2, 3, 4));

        @Option(names = "--kernel-iterations", paramLabel = "N", description = "spawns and execs per kernel round (default: 1000)")
        int kernelIterations = 1000;

        @Option(names = "--kernel-rounds", paramLabel = "R", description = "kernel rounds (default: 7)")
        int kernelRounds = 7;

        @Option(names = "--no-kernel", description = "only the usnet part")
        boolean noKernel;

        @Option(names = "--json", paramLabel = "FILE", description = "also write the tables as JSON")
        Path json;

        @Override
        public Integer call() throws Exception {
            within("--depths", depths, 1, dev.usnet.ns.pid.PidNamespace.MAX_PID_NS_LEVEL);
            within("--kernel-depths", kernelDepths, 0, 32);
            atLeast("--rounds", rounds, 1);
            atLeast("--spawns", spawns, 1);
            atLeast("--lookups", lookups, 1);
            atLeast("--walks", walks, 1);
            within("--tasks", List.of(tasks), 1, 20_000);
            atLeast("--kernel-iterations", kernelIterations, 1);
            atLeast("--kernel-rounds", kernelRounds, 1);
            var o = new dev.usnet.tools.experiment.pidns.PidnsExperiment.Options(
                    new dev.usnet.tools.experiment.pidns.UsnetPidCosts.Params(depths, rounds, spawns, lookups, walks, tasks),
                    !noKernel, new dev.usnet.tools.experiment.pidns.KernelPidnsLoops.Params(kernelDepths, kernelIterations,
                            kernelRounds), json);
            return dev.usnet.tools.experiment.pidns.PidnsExperiment.run(o, dev.usnet.tools.kernel.Privileges.ofThisProcess(),
                    spec.commandLine().getOut());
        }
    }
}
