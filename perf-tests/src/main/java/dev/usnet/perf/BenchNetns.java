package dev.usnet.perf;

import dev.usnet.tap.HostCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The kernel network namespaces and background processes of one scenario-benchmark run. Namespaces are named
 * {@code <kind>-<pid>-<tag>} (tap-throughput: {@code usnet-bench-<pid>-*}, tcp-throughput:
 * {@code usnet-tcpbench-<pid>-*}); {@link #close} (idempotent, thread-safe, also run by the Ctrl-C hook of
 * {@link #addCleanupHook}) kills every process started here, with its descendants, and deletes every namespace
 * created here, by name. Nothing here touches the machine's own namespace: links are created with {@code ip -n NS}.
 */
public final class BenchNetns implements AutoCloseable {
    private final String prefix;
    private final String who;
    private final List<String> created = new ArrayList<>();
    private final List<Process> background = new ArrayList<>();
    private boolean closed;
    private Thread hook;

    /**
     * @param kind the start of every namespace name, e.g. {@code usnet-bench}; this process's pid follows
     * @param who the benchmark's name for messages, e.g. {@code tap-throughput}
     */
    public BenchNetns(String kind, String who) {
        this.prefix = kind + "-" + ProcessHandle.current().pid() + "-";
        this.who = who;
    }

    /** {@code <kind>-<pid>-}: every namespace created here starts with it. */
    public String prefix() {
        return prefix;
    }

    /**
     * What a run with kernel namespaces lacks: those of {@code tools} not on the PATH, and root (CAP_NET_ADMIN)
     * when this process does not run as root. Empty when nothing is missing.
     */
    public static List<String> missing(String... tools) {
        List<String> missing = new ArrayList<>();
        for (String tool : tools) {
            if (!HostCommand.has(tool)) {
                missing.add(tool);
            }
        }
        if (!HostCommand.isRoot()) {
            missing.add("root (CAP_NET_ADMIN)");
        }
        return missing;
    }

    /** Creates namespace {@code <prefix><tag>} with lo up and IPv6 off; returns its name. */
    public String create(String tag) {
        String name = prefix + tag;
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
    public String exec(String netns, String... cmd) {
        HostCommand.Result r = tryExec(30, netns, cmd);
        if (!r.ok()) {
            throw new IllegalStateException("in " + netns + ": " + String.join(" ", cmd) + " exited " + r.exit() + ": "
                    + r.output().trim());
        }
        return r.output();
    }

    /** Runs {@code cmd} inside {@code netns}, whatever its exit. */
    public HostCommand.Result tryExec(int timeoutSeconds, String netns, String... cmd) {
        return HostCommand.run(timeoutSeconds, inNetns(netns, cmd));
    }

    /**
     * Runs an {@code ip -n NS ...} command from the root namespace, for a namespace created here (never one on the
     * root namespace's own links); throws when it fails.
     */
    public void ip(String... args) {
        List<String> c = new ArrayList<>(List.of("ip"));
        c.addAll(List.of(args));
        if (args.length < 2 || !args[0].equals("-n") || !args[1].startsWith(prefix)) {
            throw new IllegalArgumentException("only ip -n " + prefix + "* is allowed: " + c);
        }
        HostCommand.Result r = HostCommand.run(30, c.toArray(new String[0]));
        if (!r.ok()) {
            throw new IllegalStateException(String.join(" ", c) + " exited " + r.exit() + ": " + r.output().trim());
        }
    }

    /** Starts {@code cmd} inside {@code netns} in the background, output to {@code out}; killed by {@link #kill}/{@link #close}. */
    public Process start(String netns, Path out, String... cmd) throws IOException {
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("shutting down");
            }
            Process p = new ProcessBuilder(inNetns(netns, cmd)).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            background.add(p);
            return p;
        }
    }

    private static String[] inNetns(String netns, String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", netns));
        c.addAll(List.of(cmd));
        return c.toArray(new String[0]);
    }

    /** Kills {@code p} (and what it started) now. */
    public void kill(Process p) {
        synchronized (this) {
            background.remove(p);
        }
        HostCommand.kill(p);
    }



    /** Deletes the named namespaces now (only ones created here). */
    public void delete(List<String> names) {
        for (String ns : names) {
            synchronized (this) {
                if (!created.remove(ns)) {
                    continue;
                }
            }
            deleteNow(ns);
        }
    }

    private void deleteNow(String ns) {
        if (Files.exists(Path.of("/var/run/netns", ns))) {
            HostCommand.Result r = HostCommand.run(10, "ip", "netns", "del", ns);
            if (!r.ok()) {
                System.err.println(who + ": could not delete netns " + ns + ": " + r.output().trim());
            }
        }
    }

    /** Closes this on Ctrl-C too (a shutdown hook that says what it cleans up); see {@link #removeCleanupHook}. */
    public synchronized void addCleanupHook() {
        if (hook == null) {
            hook = new Thread(() -> {
                System.err.println(who + ": cleaning up " + prefix + "*");
                close();
            }, who + "-cleanup");
            Runtime.getRuntime().addShutdownHook(hook);
        }
    }

    /** After a normal end (everything closed already): drops the hook of {@link #addCleanupHook}. */
    public synchronized void removeCleanupHook() {
        if (hook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // already shutting down
            }
            hook = null;
        }
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
        procs.forEach(HostCommand::kill);
        names.forEach(this::deleteNow);
    }
}
