package dev.usnet.tools.app;

import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code apps:} of a topology: small traffic sources and sinks that run on their namespace's thread,
 * so a topology can show (and tests can prove) that it forwards.
 */
public final class Apps {
    private final List<App> apps = new ArrayList<>();
    private final Topology topology;

    /** The one scheduler every namespace runs on in virtual time, else null (real time). */
    private final dev.usnet.core.time.VirtualScheduler virtual;

    private Apps(Topology topology) {
        this.topology = topology;
        this.virtual = topology.namespaces().isEmpty() ? null
                : topology.namespaces().getFirst().stack().scheduler() instanceof dev.usnet.core.time.VirtualScheduler v ? v : null;
    }

    /** Creates the apps of every namespace (not started), each by its kind. */
    public static Apps of(Topology t) {
        Apps a = new Apps(t);
        for (TopologySpec.Ns ns : t.spec().namespaces()) {
            // Each namespace's pings take ICMP echo identifiers from 0x5500 on, in file order.
            AppContext c = new AppContext(t, false, 0x5500);
            for (TopologySpec.App spec : ns.apps()) {
                App app = AppKinds.create(c, ns.name(), spec);
                app.netns = t.registry().get(ns.name());
                app.startOffsetNanos = spec.startNanos();
                a.apps.add(app);
            }
        }
        return a;
    }

    public List<App> list() {
        return List.copyOf(apps);
    }

    /**
     * Starts sinks and TCP servers first, then senders and TCP clients, each on its namespace's thread. A TCP
     * end that cannot open (a port in use, no route) is refused with the line of its entry.
     */
    public void start() {
        // Every app's process first, in file order (so its pids follow the file), on this thread: a pid space that
        // refuses one is a usage error naming the app, before anything runs.
        for (App a : apps) {
            a.startProcess();
        }
        for (App a : apps) {
            switch (a.order()) {
                case RECEIVER -> topology.onLoop(a.ns, () -> {
                    a.start();
                    return null;
                });
                case CLIENT_SERVER -> {
                    TcpApp t = (TcpApp) a;
                    startTcp(t, t.serverNs, t::startServer, "server");
                }
                case SENDER -> { }
            }
        }
        for (App a : apps) {
            switch (a.order()) {
                case CLIENT_SERVER -> {
                    TcpApp t = (TcpApp) a;
                    if (t.startOffsetNanos > 0) {
                        topology.onLoop(t.ns, () -> {
                            t.startAfterOffset(() -> startLate(t));
                            return null;
                        });
                    } else {
                        startTcp(t, t.ns, t::start, "client");
                    }
                }
                case SENDER -> topology.onLoop(a.ns, () -> {
                    a.startAfterOffset(a::start);
                    return null;
                });
                case RECEIVER -> { }
            }
        }
    }

    /**
     * A TCP client whose {@code start:} came: it connects now, on its namespace's thread while the run goes on. What
     * connect refuses then (no route, no free port) cannot stop the run as a usage error: the client ends without a
     * result (its outcome says so) and the reason goes to stderr with the entry's line.
     */
    private static void startLate(TcpApp t) {
        try {
            t.start();
        } catch (RuntimeException e) {
            System.err.println("usnet: " + t.spec.where().error(t.kind() + " client in namespace " + t.ns + ": " + e.getMessage()));
        }
    }

    private void startTcp(TcpApp t, String ns, Runnable start, String role) {
        try {
            topology.onLoop(ns, () -> {
                start.run();
                return null;
            });
        } catch (RuntimeException e) {
            Throwable c = e.getCause() != null ? e.getCause() : e;
            throw new UsageException(t.spec.where().error(t.kind() + " " + role + " in namespace " + ns + ": "
                    + c.getMessage()), e);
        }
    }

    /** How long TCP clients get at the end to finish gracefully before they are reset. */
    static final long TCP_GRACE_NANOS = 2_000_000_000L;

