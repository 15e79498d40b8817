package dev.usnet.tools.demo;

import dev.usnet.tools.cli.IoErrors;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.file.TopologyException;
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

/**
 * {@code usnet demo}: the container picture, bridged and routed, in a few seconds without privileges. The
 * picture and its traffic are examples/demo.yaml; the options that change the traffic set its values
 * ({@link DemoSpec.Overrides}), and when left out the file's values hold.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Two containers reach a host namespace over veth+bridge and over veth+routing with proxy ARP.",
                "Pings, UDP and TCP streams run over both. It prints the topology and what runs, then per path"
                + " packets, bytes, copy-on-write copies, forwarding latency and stream throughput, and the drops;"
                + " writes pcaps and .hgrm files. The topology and its traffic are examples/demo.yaml (bundled);"
                + " the traffic options below set its values."})
public final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--out", paramLabel = "DIR", description = "output directory (default: usnet-out/demo-<time>)")
    Path out;

    @Option(names = "--seconds", description = "how long traffic is measured (default: ${DEFAULT-VALUE})")
    double seconds = 2.0;

    @Option(names = "--warmup", description = "seconds of traffic before measuring starts (JIT, ARP) (default: ${DEFAULT-VALUE})")
    double warmup = 1.0;

    @Option(names = "--clock", paramLabel = "real|virtual",
            description = "real: each namespace on its own event loop, in real time (default); virtual: one discrete-event"
                    + " clock, as fast as the CPU allows, the same numbers for the same seed")
    String clock = "real";

    @Option(names = "--file", paramLabel = "FILE", description = "run this topology file instead of the bundled examples/demo.yaml")
    Path file;

    @Option(names = "--rate", paramLabel = "PPS", description = "datagrams per second of every udp-send (the file's: 2000; 0 = no UDP)")
    Integer rate;

    @Option(names = "--size", paramLabel = "BYTES", description = "UDP payload size of every udp-send (the file's: 1000)")
    Integer size;

    @Option(names = "--keep-clones", paramLabel = "N",
            description = "senders keep their last N datagrams, as TCP's retransmission queue does (the file's: 4096; 0 = none)")
    Integer keepClones;

    @Option(names = "--tcp-chunk", paramLabel = "BYTES",
            description = "bytes each TCP stream writes every interval, its write_size (the file's: 16384 every 10 ms; 0 = no TCP)")
    Integer tcpChunk;

    @Option(names = "--seed", description = "seed of the namespaces' random sources (reachable_time, proxy_delay, TCP's"
            + " initial sequence numbers) (the file's: 1)")
    Long seed;

    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "a knob for every namespace (repeatable), for example usnet.forward.cow=full-copy")
    Map<String, String> knobs = new LinkedHashMap<>();

    @Override
    public Integer call() throws Exception {
        if (seconds <= 0 || seconds > 600) {
            throw new UsageException("--seconds must be in (0, 600], got " + seconds);
        }
        if (rate != null && (rate < 0 || rate > 1_000_000)) {
            throw new UsageException("--rate must be 0..1000000, got " + rate);
        }
        if (size != null && (size < 0 || size > 65_507)) {
            throw new UsageException("--size must be 0..65507, got " + size);
        }
        if (keepClones != null && (keepClones < 0 || keepClones > 1 << 20)) {
            throw new UsageException("--keep-clones must be 0..1048576, got " + keepClones);
        }
        if (warmup < 0 || warmup > 60) {
            throw new UsageException("--warmup must be 0..60, got " + warmup);
        }
        if (tcpChunk != null && (tcpChunk < 0 || tcpChunk > 4 << 20)) {
            throw new UsageException("--tcp-chunk must be 0..4194304, got " + tcpChunk);
        }
        Demo.Clock c = switch (clock) {
            case "real" -> Demo.Clock.REAL;
            case "virtual" -> Demo.Clock.VIRTUAL;
            default -> throw new UsageException("--clock must be real or virtual, got " + clock);
        };
        Path dir = out != null ? out
                : Path.of("usnet-out", "demo-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        PrintWriter o = spec.commandLine().getOut();
        Demo.Options opts = new Demo.Options(dir, seconds, warmup, c, file,
                new DemoSpec.Overrides(rate, size, keepClones, tcpChunk, seed, knobs));
        Demo.Report r;
        try {
            Demo.Prepared p = Demo.prepare(opts);
            Demo.printIntro(p, o);
            o.flush();
            r = Demo.run(p);
        } catch (TopologyException e) {
            throw new UsageException(String.join("\n", e.errors()), e);
        } catch (java.nio.file.FileSystemException e) {
            Path f = e.getFile() != null ? Path.of(e.getFile()) : dir;
            throw new UsageException("cannot write the demo's captures and histograms: " + IoErrors.describe(f, e), e);
        }
        Demo.print(r, o);
        return 0;
    }
}
