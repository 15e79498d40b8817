package dev.usnet.tools.run;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.results.Results;
import dev.usnet.tools.topology.file.Expectation;
import java.io.IOException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The end of a {@code usnet run} in either clock: writing its {@code --results} file and checking its
 * {@code expect:} lines against the results, with the same lines and exit codes for both clocks.
 */
public final class RunResults {
    private RunResults() {}

    /** Writes {@code r} to {@code file}; false (after saying why on {@code e}) when it cannot be written. */
    public static boolean write(Results r, Path file, PrintWriter o, PrintWriter e) {
        try {
            r.write(file);
            o.println("usnet: wrote results to " + file);
            return true;
        } catch (IOException ex) {
            e.println("usnet: cannot write results " + dev.usnet.tools.cli.IoErrors.describe(file, ex));
            return false;
        }
    }

    /**
     * Prints every expectation that failed with the value the run had, then how many held; true when all held
     * (also when there are none, which prints nothing).
     */
    public static boolean expectations(List<Expectation> ex, Results r, PrintWriter o, PrintWriter e) {
        if (ex.isEmpty()) {
            return true;
        }
        int held = 0;
        for (Expectation x : ex) {
            BigDecimal v = x.actual(r);
            if (x.holds(v)) {
                held++;
            } else {
                e.println("usnet: expect failed: " + x.where().file() + ":" + x.where().line() + ": " + x.text()
                        + x.failure(r));
            }
        }
        o.println("usnet: " + held + " of " + ex.size() + " expectations held");
        return held == ex.size();
    }

    /**
     * For {@code measured.app_cpu_ns}: per TCP app (by its results name), the CPU time its client's callbacks
     * took; apps whose client has no result yet are left out.
     */
    public static Map<String, Object> appCpuNanos(Apps apps, Results r) {
        Map<String, Object> cpu = new LinkedHashMap<>();
        // One copy of the list: Apps.list() copies it, and per index that was quadratic in the apps.
        List<App> list = apps.list();
        for (int i = 0; i < list.size(); i++) {
            Long n = list.get(i).measuredNanos().get("app_cpu_ns");
            if (n != null) {
                cpu.put((String) r.apps().get(i).get("name"), n);
            }
        }
        return cpu;
    }

    /**
     * For {@code measured.spawn_ns}: per spawn app (by its results name), the mean wall-clock time of a child's fork,
     * exit and wait in the pid-namespace model; empty when the run has no spawn app.
     */
    public static Map<String, Object> spawnNanos(Apps apps, Results r) {
        Map<String, Object> ns = new LinkedHashMap<>();
        List<App> list = apps.list();
        for (int i = 0; i < list.size(); i++) {
            Long n = list.get(i).measuredNanos().get("spawn_ns");
            if (n != null) {
                ns.put((String) r.apps().get(i).get("name"), n);
            }
        }
        return ns;
    }
}
