package dev.usnet.tools.experiment;

import dev.usnet.tcp.cc.KernelPreset;
import dev.usnet.tools.UsageException;
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

/** {@code usnet experiment ...}: reproducible experiments in virtual time. */
@Command(name = "experiment", mixinStandardHelpOptions = true,
        description = "Reproducible experiments in virtual time.",
        subcommands = {ExperimentCommand.CreditBug.class})
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
            } catch (IllegalArgumentException | dev.usnet.tools.topology.TopologyException e) {
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
}
