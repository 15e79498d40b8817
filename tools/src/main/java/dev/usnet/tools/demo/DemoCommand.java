package dev.usnet.tools.demo;

import dev.usnet.tools.IoErrors;
import dev.usnet.tools.UsageException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code usnet demo}: the container picture, bridged and routed, in a few seconds without privileges. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Two containers reach a host namespace over veth+bridge and over veth+routing with proxy ARP.",
                "Pings, UDP and TCP streams run over both. It prints the topology and what runs, then per path"
                + " packets, bytes, copy-on-write copies, forwarding latency and stream throughput, and the drops;"
                + " writes pcaps and .hgrm files."})
public final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--out", paramLabel = "DIR", description = "output directory (default: usnet-out/demo-<time>)")
    Path out;

    @Option(names = "--seconds", description = "how long traffic runs (default: ${DEFAULT-VALUE})")
    double seconds = 2.0;

    @Option(names = "--warmup", description = "seconds of traffic before measuring starts (JIT, ARP) (default: ${DEFAULT-VALUE})")
    double warmup = 1.0;

    @Option(names = "--rate", paramLabel = "PPS", description = "datagrams per second per UDP stream (default: ${DEFAULT-VALUE})")
    int rate = 2_000;

    @Option(names = "--size", paramLabel = "BYTES", description = "UDP payload size (default: ${DEFAULT-VALUE})")
    int size = 1000;

    @Option(names = "--keep-clones", paramLabel = "N",
            description = "senders keep their last N datagrams, as TCP's retransmission queue does (default: ${DEFAULT-VALUE}; 0 = none)")
    int keepClones = 4096;

    @Option(names = "--tcp-chunk", paramLabel = "BYTES",
            description = "bytes each of the two TCP streams (bridge, routing) writes every 10 ms (default: ${DEFAULT-VALUE}; 0 = no TCP)")
    int tcpChunk = 16384;

    @Option(names = "--seed", description = "seed of the namespaces' random sources (reachable_time, proxy_delay, TCP's"
            + " initial sequence numbers) (default: ${DEFAULT-VALUE})")
    long seed = 1;

    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "a knob for every namespace (repeatable), for example usnet.forward.cow=full-copy")
    Map<String, String> knobs = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        if (seconds <= 0 || seconds > 600) {
            throw new UsageException("--seconds must be in (0, 600], got " + seconds);
        }
        if (rate < 0 || rate > 2_000_000) {
            throw new UsageException("--rate must be 0..2000000, got " + rate);
        }
        if (size < 0 || size > 65_507) {
            throw new UsageException("--size must be 0..65507, got " + size);
        }
        if (warmup < 0 || warmup > 60) {
            throw new UsageException("--warmup must be 0..60, got " + warmup);
        }
        if (tcpChunk < 0 || tcpChunk > 4 << 20) {
            throw new UsageException("--tcp-chunk must be 0..4194304, got " + tcpChunk);
        }
        Path dir = out != null ? out
                : Path.of("usnet-out", "demo-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        PrintWriter o = spec.commandLine().getOut();
        Demo.Options opts = new Demo.Options(dir, seconds, warmup, rate, size, keepClones, tcpChunk, seed, knobs);
        Demo.printIntro(opts, o);
        o.flush();
        Demo.Report r;
        try {
            r = Demo.run(opts);
        } catch (java.nio.file.FileSystemException e) {
            Path f = e.getFile() != null ? Path.of(e.getFile()) : dir;
            throw new UsageException("cannot write the demo's captures and histograms: " + IoErrors.describe(f, e), e);
        }
        Demo.print(r, o);
        return 0;
    }
}