    /**
     * Ends the TCP apps still running: each client stops gracefully (rr and burst at the end of the operation in
     * flight; FIN after what it queued) and gets {@link #TCP_GRACE_NANOS} to finish, its server following its
     * end of stream; what is left then is reset. Waits for every end's result (bounded).
     */
    private void stopTcp() {
        List<TcpApp> tcp = apps.stream().filter(a -> a.order() == AppKind.Order.CLIENT_SERVER).map(a -> (TcpApp) a)
                .toList();
        if (tcp.isEmpty()) {
            return;
        }
        for (TcpApp t : tcp) {
            // A client whose start: had not come yet never connects; stopping it gives its result (never connected).
            if (t.startOffsetNanos > 0) {
                topology.onLoop(t.ns, t::cancelPendingStart);
            }
            t.client.stop();
        }
        awaitTcp(tcp, true, TCP_GRACE_NANOS);
        for (TcpApp t : tcp) {
            if (!t.client.isDone()) {
                t.client.abort();
            }
        }
        // A server whose client never reached it is still listening; one whose client just ended follows it
        // (stop() queues behind that on the server's thread and then has nothing to do).
        awaitTcp(tcp, true, 500_000_000L);
        for (TcpApp t : tcp) {
            if (!t.server.isDone()) {
                t.server.stop();
            }
        }
        awaitTcp(tcp, false, 1_000_000_000L);
        for (TcpApp t : tcp) {
            if (!t.server.isDone()) {
                t.server.abort();
            }
        }
        awaitTcp(tcp, false, 500_000_000L);
        for (TcpApp t : tcp) {
            t.running = false;
        }
    }

