package dev.usnet.tap;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Kernel network namespaces a test creates for itself, named {@code usnet-t-<pid>-<tag><n>}, and the commands it
 * runs in them. {@link #close} deletes every namespace this instance created (call it from a finally block or
 * {@code @AfterEach}). Nothing here touches the machine's own interfaces.
 */
final class KernelNetns implements AutoCloseable {
    /**
     * Skips a test whose prerequisite is missing on a developer machine; in CI (CI=true), where .ci/run installs
     * everything, a missing prerequisite is a failure, so real-kernel tests can never pass by not running.
     */
    static void require(boolean present, String what) {
        if ("true".equals(System.getenv("CI"))) {
            org.junit.jupiter.api.Assertions.assertTrue(present, "CI must provide: " + what);
        } else {
            org.junit.jupiter.api.Assumptions.assumeTrue(present, what);
        }
    }

    private static final AtomicInteger SEQ = new AtomicInteger();
    static final String PREFIX = "usnet-t-" + ProcessHandle.current().pid() + "-";

    private final List<String> created = new ArrayList<>();
    private final List<Process> background = new ArrayList<>();

    /** The result of a command: exit code and merged output. */
    record Result(int exit, String output) {
        boolean ok() {
            return exit == 0;
        }
    }

    /** True when this process can create namespaces and TAP devices (root, /dev/net/tun, ip). */
    static boolean available() {
        return Files.exists(Path.of("/dev/net/tun")) && dev.usnet.tap.HostCommand.isRoot() && run(5, "ip", "-V").ok();
    }

    /** True when {@code tool} is on the PATH. */
    static boolean has(String tool) {
        return dev.usnet.tap.HostCommand.has(tool);
    }

    /** Creates a fresh namespace with {@code lo} up and IPv6 off (quiet links); returns its name. */
    String create(String tag) {
        String name = PREFIX + tag + SEQ.incrementAndGet();
        Result r = run(10, "ip", "netns", "add", name);
        if (!r.ok()) {
            throw new IllegalStateException("ip netns add " + name + ": " + r.output());
        }
        created.add(name);
        exec(name, "ip", "link", "set", "lo", "up");
        exec(name, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1");
        exec(name, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1");
        return name;
    }

    /** Deletes {@code name} now (it stays on the list so close() is harmless). */
    Result delete(String name) {
        return run(10, "ip", "netns", "del", name);
    }

    /** Runs {@code cmd} inside {@code netns}, failing the test if it fails. */
    String exec(String netns, String... cmd) {
        Result r = tryExec(30, netns, cmd);
        if (!r.ok()) {
            throw new AssertionError("in " + netns + ": " + String.join(" ", cmd) + " exited " + r.exit() + ": " + r.output());
        }
        return r.output();
    }

    /** Runs {@code cmd} inside {@code netns} with a timeout in seconds. */
    Result tryExec(int timeoutSeconds, String netns, String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        c.addAll(List.of(cmd));
        return run(timeoutSeconds, c.toArray(new String[0]));
    }

    /** Starts {@code cmd} inside {@code netns} in the background; output goes to {@code out}. */
    Process start(String netns, Path out, String... cmd) throws IOException {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        c.addAll(List.of(cmd));
        Process p = new ProcessBuilder(c).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        background.add(p);
        return p;
    }

    static Result run(int timeoutSeconds, String... cmd) {
        dev.usnet.tap.HostCommand.Result r = dev.usnet.tap.HostCommand.run(timeoutSeconds, cmd);
        return new Result(r.exit(), r.output());
    }

    /** Stops background commands and deletes every namespace created here, even after failures. */
    @Override
    public void close() {
        for (Process p : background) {
            HostCommand.kill(p);
        }
        background.clear();
        for (String ns : created) {
            if (Files.exists(Path.of("/var/run/netns", ns))) {
                Result r = run(10, "ip", "netns", "del", ns);
                if (!r.ok()) {
                    System.err.println("could not delete netns " + ns + ": " + r.output());
                }
            }
        }
        created.clear();
    }
}
