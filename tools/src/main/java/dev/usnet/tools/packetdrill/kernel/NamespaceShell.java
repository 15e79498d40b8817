package dev.usnet.tools.packetdrill.kernel;

import dev.usnet.tap.HostCommand;
import dev.usnet.tools.packetdrill.TargetException;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Shell commands in the test namespace: a script's backtick lines and the tc call of
 * {@link KernelTarget#setTransmitQueueLimit}. {@link #run} goes through {@code ip netns exec NAME}, which puts the
 * command in the namespace whichever thread starts it; {@link #script} starts the shell directly from a thread that
 * entered the namespace (a child process inherits the network namespace of the thread that forks it), which saves
 * starting iproute2 and remounting /sys for every backtick line: on a loaded machine that is tens of milliseconds a
 * script's time line would see. {@code KernelTargetTest} checks that such a command sees tun0.
 */
final class NamespaceShell {
    /** A backtick command that takes longer than this is killed and fails the script. */
    static final int TIMEOUT_SECONDS = 60;

    private NamespaceShell() {}

    /** Output (stdout and stderr merged) and exit status. */
    record Result(int exit, String output) {}

    /** Runs {@code argv} in {@code namespace} from directory {@code dir} (null: the current one). */
    static Result run(String namespace, Path dir, List<String> argv) {
        List<String> cmd = new java.util.ArrayList<>(List.of("ip", "netns", "exec", namespace));
        cmd.addAll(argv);
        return start(namespace, dir, cmd);
    }

    /** Runs {@code cmd} as given (in the calling thread's namespace); {@code namespace} is for messages. */
    private static Result start(String namespace, Path dir, List<String> cmd) {
        List<String> argv = cmd;
        Path out = null;
        try {
            out = Files.createTempFile("usnet-pd-cmd", ".out");
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
            if (dir != null) {
                File d = dir.toFile();
                if (!d.isDirectory()) {
                    throw new TargetException("the script's directory " + dir + " does not exist");
                }
                pb.directory(d);
            }
            Process p = pb.start();
            p.getOutputStream().close();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                HostCommand.kill(p);
                return new Result(-1, "timed out after " + TIMEOUT_SECONDS + " s\n"
                        + Files.readString(out, StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new TargetException("cannot run " + String.join(" ", argv) + " in " + namespace + ": "
                    + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TargetException("interrupted while running " + String.join(" ", argv));
        } finally {
            if (out != null) {
                try {
                    Files.deleteIfExists(out);
                } catch (IOException ignored) {
                    // A temporary file left in /tmp is harmless; the command's outcome is what matters.
                }
            }
        }
    }

    /**
     * A script's backtick command: {@code /bin/sh -c text} from the script's directory, started by the calling thread,
     * which must be inside the test namespace {@code namespace}.
     */
    static String scriptHere(String namespace, Path scriptDir, String text, int line) {
        Result r = start(namespace, scriptDir, List.of("/bin/sh", "-c", text));
        if (r.exit() != 0) {
            String out = r.output().trim();
            String hint = "";
            if (out.contains("tcp_congestion_control") && out.contains("Operation not permitted")) {
                String allowed = NamespaceSysctl.readAllowed();
                hint = " — in a child network namespace Linux only lets a congestion control be chosen that the root"
                        + " namespace's " + NamespaceSysctl.ALLOWED + " lists (now \"" + allowed + "\"); the kernel"
                        + " target never changes host settings; allow it yourself with: sysctl -w "
                        + NamespaceSysctl.ALLOWED + "=\"" + allowed + " cubic\" (or the one the script wants)";
            }
            throw new TargetException("line " + line + ": command `" + text.trim() + "` exited "
                    + (r.exit() < 0 ? "abnormally" : String.valueOf(r.exit()))
                    + (out.isEmpty() ? " with no output" : ": " + out) + hint);
        }
        return r.output();
    }
}
