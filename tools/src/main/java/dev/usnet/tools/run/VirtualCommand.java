package dev.usnet.tools.run;

import dev.usnet.tools.cli.CliProcess;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;

/** The {@code --clock virtual} part of {@code usnet run}: a {@link VirtualRun}, then the same exit report as real time. */
public final class VirtualCommand {
    private VirtualCommand() {}

    public static int run(TopologySpec t, Path dir, Double duration, Long seed, Path resultsFile, boolean allowAppFailures,
                   dev.usnet.tools.ctl.DaemonControl.Options control, long snapshotNanos, PrintWriter o, PrintWriter e) {
        if (duration == null) {
            throw new UsageException("--clock virtual needs --duration S: virtual time has no signal to stop on");
        }
        VirtualRun.RunResult r;
        try {
            boolean observed = control.ctlSocket() != null || control.metrics() != null || control.eventsLog() != null;
            r = VirtualRun.run(t, new VirtualRun.Options(Math.round(duration * 1e9), seed, dir)
                    .observed(observed ? control : null, snapshotNanos));
        } catch (UsageException ex) {
            for (String line : ex.getMessage().split("\n")) {
                e.println("usnet: " + line);
            }
            return CliProcess.EXIT_USAGE;
        } catch (TopologyException ex) {
            ex.errors().forEach(s -> e.println("usnet: " + s));
            return CliProcess.EXIT_USAGE;
        }
        // An unwritable results file is a usage error (exit 2), but the report and the expectations still follow.
        boolean written = resultsFile == null || RunResults.write(r.results(), resultsFile, o, e);
        int code = RunCommand.report(r.summary(), dir, allowAppFailures, o, e);
        o.printf(Locale.ROOT, "usnet: virtual time %.3f s in %.3f s of wall time (%.1fx), %.3f s of CPU on the"
                + " simulation thread, %d events%n", r.virtualNanos() / 1e9, r.wallNanos() / 1e9, r.speed(),
                r.cpuNanos() / 1e9, r.events());
        if (!RunResults.expectations(t.expectations(), r.results(), o, e)) {
            code = RunCommand.EXIT_APPS_FAILED;
        }
        if (!written) {
            code = CliProcess.EXIT_USAGE;
        }
        o.flush();
        return code;
    }
}
