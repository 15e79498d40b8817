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

        @Option(names = "--seed", description = "seed of the namespaces' random sources (default: ${DEFAULT-VALUE})")
        long seed = 1;

        @Option(names = "--bursts", description = "bursts per preset (default: ${DEFAULT-VALUE})")
        int bursts = CreditBugExperiment.Params.defaults().bursts();

        @Option(names = "--burst-bytes", description = "bytes per burst (default: ${DEFAULT-VALUE})")
        int burstBytes = CreditBugExperiment.Params.defaults().burstBytes();

        @Option(names = "--compute-us", description = "idle compute time between bursts in us (default: ${DEFAULT-VALUE})")
        long computeUs = CreditBugExperiment.Params.defaults().computeNanos() / 1000;

        @Option(names = "--rate-mbit", description = "link rate toward the receiver in Mbit/s (default: ${DEFAULT-VALUE})")
        long rateMbit = CreditBugExperiment.Params.defaults().rateBps() / 1_000_000;

        @Option(names = "--delay-us", description = "one-way delay in us (default: ${DEFAULT-VALUE})")
        double delayUs = CreditBugExperiment.Params.defaults().oneWayDelayNanos() / 1000.0;

        @Option(names = "--queue", description = "receive queue limit in frames (default: ${DEFAULT-VALUE})")
        int queue = CreditBugExperiment.Params.defaults().queueLimit();

        @Option(names = "--hz", description = "CONFIG_HZ of the emulated kernels, 100..1000 like usnet.hz (Linux offers 100, 250, 300"
                + " and 1000; default: ${DEFAULT-VALUE})")
        int hz = CreditBugExperiment.Params.defaults().hz();

        @Option(names = "--set", paramLabel = "KEY=VALUE",
                description = "a knob for both end namespaces after the preset (repeatable), for example one switch on its"
                        + " own: usnet.tcp.ai=per-ack")
        java.util.Map<String, String> knobs = new java.util.LinkedHashMap<>();

        @Option(names = "--gso", description = "TSO/GSO super-segments on the veths (the receive queue then counts super-segments)")
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
            if (bursts < 1 || bursts > 100_000) {
                throw new UsageException("--bursts must be 1..100000, got " + bursts);
            }
            if (burstBytes < 1 || burstBytes > 1 << 30) {
                throw new UsageException("--burst-bytes must be 1..1073741824, got " + burstBytes);
            }
            if (computeUs < 0 || rateMbit < 1 || delayUs < 0 || queue < 1) {
                throw new UsageException("--compute-us and --delay-us must not be negative, --rate-mbit and --queue must be positive");
            }
            TcpCommand.hz(hz);
            var p = new CreditBugExperiment.Params(ks, seed, bursts, burstBytes, computeUs * 1000, rateMbit * 1_000_000,
                    Math.round(delayUs * 1000), queue, hz, gso, java.util.Map.copyOf(knobs));
            try {
                dev.usnet.tcp.Tcp.defineKnobs();
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
