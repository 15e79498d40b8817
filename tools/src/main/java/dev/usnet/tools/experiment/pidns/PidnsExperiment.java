package dev.usnet.tools.experiment.pidns;

import static dev.usnet.tools.report.ExperimentReport.loadavg;

import dev.usnet.ns.pid.PidModel;
import dev.usnet.tools.report.Columns;
import dev.usnet.tools.report.ExperimentReport;
import dev.usnet.tools.kernel.Privileges;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code usnet experiment pidns}: the cost of pid namespaces by model and depth, in usnet's model
 * ({@link UsnetPidCosts}) and on the kernel here ({@link KernelPidnsLoops}, root), printed beside the 2007 measurement
 * of the flat and the multilevel patches. The kernel part is skipped, saying why, without CAP_SYS_ADMIN.
 */
public final class PidnsExperiment {
    /** What to run; {@code kernel} false: the usnet part only. */
    public record Options(UsnetPidCosts.Params usnet, boolean kernel, KernelPidnsLoops.Params kernelParams, Path json) {}

    private PidnsExperiment() {}

    /** The historical table: slowdown against no pid namespaces, Linux 2.6.20, unixbench and ps system time. */
    static String historical() {
        StringBuilder b = new StringBuilder("historical (Linux 2.6.20, unixbench; slowdown against no pid namespaces):\n");
        Columns c = new Columns(1, "implementation", "spawn", "execl", "shell", "ps (system time)");
        c.row("multilevel, as posted", "1.5 %", "1.3 %", "1.4 %", "1.8 %");
        c.row("multilevel, a second implementation", "0.5-0.9 %", "0.5-0.9 %", "0.5-0.9 %", "0.5-0.9 %");
        c.row("flat (one pid, a virtual pid by dereference)", "0 %", "0.1 %", "< 0.1 %", "0.1 %");
        c.lines("  ").forEach(l -> b.append(l).append('\n'));
        return b.toString();
    }

    public static int run(Options o, Privileges privileges, PrintWriter out) throws IOException {
        out.println("pidns: what pid namespaces cost a process's spawn, exit and lookups, by model and depth");
        out.print(historical());
        out.println("this machine: " + Runtime.getRuntime().availableProcessors() + " CPUs, kernel "
                + System.getProperty("os.version") + ", load average " + loadavg()
                + " (a shared, noisy machine: compare within a table, not across runs)");
        out.println();
        out.flush();
        Map<String, Object> json = new LinkedHashMap<>();
        List<UsnetPidCosts.Row> usnet = UsnetPidCosts.run(o.usnet(), l -> {
            out.println(l);
            out.flush();
        });
        out.println();
        out.print(usnetTable(usnet));
        out.flush();
        json.put("usnet", usnet.stream().map(r -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("model", r.model().knobValue());
            m.put("depth", r.model() == PidModel.NONE ? 0 : r.depth());
            m.put("spawn_exit_ns", round(r.spawnExitNs()));
            m.put("lookup_ns", round(r.lookupNs()));
            m.put("ps_ns", round(r.psNs()));
            return m;
        }).toList());
        if (o.kernel()) {
            String why = kernelUnavailable(privileges);
            out.println();
            if (why == null) {
                List<KernelPidnsLoops.Row> k = KernelPidnsLoops.run(o.kernelParams(), l -> {
                    out.println(l);
                    out.flush();
                });
                out.println();
                out.print(kernelTable(k));
                json.put("kernel", k.stream().map(r -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("depth", r.depth());
                    m.put("spawn_us", round(r.spawnUs()));
                    m.put("spawn_min_us", round(r.spawnMinUs()));
                    m.put("spawn_max_us", round(r.spawnMaxUs()));
                    m.put("exec_us", round(r.execUs()));
                    m.put("exec_min_us", round(r.execMinUs()));
                    m.put("exec_max_us", round(r.execMaxUs()));
                    m.put("nspid", r.nspid());
                    return m;
                }).toList());
            } else {
                out.println("kernel part skipped: " + why);
                json.put("kernel_skipped", why);
            }
        }
        ExperimentReport.finish(json, o.json(), out);
        return 0;
    }

    static String kernelUnavailable(Privileges privileges) {
        if (!privileges.has(Privileges.CAP_SYS_ADMIN)) {
            return "it needs root: CAP_SYS_ADMIN for unshare --pid, which this process lacks; run it as root"
                    + " (sudo ./usnet experiment pidns)";
        }
        if (!KernelPidnsLoops.hasUnshare()) {
            return "it needs util-linux's unshare and /bin/sh (apt-get install util-linux)";
        }
        return null;
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    private static String pct(double v, double base) {
        return String.format(Locale.ROOT, "%+.1f %%", (v / base - 1) * 100);
    }

    static String usnetTable(List<UsnetPidCosts.Row> rows) {
        UsnetPidCosts.Row none = rows.stream().filter(r -> r.model() == PidModel.NONE).findFirst().orElseThrow();
        StringBuilder b = new StringBuilder("usnet's model, in process: ns per operation, median over timed slices; against"
                + " none\n");
        Columns c = new Columns(2, "model", "depth", "spawn+exit", "vs none", "lookup", "vs none", "ps (1 walk)", "vs none");
        for (UsnetPidCosts.Row r : rows) {
            boolean base = r.model() == PidModel.NONE;
            c.row(r.model().knobValue(), base ? "-" : r.depth(), String.format(Locale.ROOT, "%.0f", r.spawnExitNs()),
                    base ? "" : pct(r.spawnExitNs(), none.spawnExitNs()), String.format(Locale.ROOT, "%.1f", r.lookupNs()),
                    base ? "" : pct(r.lookupNs(), none.lookupNs()), String.format(Locale.ROOT, "%.0f", r.psNs()),
                    base ? "" : pct(r.psNs(), none.psNs()));
        }
        c.lines("  ").forEach(l -> b.append(l).append('\n'));
        return b.toString();
    }

    static String kernelTable(List<KernelPidnsLoops.Row> rows) {
        KernelPidnsLoops.Row base = rows.stream().filter(r -> r.depth() == 0).findFirst().orElse(rows.getFirst());
        StringBuilder b = new StringBuilder("kernel " + System.getProperty("os.version") + " (multilevel, its only model),"
                + " nested unshare --pid --fork: us per operation, median (lowest-highest round); against depth "
                + base.depth() + "\n");
        Columns c = new Columns(1, "depth", "spawn (fork+exit+wait)", "vs " + base.depth(), "exec (fork+exec+wait)",
                "vs " + base.depth(), "shell's NSpid");
        for (KernelPidnsLoops.Row r : rows) {
            boolean isBase = r == base;
            c.row(r.depth(), String.format(Locale.ROOT, "%.1f (%.0f-%.0f)", r.spawnUs(), r.spawnMinUs(), r.spawnMaxUs()),
                    isBase ? "" : pct(r.spawnUs(), base.spawnUs()),
                    String.format(Locale.ROOT, "%.1f (%.0f-%.0f)", r.execUs(), r.execMinUs(), r.execMaxUs()),
                    isBase ? "" : pct(r.execUs(), base.execUs()),
                    String.join(" ", r.nspid().stream().map(String::valueOf).toList()));
        }
        c.lines("  ").forEach(l -> b.append(l).append('\n'));
        return b.toString();
    }
}
