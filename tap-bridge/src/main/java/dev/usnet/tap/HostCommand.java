package dev.usnet.tap;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Runs a host command (ip, ping, iperf3, ...) with a time limit and its merged output collected in a temporary
 * file, so a chatty command can never block on a full pipe; on timeout the command and its children are killed.
 */
public final class HostCommand {
    /** Exit status (-1 when it could not run or timed out) and merged stdout/stderr. */
    public record Result(int exit, String output) {
        public boolean ok() {
            return exit == 0;
        }
    }

    private HostCommand() {}

    public static Result run(int timeoutSeconds, String... cmd) {
        try {
            Path out = Files.createTempFile("usnet-cmd", ".out");
            try {
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
                p.getOutputStream().close();
                if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                    kill(p);
                    return new Result(-1, "timed out after " + timeoutSeconds + " s: " + String.join(" ", cmd) + "\n"
                            + Files.readString(out, StandardCharsets.UTF_8));
                }
                return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            return new Result(-1, "cannot run " + cmd[0] + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        }
    }

    /**
     * Kills {@code p} and its children (iperf3 under timeout under ip netns exec, ...) and waits up to 5 s for it;
     * an interrupt during the wait is kept.
     */
    public static void kill(Process p) {
        if (!p.isAlive()) {
            return;
        }
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        try {
            p.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** True when {@code tool} is on the PATH. */
    public static boolean has(String tool) {
        return run(5, "sh", "-c", "command -v " + tool).ok();
    }

    /** True when this process runs as root. */
    public static boolean isRoot() {
        Result r = run(5, "id", "-u");
        return r.ok() && r.output().trim().equals("0");
    }
}
