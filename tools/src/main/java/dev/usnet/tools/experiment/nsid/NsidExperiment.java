package dev.usnet.tools.experiment.nsid;

import static dev.usnet.tools.report.ExperimentReport.loadavg;

import dev.usnet.tap.HostCommand;
import dev.usnet.tcp.app.Percentiles;
import dev.usnet.tools.report.Columns;
import dev.usnet.tools.report.ExperimentReport;
import dev.usnet.tools.kernel.Privileges;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code usnet experiment nsid}: another namespace's addresses without entering it (by nsid) against entering it, in
 * usnet ({@link UsnetNsidQueries}, real time) and on the kernel here ({@link KernelNsidQueries}, root), printed beside
 * the historical measurement. The kernel part is skipped, saying why, without CAP_SYS_ADMIN or iproute2.
 */
public final class NsidExperiment {
    /** The measurement that came with IFA_IF_NETNSID for RTM_GETADDR (2018): mean us per query, 10^6 iterations. */
    static final double HIST_BY_NSID_US = 81;
    static final double HIST_SETNS_US = 162;

    /** What to run. {@code kernelCounts} empty or {@code kernel} false: the usnet part only. */
    public record Options(List<Integer> usnetCounts, int usnetQueries, int loops, boolean kernel, List<Integer> kernelCounts,
                          int kernelQueries, Path json) {}

    private NsidExperiment() {}

    /** Runs and prints both parts; returns the exit code (0, also when the kernel part had to be skipped). */
    public static int run(Options o, Privileges privileges, PrintWriter out) throws IOException {
        out.println("nsid: another namespace's addresses asked for by nsid (without entering it) against entering it");
        out.printf(Locale.ROOT, "historical: RTM_GETADDR with IFA_IF_NETNSID, mean %.0f us per query, against %.0f us with"
                + " setns + dump (getifaddrs) and setns back, over 10^6 queries: %.1fx%n", HIST_BY_NSID_US, HIST_SETNS_US,
                HIST_SETNS_US / HIST_BY_NSID_US);
        out.println("this machine: " + Runtime.getRuntime().availableProcessors() + " CPUs, kernel "
                + System.getProperty("os.version") + ", load average " + loadavg()
                + " (a shared, noisy machine: compare within a table, not across runs)");
        out.flush();
        Map<String, Object> json = new LinkedHashMap<>();
        List<UsnetNsidQueries.Row> usnet = List.of();
        if (!o.usnetCounts().isEmpty()) {
            usnet = UsnetNsidQueries.run(new UsnetNsidQueries.Params(o.usnetCounts(), o.usnetQueries(), o.loops()), l -> {
                out.println(l);
                out.flush();
            });
            out.println();
            out.print(usnetTable(usnet, o.loops()));
            out.flush();
        }
        json.put("usnet", usnet.stream().map(r -> row(r.namespaces(), r.dump().label(), r.mode().label(), r.latency())).toList());
        List<KernelNsidQueries.Row> kernel = List.of();
        String skipped = null;
        if (o.kernel() && !o.kernelCounts().isEmpty()) {
            skipped = kernelUnavailable(privileges);
            if (skipped == null) {
                out.println();
                kernel = KernelNsidQueries.run(new KernelNsidQueries.Params(o.kernelCounts(), o.kernelQueries()), l -> {
                    out.println(l);
                    out.flush();
                });
                out.println();
                out.print(kernelTable(kernel));
            } else {
                out.println();
                out.println("kernel part skipped: " + skipped);
            }
        }
        json.put("kernel", kernel.stream().map(r -> row(r.namespaces(), "addresses", r.mode().label(), r.latency())).toList());
        if (skipped != null) {
            json.put("kernel_skipped", skipped);
        }
        ExperimentReport.finish(json, o.json(), out);
        return 0;
    }

    /** Why the kernel part cannot run here, or null when it can. */
    static String kernelUnavailable(Privileges privileges) {
        if (!privileges.has(Privileges.CAP_SYS_ADMIN)) {
            return "it needs root: CAP_SYS_ADMIN to create kernel namespaces (ip netns add) and to setns() into them, which"
                    + " this process lacks; run it as root (sudo ./usnet experiment nsid)";
        }
        if (!privileges.has(Privileges.CAP_NET_ADMIN)) {
            return "it needs CAP_NET_ADMIN to give the namespaces addresses and nsids, which this process lacks; run it as root";
        }
        if (!HostCommand.has("ip")) {
            return "it needs iproute2's ip to create the namespaces (apt-get install iproute2)";
        }
        return null;
    }

    private static Map<String, Object> row(int n, String dump, String mode, Percentiles p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("namespaces", n);
        m.put("dump", dump);
        m.put("mode", mode);
        m.put("queries", p.count());
        m.put("mean_us", round(p.meanUs()));
        m.put("p50_us", round(p.p50Us()));
        m.put("p99_us", round(p.p99Us()));
        return m;
    }

    private static double round(double v) {
        return Math.round(v * 1000) / 1000.0;
    }

    static String us(Percentiles p) {
        return String.format(Locale.ROOT, "%.2f (%.2f)", p.p50Us(), p.meanUs());
    }

    static String ratio(Percentiles slow, Percentiles fast) {
        return String.format(Locale.ROOT, "%.1fx (%.1fx)", slow.p50Us() / fast.p50Us(), slow.meanUs() / fast.meanUs());
    }

    static String usnetTable(List<UsnetNsidQueries.Row> rows, int loops) {
        StringBuilder b = new StringBuilder("usnet, real time, " + loops + " event loop" + (loops == 1 ? "" : "s")
                + ": us per query, median (mean), each query timed\n");
        Columns c = new Columns(2, "namespaces", "dump", "by nsid", "entering (task on its loop)", "entering / by nsid");
        for (int i = 0; i + 1 < rows.size(); i += 2) {
            UsnetNsidQueries.Row byNsid = rows.get(i);
            UsnetNsidQueries.Row entering = rows.get(i + 1);
            c.row(byNsid.namespaces(), byNsid.dump().label(), us(byNsid.latency()), us(entering.latency()),
                    ratio(entering.latency(), byNsid.latency()));
        }
        c.lines("  ").forEach(l -> b.append(l).append('\n'));
        return b.toString();
    }

    static String kernelTable(List<KernelNsidQueries.Row> rows) {
        StringBuilder b = new StringBuilder("kernel " + System.getProperty("os.version") + ": us per query, median (mean),"
                + " each query timed\n");
        List<String> header = new ArrayList<>(List.of("namespaces"));
        for (KernelNsidQueries.Mode m : KernelNsidQueries.Mode.values()) {
            header.add(m.label());
        }
        header.add("setns / by nsid");
        Columns c = new Columns(1, header.toArray(new String[0]));
        int modes = KernelNsidQueries.Mode.values().length;
        for (int i = 0; i + modes - 1 < rows.size(); i += modes) {
            List<Object> cells = new ArrayList<>(List.of(rows.get(i).namespaces()));
            for (int k = 0; k < modes; k++) {
                cells.add(us(rows.get(i + k).latency()));
            }
            cells.add(ratio(rows.get(i + KernelNsidQueries.Mode.SETNS.ordinal()).latency(),
                    rows.get(i + KernelNsidQueries.Mode.BY_NSID.ordinal()).latency()));
            c.row(cells.toArray());
        }
        c.lines("  ").forEach(l -> b.append(l).append('\n'));
        return b.toString();
    }
}