    /**
     * Waits up to {@code nanos} until the clients (or both ends) are done. In virtual time the wait is the
     * namespaces' own clock, run forward a millisecond at a time: nothing sleeps, and the run stays deterministic.
     */
    private void awaitTcp(List<TcpApp> tcp, boolean clientsOnly, long nanos) {
        java.util.function.BooleanSupplier waiting = () -> tcp.stream().anyMatch(t -> clientsOnly ? !t.client.isDone() : !t.isDone());
        if (virtual != null) {
            long deadline = virtual.nanoTime() + nanos;
            while (virtual.nanoTime() < deadline && waiting.getAsBoolean()) {
                virtual.runFor(1_000_000L);
            }
            return;
        }
        long deadline = System.nanoTime() + nanos;
        while (System.nanoTime() < deadline && waiting.getAsBoolean()) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Writes the TCP apps' {@code trace:} and {@code bursts:} files into {@code dir} once the apps have stopped;
     * returns the files written. One that cannot be written is added to {@code errors} with the entry's line.
     */
    public List<Path> writeLogs(Path dir, List<String> errors) {
        List<Path> files = new ArrayList<>();
        for (App a : apps) {
            if (a.order() == AppKind.Order.CLIENT_SERVER) {
                TcpApp t = (TcpApp) a;
                try {
                    files.addAll(t.writeLogs(dir));
                } catch (IOException | RuntimeException e) {
                    errors.add(t.spec.where().error("writing the app's trace or bursts file: " + e));
                }
            }
        }
        return files;
    }

    /**
     * Ends every app at once, waiting for nothing (a run that cannot go on: a virtual clock that stalled): TCP ends
     * are reset (ECONNABORTED), the others stopped. What they leave in flight stays queued until the namespaces
     * are deleted.
     */
    public void abort() {
        for (App a : apps) {
            if (a.order() == AppKind.Order.CLIENT_SERVER) {
                TcpApp t = (TcpApp) a;
                if (t.startOffsetNanos > 0) {
                    topology.onLoop(t.ns, t::cancelPendingStart);
                }
                t.client.abort();
                t.server.abort();
                t.running = false;
            } else {
                topology.onLoop(a.ns, () -> {
                    a.cancelPendingStart();
                    if (a.running) {
                        a.stop();
                    }
                    return null;
                });
            }
        }
    }

    /** How long sinks keep counting after the senders stopped, for what is still on its way. */
    static final long SINK_SETTLE_MILLIS = 50;

    /**
     * Stops TCP apps, then senders, then, after {@link #SINK_SETTLE_MILLIS} so that datagrams in flight are
     * counted rather than refused with UDP_NO_SOCKET, sinks.
     */
    public void stop() {
        stopTcp();
        for (App a : apps) {
            if (a.order() == AppKind.Order.SENDER && a.startOffsetNanos > 0) {
                topology.onLoop(a.ns, a::cancelPendingStart);
            }
            if (a.order() == AppKind.Order.SENDER && a.running) {
                topology.onLoop(a.ns, () -> {
                    a.stop();
                    return null;
                });
            }
        }
        boolean receiving = apps.stream().anyMatch(a -> a.order() == AppKind.Order.RECEIVER && a.running);
        if (receiving && virtual != null) {
            virtual.runFor(SINK_SETTLE_MILLIS * 1_000_000L);
        } else if (receiving) {
            try {
                Thread.sleep(SINK_SETTLE_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (App a : apps) {
            if (a.order() == AppKind.Order.RECEIVER && a.running) {
                topology.onLoop(a.ns, () -> {
                    a.stop();
                    return null;
                });
            }
        }
        for (App a : apps) {
            a.endProcess();
        }
    }

    /**
     * An app started while the daemon runs ({@code usnet ctl app start}), made from {@code spec} as a file's entry in
     * namespace {@code ns} is, its server (for a TCP kind) in the namespace the entry names; {@code pingId} is the ICMP
     * identifier of a ping. Not started; not one of this run's {@link #list()}: the control plane keeps it.
     */
    public static App createLive(Topology t, String ns, TopologySpec.App spec, int pingId) {
        App a = AppKinds.create(new AppContext(t, true, pingId), ns, spec);
        a.netns = t.registry().get(ns);
        return a;
    }

    /** Starts an app of {@link #createLive}: its process, then (a TCP kind) its server, then it, each on its thread. */
    public static void startLive(Topology t, App a) {
        a.startProcess();
        if (a.order() == AppKind.Order.CLIENT_SERVER) {
            TcpApp tcp = (TcpApp) a;
            t.onLoop(tcp.serverNs, () -> {
                tcp.startServer();
                return null;
            });
        }
        t.onLoop(a.ns, () -> {
            a.start();
            return null;
        });
    }

    /**
     * Stops an app of {@link #createLive} as the daemon's stop ends a file's: a TCP client gracefully, with
     * {@link #TCP_GRACE_NANOS} to finish before it is reset, then its server; any other on its thread.
     */
    public static void stopLive(Topology t, App a) {
        if (a.order() == AppKind.Order.CLIENT_SERVER) {
            TcpApp tcp = (TcpApp) a;
            tcp.client.stop();
            waitFor(() -> tcp.client.isDone(), TCP_GRACE_NANOS);
            if (!tcp.client.isDone()) {
                tcp.client.abort();
            }
            waitFor(() -> tcp.server.isDone(), 500_000_000L);
            if (!tcp.server.isDone()) {
                tcp.server.stop();
            }
            waitFor(tcp::isDone, 1_000_000_000L);
            tcp.running = false;
        } else if (a.running) {
            t.onLoop(a.ns, () -> {
                a.stop();
                return null;
            });
        }
        a.endProcess();
    }

    private static void waitFor(java.util.function.BooleanSupplier done, long nanos) {
        long deadline = System.nanoTime() + nanos;
        while (System.nanoTime() < deadline && !done.getAsBoolean()) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Whether a live app is still running (a TCP app until both its ends are done). */
    public static boolean isRunning(App a) {
        return a.isRunning();
    }
}
