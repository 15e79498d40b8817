package dev.usnet.perf.tap;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The kernel network namespaces and background processes of one benchmark run. Namespaces are named
 * {@code usnet-bench-<pid>-<tag>}; {@link #close} (idempotent, thread-safe, also called from the shutdown hook on
 * Ctrl-C) kills every process started here, with its descendants, and deletes every namespace created here.
 * Nothing here touches the machine's own namespace: links are created with {@code ip -n NS}.
 */
final class BenchNetns implements AutoCloseable {
    static final String PREFIX = "usnet-bench-" + ProcessHandle.current().pid() + "-";

    private final List<String> created = new ArrayList<>();
    private final List<Process> background = new ArrayList<>();
    private boolean closed;

    /** The result of a command: exit code and merged output. */
    record Result(int exit, String output) {
        boolean ok() {
            return exit == 0;
        }
    }

    /** Creates namespace {@code usnet-bench-<pid>-<tag>} with lo up and IPv6 off; returns its name. */
    String create(String tag) {
        String name = PREFIX + tag;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("shutting down");
            }
            created.add(name);
        }
        Result r = run(10, "ip", "netns", "add", name);
        if (!r.ok()) {
            throw new IllegalStateException("ip netns add " + name + ": " + r.output());
        }
        exec(name, "ip", "link", "set", "lo", "up");
        exec(name, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1");
        exec(name, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1");
        return name;
    }

    /** Runs {@code cmd} inside {@code netns}; throws when it fails. */
    String exec(String netns, String... cmd) {
        Result r = tryExec(30, netns, cmd);
        if (!r.ok()) {
            throw new IllegalStateException("in " + netns + ": " + String.join(" ", cmd) + " exited " + r.exit() + ": "
                    + r.output().trim());
        }
        return r.output();
    }

    /** Runs {@code cmd} in the root namespace (only {@code ip -n NS ...} and {@code ip netns ...} are used). */
    void root(String... cmd) {
        Result r = run(30, cmd);
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", cmd) + " exited " + r.exit() + ": " + r.output().trim());
        }
    }

    Result tryExec(int timeoutSeconds, String netns, String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        c.addAll(List.of(cmd));
        return run(timeoutSeconds, c.toArray(new String[0]));
    }

    /** Starts {@code cmd} inside {@code netns} in the background, output to {@code out}; killed by {@link #kill}/{@link #close}. */
    Process start(String netns, Path out, String... cmd) throws IOException {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        c.addAll(List.of(cmd));
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("shutting down");
            }
            Process p = new ProcessBuilder(c).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            background.add(p);
            return p;
        }
    }

    /** Kills {@code p} (and what it started) now. */
    void kill(Process p) {
        synchronized (this) {
            background.remove(p);
        }
        destroy(p);
    }

    private static void destroy(Process p) {
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

    /** Deletes the named namespaces now (they were created here). */
    void delete(List<String> names) {
        for (String ns : names) {
            synchronized (this) {
                if (!created.remove(ns)) {
                    continue;
                }
            }
            deleteNow(ns);
        }
    }

    private static void deleteNow(String ns) {
        if (Files.exists(Path.of("/var/run/netns", ns))) {
            Result r = run(10, "ip", "netns", "del", ns);
            if (!r.ok()) {
                System.err.println("tap-throughput: could not delete netns " + ns + ": " + r.output().trim());
            }
        }
    }

    static Result run(int timeoutSeconds, String... cmd) {
        dev.usnet.tap.HostCommand.Result r = dev.usnet.tap.HostCommand.run(timeoutSeconds, cmd);
        return new Result(r.exit(), r.output());
    }

    static boolean has(String tool) {
        return dev.usnet.tap.HostCommand.has(tool);
    }

    /** Kills every background process and deletes every namespace created here; safe to call twice. */
    @Override
    public void close() {
        List<Process> procs;
        List<String> names;
        synchronized (this) {
            closed = true;
            procs = new ArrayList<>(background);
            background.clear();
            names = new ArrayList<>(created);
            created.clear();
        }
        procs.forEach(BenchNetns::destroy);
        names.forEach(BenchNetns::deleteNow);
    }
}
