package dev.usnet.tools.run;

import dev.usnet.tools.cli.CliProcess;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.kernel.KernelNet;
import dev.usnet.tools.kernel.Leftovers;
import dev.usnet.tools.kernel.Privileges;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code usnet cleanup FILE}: removes what a {@code usnet run FILE} that did not end normally (kill -9, a crash,
 * a power cut of the JVM) left in the kernel, and nothing else; see {@link Leftovers} for how it decides.
 */
@Command(name = "cleanup", mixinStandardHelpOptions = true,
        description = {"Delete the kernel namespaces a killed usnet run of FILE left behind.",
                "Deleted: those FILE lists under kernel.namespaces whose lo carries usnet's mark",
                "of a process that is gone. Anything else of FILE's names that exists is left",
                "alone, with why. Exit 0 when nothing of usnet's is left, 1 when something is",
                "(a run still going, a failed delete), 2 on a bad file or missing privileges."})
public final class CleanupCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "topology file")
    Path file;

    /** The kernel and capabilities to use; the real ones unless made with others. */
    private final KernelNet kernel;
    private final Privileges privileges;

    public CleanupCommand() {
        this(KernelNet.iproute2(), Privileges.ofThisProcess());
    }

    /** With a kernel and capabilities of the caller's (a test's fake kernel). */
    public CleanupCommand(KernelNet kernel, Privileges privileges) {
        this.kernel = kernel;
        this.privileges = privileges;
    }

    @Override
    public Integer call() {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter e = spec.commandLine().getErr();
        TopologySpec t;
        try {
            t = TopologyFile.load(file);
        } catch (TopologyException ex) {
            for (String s : ex.errors()) {
                e.println("usnet: " + s);
            }
            return CliProcess.EXIT_USAGE;
        }
        // Reading a namespace's mark enters it (setns), deleting it unmounts: both need the capabilities.
        if (t.kernelNamespaces().stream().anyMatch(k -> kernel.namespaceExists(k.name()))
                && !(privileges.has(Privileges.CAP_NET_ADMIN) && privileges.has(Privileges.CAP_SYS_ADMIN))) {
            e.println("usnet: looking into and deleting kernel namespaces needs CAP_NET_ADMIN and CAP_SYS_ADMIN,"
                    + " which this process does not have (CapEff in /proc/self/status): run as root (sudo)");
            return CliProcess.EXIT_USAGE;
        }
        List<Leftovers.Found> found = Leftovers.find(t, kernel);
        int usnetLeft = 0;
        for (Leftovers.Found f : found) {
            if (f.removable()) {
                try {
                    kernel.deleteNamespace(f.namespace());
                    o.println("usnet: deleted kernel namespace " + f.namespace() + " (left by usnet pid " + f.mark().get().pid()
                            + ", started " + f.mark().get().started() + ", no longer running)");
                } catch (UsageException ex) {
                    e.println("usnet: " + ex.getMessage());
                    usnetLeft++;
                }
            } else {
                o.println("usnet: left alone: " + f.message());
                if (f.owner() == Leftovers.Owner.USNET_RUNNING) {
                    usnetLeft++;
                }
            }
        }
        if (found.isEmpty()) {
            o.println("usnet: nothing to clean up: none of " + file + "'s kernel namespaces and interfaces exist");
        }
        o.flush();
        return usnetLeft == 0 ? 0 : 1;
    }
}
