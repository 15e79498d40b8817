package dev.usnet.tools;

import dev.usnet.tools.cli.CliProcess;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.demo.DemoCommand;
import dev.usnet.tools.replay.ReplayCommand;
import dev.usnet.tools.run.CleanupCommand;
import dev.usnet.tools.run.RunCommand;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code usnet} command line. */
@Command(name = "usnet", mixinStandardHelpOptions = true, version = "usnet 0.1.0",
        description = "Userspace network stack emulator: namespaces, veth, bridges, routers, checked against Linux.",
        subcommands = {DemoCommand.class, RunCommand.class, dev.usnet.tools.ctl.CtlCommand.class, dev.usnet.tools.compare.CompareCommand.class, CleanupCommand.class, ReplayCommand.class,
                dev.usnet.tools.tcp.TcpCommand.class, dev.usnet.tools.experiment.ExperimentCommand.class,
                dev.usnet.tools.oracle.OracleCommand.class, dev.usnet.tools.calibrate.CalibrateCommand.class,
                dev.usnet.tools.packetdrill.PacketdrillCommand.class,
                CommandLine.HelpCommand.class})
public final class Usnet implements Runnable {
    /**
     * Exit code for bad input: an invalid file, key or option ({@link CliProcess#EXIT_USAGE}, named here too for the
     * callers of {@link #execute}).
     */
    public static final int EXIT_USAGE = CliProcess.EXIT_USAGE;

    @Override
    public void run() {
        commandLine().usage(System.out);
    }

    /** The command tree with its help laid out for an 80-column terminal. */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Usnet());
        cl.setUsageHelpWidth(80);
        // usnet ctl's verbs take iproute2's own options (sysctl -w, -a, bridge ... -s): everything from the verb on is
        // the verb's.
        cl.getSubcommands().get("ctl").setStopAtPositional(true);
        return cl;
    }

    public static int execute(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = commandLine();
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            if (ex instanceof UsageException || ex instanceof IllegalArgumentException) {
                cmd.getErr().println("usnet: " + ex.getMessage());
                return EXIT_USAGE;
            }
            throw ex;
        });
        cl.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println(CliErrors.describe(ex));
            ex.getCommandLine().usage(ex.getCommandLine().getErr());
            return EXIT_USAGE;
        });
        return cl.execute(args);
    }

    /** {@link CliProcess#standalone()}: true in a process started by {@link #main}. */
    public static boolean standalone() {
        return CliProcess.standalone();
    }

    public static void main(String[] args) throws InterruptedException {
        CliProcess.markStandalone();
        // Netty names its channels after a MAC of this machine, looked up among the kernel's interfaces, and warns
        // when it finds none ("Failed to find a usable hardware address"): in a namespace with only lo, where usnet
        // is often started, that is every run. The name is for Netty's logs only; random bytes, which Netty would
        // fall back to anyway, spare the look-up and the warning.
        if (System.getProperty("io.netty.machineId") == null) {
            byte[] id = new byte[8];
            new java.security.SecureRandom().nextBytes(id);
            id[0] = (byte) ((id[0] | 0x02) & 0xfe);    // locally administered, unicast: never a real NIC's
            System.setProperty("io.netty.machineId", java.util.HexFormat.ofDelimiter(":").formatHex(id));
        }
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int[] code = {1};
        // Netty recycles buffer and packet holders only on its FastThreadLocalThreads; virtual-time work is
        // driven from this thread, so it must be one to allocate nothing per packet.
        Thread t = new FastThreadLocalThread(() -> code[0] = execute(args, out, err), "usnet-main");
        t.start();
        t.join();
        out.flush();
        err.flush();
        System.exit(code[0]);
    }
}
