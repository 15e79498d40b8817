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
 * {@link KernelTarget#setTransmitQueueLimit}. They run through {@code ip netns exec NAME}, which puts the command in
 * the namespace whichever thread starts it (a child the JVM forks would otherwise inherit the namespace of the
 * forking thread, a detail of the JDK's process launcher not worth relying on).
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

    /** A script's backtick command: {@code /bin/sh -c text} in the namespace, from the script's directory. */
    static String script(String namespace, Path scriptDir, String text, int line) {
        Result r = run(namespace, scriptDir, List.of("/bin/sh", "-c", text));
        if (r.exit() != 0) {
            throw new TargetException("line " + line + ": command `" + text.trim() + "` exited "
                    + (r.exit() < 0 ? "abnormally" : String.valueOf(r.exit()))
                    + (r.output().isBlank() ? " with no output" : ": " + r.output().trim()));
        }
        return r.output();
    }
}
