package dev.usnet.tools.packetdrill.kernel;

import dev.usnet.tap.Capabilities;
import dev.usnet.tap.HostCommand;
import dev.usnet.tap.TunException;
import dev.usnet.tap.netns.Netns;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SysException;
import dev.usnet.tools.packetdrill.TargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The kernel network namespace a script runs in: created under a name unique to this process
 * ({@code usnet-pd-<pid>-<n>}), entered by the threads {@link #threadFactory} makes, and deleted by that name in
 * {@link #delete} (once; also from a JVM shutdown hook, so an aborted run leaves nothing behind).
 *
 * <p>Creating a named namespace is {@code ip netns add}: a namespace is given a name by bind-mounting its nsfs inode
 * under /var/run/netns, which is mount(2) work, not rtnetlink; usnet's platform layer has no mount binding, and
 * iproute2 is what every other kernel namespace in usnet is made with, so this shells out to it.
 */
final class TestNamespace implements AutoCloseable {
    static final int CAP_NET_ADMIN = Capabilities.CAP_NET_ADMIN;
    static final int CAP_SYS_ADMIN = 21;
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    private final String name;
    private final int nsFd;
    private final Thread shutdownHook;
    private final AtomicInteger threads = new AtomicInteger();
    private boolean deleted;

    private TestNamespace(String name, int nsFd) {
        this.name = name;
        this.nsFd = nsFd;
        this.shutdownHook = Thread.ofPlatform().name("usnet-pd-cleanup-" + name).unstarted(() -> deleteByName(name));
    }

    /** Fails with what to do unless this thread may create namespaces and devices (CAP_SYS_ADMIN, CAP_NET_ADMIN). */
    static void requirePrivileges() {
        long caps;
        try {
            caps = Capabilities.effective();
        } catch (TunException e) {
            throw new TargetException("the kernel target cannot read its capabilities (" + e.getMessage()
                    + "); it needs CAP_NET_ADMIN and CAP_SYS_ADMIN: run as root (sudo)");
        }
        boolean netAdmin = (caps >>> CAP_NET_ADMIN & 1) != 0;
        boolean sysAdmin = (caps >>> CAP_SYS_ADMIN & 1) != 0;
        if (!netAdmin || !sysAdmin) {
            throw new TargetException("the kernel target needs CAP_NET_ADMIN (a TUN device, addresses, routes) and"
                    + " CAP_SYS_ADMIN (creating and entering a network namespace); missing: "
                    + (netAdmin ? "" : "CAP_NET_ADMIN ") + (sysAdmin ? "" : "CAP_SYS_ADMIN")
                    + " — run as root (sudo)");
        }
    }

    /** Creates a fresh namespace with a name nobody else uses and opens an fd on it. */
    static TestNamespace create() {
        requirePrivileges();
        long pid = ProcessHandle.current().pid();
        String last = "";
        for (int attempt = 0; attempt < 16; attempt++) {
            String name = "usnet-pd-" + pid + "-" + SEQUENCE.incrementAndGet();
            if (Files.exists(Path.of(Netns.RUN_DIR, name))) {
                // Left by an earlier process that had the same pid and died before cleaning up: not ours to remove.
                continue;
            }
            HostCommand.Result r = HostCommand.run(10, "ip", "netns", "add", name);
            if (!r.ok()) {
                last = "ip netns add " + name + ": " + r.output().trim();
                continue;
            }
            int fd;
            try {
                fd = Netns.open(name);
            } catch (SysException e) {
                deleteByName(name);
                throw new TargetException("cannot open the new namespace " + name + ": " + e.getMessage(), e);
            }
            TestNamespace ns = new TestNamespace(name, fd);
            Runtime.getRuntime().addShutdownHook(ns.shutdownHook);
            return ns;
        }
        throw new TargetException("cannot create a network namespace for the kernel target: " + last);
    }

    String name() {
        return name;
    }

    /** The fd of the namespace (valid until {@link #close}). */
    int fd() {
        return nsFd;
    }

    /**
     * Platform daemon threads that enter this namespace before they run anything: sockets, the TUN device and
     * /proc/sys/net writes belong to the namespace of the thread making them. A thread that cannot enter fails its
     * task with the setns message.
     */
    ThreadFactory threadFactory(String role) {
        return task -> Thread.ofPlatform().daemon(true).name("usnet-pd-" + role + "-" + threads.incrementAndGet())
                .unstarted(() -> {
                    try {
                        Netns.enter(nsFd, name);
                    } catch (SysException e) {
                        throw new TargetException(e.getMessage(), e);
                    }
                    task.run();
                });
    }

    /** Deletes the namespace by name (everything in it goes when its last socket and thread are gone). Once. */
    @Override
    public synchronized void close() {
        if (deleted) {
            return;
        }
        deleted = true;
        Libc.close(nsFd);
        deleteByName(name);
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running or about to: it deletes the same name, harmlessly twice.
        }
    }

    /** {@code ip netns del NAME}, when the name is still there. */
    static void deleteByName(String name) {
        if (Files.exists(Path.of(Netns.RUN_DIR, name))) {
            HostCommand.Result r = HostCommand.run(10, "ip", "netns", "del", name);
            if (!r.ok() && Files.exists(Path.of(Netns.RUN_DIR, name))) {
                System.err.println("usnet packetdrill: could not delete network namespace " + name + ": "
                        + r.output().trim() + " (delete it with: ip netns del " + name + ")");
            }
        }
    }
}
