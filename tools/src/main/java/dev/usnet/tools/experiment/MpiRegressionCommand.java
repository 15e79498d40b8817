package dev.usnet.tools.experiment;

import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.report.ExperimentReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code usnet experiment mpi-regression}: the netns-over-native table of compare runs of an mpi topology. */
@Command(name = "mpi-regression", mixinStandardHelpOptions = true,
        description = {"The 2015 netns + bridge + veth MPI regression, as data: reads the results.json of one or more"
                + " `usnet compare` runs of examples/mpi-cluster.yaml (or any file with an mpi app and a mode parameter"
                + " varied over native and netns), and writes the overhead of netns over native per TCP variant beside"
                + " the historical table, the TCP counters as netstat -s names them, and plots (docs/mpi-regression.md).",
            "Writes into --out: the report and its JSON (regression.md, regression.json) and three charts: completion"
                + " per variant and mode, RTOs, and snd_cwnd at each loss."})
public final class MpiRegressionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "DIR", description = "usnet compare --out directories (or their results.json)")
    List<Path> from = new ArrayList<>();

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "output directory")
    Path out;

    @Option(names = "--mode", paramLabel = "NAME", description = "the parameter (or knob) whose values native and netns are"
            + " the modes (default: mode)")
    String modeAxis = "mode";

    @Override
    public Integer call() throws IOException {
        try {
            Files.createDirectories(out);
        } catch (IOException e) {
            throw new UsageException("--out " + out + ": cannot create the directory: " + e.getMessage());
        }
        if (!Files.isWritable(out)) {
            throw new UsageException("--out " + out + ": not writable");
        }
        List<MpiRegression.Row> rows;
        try {
            rows = MpiRegression.rows(MpiRegression.read(from, modeAxis));
        } catch (IllegalArgumentException | com.fasterxml.jackson.core.JacksonException e) {
            throw new UsageException(e.getMessage());
        }
        PrintWriter o = spec.commandLine().getOut();
        String md = MpiRegression.markdown(rows, "usnet experiment mpi-regression " + String.join(" ",
                from.stream().map(Path::toString).toList()));
        Files.writeString(out.resolve("regression.md"), md);
        ExperimentReport.writeJson(out.resolve("regression.json"), json(rows), o);
        List<Path> pngs = MpiRegressionPlots.write(out, rows);
        o.print(md);
        o.println("wrote regression.md, regression.json" + pngs.stream().map(p -> ", " + p.getFileName()).reduce("", String::concat)
                + " to " + out.toAbsolutePath());
        return 0;
    }

    private static Map<String, Object> json(List<MpiRegression.Row> rows) {
        List<Object> list = new ArrayList<>();
        for (MpiRegression.Row r : rows) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("variant", r.variant());
            m.put("overhead_percent", Double.isNaN(r.overheadPercent()) ? null
                    : Math.round(r.overheadPercent() * 10) / 10.0);
            for (String mode : List.of(MpiRegression.NATIVE, MpiRegression.NETNS)) {
                MpiRegression.Cell c = MpiRegression.cell(r, mode);
                if (c == null) {
                    continue;
                }
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("seeds", c.seeds());
                x.put("completion_s", c.completionS());
                x.put("completion_min_s", c.minCompletionS());
                x.put("completion_max_s", c.maxCompletionS());
                x.put("mb_s", c.mbS());
                x.put("counters", c.counters());
                x.put("drops", c.drops());
                m.put(mode, x);
            }
            list.add(m);
        }
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("historical", MpiRegression.HISTORICAL);
        root.put("rows", list);
        return root;
    }
}
