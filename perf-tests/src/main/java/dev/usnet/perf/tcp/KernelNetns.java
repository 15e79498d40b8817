package dev.usnet.perf.tcp;

import dev.usnet.tap.HostCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The kernel network namespaces and background processes of one tcp-throughput run, named
 * {@code usnet-tcpbench-<pid>-<tag>}. {@link #close} (idempotent, thread-safe, also run from the Ctrl-C hook)
 * kills every process started here with its descendants and deletes every namespace created here, by name.
 * Nothing touches the machine's own namespace: links are created with {@code ip -n NS}.
 */
final class KernelNetns implements AutoCloseable {
    static final String PREFIX = "usnet-tcpbench-" + ProcessHandle.current().pid() + "-";

    private final List<String> created = new ArrayList<>();
    private final List<Process> background = new ArrayList<>();
    private boolean closed;

    /** Creates namespace {@code usnet-tcpbench-<pid>-<tag>} with lo up and IPv6 off; returns its name. */
    String create(String tag) {
        String name = PREFIX + tag;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("shutting down");
            }
            created.add(name);
        }
        HostCommand.Result r = HostCommand.run(10, "ip", "netns", "add", name);
        if (!r.ok()) {
            throw new IllegalStateException("ip netns add " + name + ": " + r.output().trim());
        }
        exec(name, "ip", "link", "set", "lo", "up");
        exec(name, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1");
        exec(name, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1");
        return name;
    }

    /** Runs {@code cmd} inside {@code netns}; throws when it fails. */
    String exec(String netns, String... cmd) {
        HostCommand.Result r = tryExec(30, netns, cmd);
        if (!r.ok()) {
            throw new IllegalStateException("in " + netns + ": " + String.join(" ", cmd) + " exited " + r.exit() + ": "
                    + r.output().trim());
        }
        return r.output();
    }

    HostCommand.Result tryExec(int timeoutSeconds, String netns, String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        c.addAll(List.of(cmd));
        return HostCommand.run(timeoutSeconds, c.toArray(new String[0]));
    }

    /** Runs an {@code ip -n NS ...} command (never one on the root namespace's own links); throws when it fails. */
    void ip(String... args) {
        List<String> c = new ArrayList<>(List.of("ip"));
        c.addAll(List.of(args));
        if (!args[0].equals("-n") || !args[1].startsWith(PREFIX)) {
            throw new IllegalArgumentException("only ip -n " + PREFIX + "* is allowed: " + c);
        }
        HostCommand.Result r = HostCommand.run(30, c.toArray(new String[0]));
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", c) + " exited " + r.exit() + ": " + r.output().trim());
        }
    }

    /** Starts {@code cmd} inside {@code netns} in the background, output to {@code out}. */
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

    /** Deletes the named namespaces now (only ones created here). */
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
            HostCommand.Result r = HostCommand.run(10, "ip", "netns", "del", ns);
            if (!r.ok()) {
                System.err.println("tcp-throughput: could not delete netns " + ns + ": " + r.output().trim());
            }
        }
    }

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
        procs.forEach(KernelNetns::destroy);
        names.forEach(KernelNetns::deleteNow);
    }
}
