package dev.usnet.tools.experiment.nsid;

import dev.usnet.tap.HostCommand;
import dev.usnet.tap.netns.Netns;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Kernel network namespaces a measurement creates for itself: {@code <prefix>-<pid>-<tag>}, all made by one
 * {@code ip -batch} ({@code ip netns add} per name, thousands in seconds), and deleted by name when closed, also when
 * the run fails or the JVM is stopped by a signal (a shutdown hook). Namespaces an earlier run of this prefix left
 * behind when its process was killed (its pid no longer runs) are deleted first. Nothing else is touched.
 */
public final class KernelNamespaces implements AutoCloseable {
    private final List<String> names;
    private final Thread hook;
    private boolean closed;

    private KernelNamespaces(List<String> names) {
        this.names = names;
        this.hook = new Thread(this::deleteAll, "usnet-netns-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Creates {@code <prefix>-<pid>-<tag>} for every tag; on failure deletes what it made and throws. */
    public static KernelNamespaces create(String prefix, List<String> tags) throws IOException {
        deleteLeftovers(prefix);
        String own = prefix + "-" + ProcessHandle.current().pid() + "-";
        List<String> names = new ArrayList<>(tags.size());
        for (String t : tags) {
            names.add(own + t);
        }
        KernelNamespaces k = new KernelNamespaces(names);
        HostCommand.Result r = batch(names.stream().map(n -> "netns add " + n).toList(), false);
        if (!r.ok()) {
            k.close();
            throw new IOException("ip -batch (netns add " + names.size() + " namespaces) failed: " + r.output().trim());
        }
        return k;
    }

    public List<String> names() {
        return List.copyOf(names);
    }

    /** Deletes every namespace it made, by name (those already gone are skipped). */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        deleteAll();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // Already shutting down: the hook is what is running.
        }
        closed = true;
    }

    private synchronized void deleteAll() {
        if (closed) {
            return;
        }
        List<String> present = names.stream().filter(n -> Files.exists(Path.of(Netns.RUN_DIR, n))).toList();
        if (!present.isEmpty()) {
            HostCommand.Result r = batch(present.stream().map(n -> "netns del " + n).toList(), true);
            if (!r.ok()) {
                System.err.println("usnet: could not delete every kernel namespace " + names.getFirst() + "...: "
                        + r.output().trim());
            }
        }
        closed = true;
    }

    /** Deletes {@code <prefix>-<pid>-*} whose pid is not a running process (a run that was killed). */
    static void deleteLeftovers(String prefix) {
        Path dir = Path.of(Netns.RUN_DIR);
        if (!Files.isDirectory(dir)) {
            return;
        }
        List<String> stale = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix + "-")).forEach(n -> {
                String rest = n.substring(prefix.length() + 1);
                int dash = rest.indexOf('-');
                if (dash > 0 && rest.substring(0, dash).chars().allMatch(Character::isDigit)) {
                    long pid = Long.parseLong(rest.substring(0, dash));
                    if (ProcessHandle.of(pid).isEmpty()) {
                        stale.add(n);
                    }
                }
            });
        } catch (IOException e) {
            return;
        }
        if (!stale.isEmpty()) {
            batch(stale.stream().map(n -> "netns del " + n).toList(), true);
        }
    }

    /** {@code ip [-force] -batch FILE} with one command per line; -force goes on past a failing line. */
    private static HostCommand.Result batch(List<String> lines, boolean force) {
        try {
            Path f = Files.createTempFile("usnet-netns", ".batch");
            try {
                Files.writeString(f, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
                return force ? HostCommand.run(600, "ip", "-force", "-batch", f.toString())
                        : HostCommand.run(600, "ip", "-batch", f.toString());
            } finally {
                Files.deleteIfExists(f);
            }
        } catch (IOException e) {
            return new HostCommand.Result(-1, "cannot write the ip batch file: " + e.getMessage());
        }
    }
}
