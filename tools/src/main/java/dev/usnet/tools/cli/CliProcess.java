package dev.usnet.tools.cli;

/**
 * What a command may know of the process it runs in: the exit status for bad input, and whether the process is the
 * usnet command itself. Kept apart from the entry point so that the commands, which the entry point names, need not
 * name it back.
 */
public final class CliProcess {
    /** Exit status for bad input: an invalid file, key or option. */
    public static final int EXIT_USAGE = 2;

    private static volatile boolean standalone;

    private CliProcess() {}

    /**
     * True in a process started as the usnet command, false when the CLI runs inside another program (tests,
     * embedding): only then may a command change the whole process, such as giving up root.
     */
    public static boolean standalone() {
        return standalone;
    }

    /** Called once by the entry point's {@code main}, before any command runs. */
    public static void markStandalone() {
        standalone = true;
    }
}
