package dev.usnet.tools.run;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.tools.app.App;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * A run's latency histogram files (docs/topology.md, "Output files"), the same in either clock: the values are
 * latencies on the run's clock, so a virtual run's files are the same for the same file and seed.
 */
public final class HistogramFiles {
    private final TopologySpec spec;
    private final Path outDir;
    private final List<Path> files = new ArrayList<>();

    public HistogramFiles(TopologySpec spec, Path outDir) {
        this.spec = spec;
        this.outDir = outDir;
    }

    /** Whether some namespace has {@code histograms: true} (TCP apps write theirs regardless). */
    public boolean anyNamespace() {
        return spec.namespaces().stream().anyMatch(Ns::histograms);
    }

    /**
     * Writes the latency histograms of every namespace with {@code histograms: true} (forwarding paths and
     * its pings' round-trip times), and those of the TCP apps whose client has finished (rr: transaction
     * latency, burst: completion time; whatever the namespace's {@code histograms:}), as .hgrm percentile
     * files, replacing earlier ones atomically. Returns the files written.
     */
    public synchronized List<Path> write(List<NetStack> stacks, Apps apps) {
        List<Path> written = new ArrayList<>();
        if (apps != null) {
            for (App a : apps.list()) {
                if (a.histogramAlways()) {
                    Histogram h = a.histogram();
                    if (h != null) {
                        written.add(writeHgrm(a.histogramName(), h));
                    }
                }
            }
        }
        for (Ns ns : spec.namespaces()) {
            if (!ns.histograms()) {
                continue;
            }
            NetStack s = stacks.stream().filter(x -> x.name().equals(ns.name())).findFirst().orElse(null);
            if (s == null) {
                continue;
            }
            for (LatencyPaths.Path p : s.latency().all()) {
                written.add(writeHgrm(ns.name() + "." + p.name().replace("->", "-to-"), p.snapshot()));
            }
            if (apps != null) {
                for (App a : apps.list()) {
                    if (!a.histogramAlways() && a.namespace().equals(ns.name()) && a.histogram() != null) {
                        written.add(writeHgrm(a.histogramName(), a.histogram()));
                    }
                }
            }
        }
        for (Path p : written) {
            if (!files.contains(p)) {
                files.add(p);
            }
        }
        return written;
    }

    /** Every file written so far, each once, in the order first written. */
    public synchronized List<Path> files() {
        return List.copyOf(files);
    }

    private Path writeHgrm(String base, Histogram h) {
        Path f = outDir.resolve(base.replaceAll("[^A-Za-z0-9_.-]", "_") + ".hgrm");
        Path tmp = f.resolveSibling(f.getFileName() + ".tmp");
        try {
            Files.createDirectories(outDir);
            try (PrintStream ps = new PrintStream(Files.newOutputStream(tmp))) {
                // Values are nanoseconds; the file reports microseconds.
                h.outputPercentileDistribution(ps, 1000.0);
            }
            Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UsageException("cannot write " + dev.usnet.tools.cli.IoErrors.describe(f, e), e);
        }
        return f;
    }
}
