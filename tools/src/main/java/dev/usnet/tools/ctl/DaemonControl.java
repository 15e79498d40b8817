package dev.usnet.tools.ctl;

import dev.usnet.tools.app.App;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.metrics.MetricsServer;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.topology.build.Topology;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Everything a running topology offers besides its traffic, in either clock: the event stream (and its
 * {@code events.jsonl}), the control socket, the Prometheus endpoint. Made before the apps start (so the log has
 * them starting), completed once they run; {@link #close} ends all of it.
 */
public final class DaemonControl implements AutoCloseable {
    /**
     * @param ctlSocket    where the control socket goes, or null for none
     * @param metrics      ADDR:PORT (or PORT on 127.0.0.1) for /metrics, or null for none
     * @param eventsLog    the events.jsonl file, or null for none
     * @param dropRate     drops per second of one reason in one namespace that raise a {@code drops} event
     */
    public record Options(Path ctlSocket, String metrics, Path eventsLog, long dropRate) {
        public static Options none() {
            return new Options(null, null, null, EventHub.DEFAULT_DROP_RATE);
        }
    }

    private final Options options;
    private final Topology topology;
    private final EventHub events;
    private final EventsLog log;
    private EventHub.Subscription logSub;
    private ControlPlane plane;
    private CtlServer server;
    private MetricsServer metrics;
    private java.util.concurrent.ScheduledExecutorService ticker;
    private boolean closed;

    private DaemonControl(Options options, Topology topology, EventHub events, EventsLog log) {
        this.options = options;
        this.topology = topology;
        this.events = events;
        this.log = log;
    }

    /**
     * The event stream of {@code topology}, logging from now when asked to. {@code virtual}: times are seconds of
     * the virtual clock; {@code startNanos}: the namespaces' clock now.
     */
    public static DaemonControl begin(Topology topology, boolean virtual, long startNanos, Options o) {
        EventHub hub = new EventHub(topology, virtual, startNanos);
        hub.setDropRateThreshold(o.dropRate());
        EventsLog log = null;
        if (o.eventsLog() != null) {
            try {
                log = new EventsLog(o.eventsLog());
            } catch (IOException e) {
                throw new UsageException("cannot write the event log " + o.eventsLog() + ": " + e.getMessage(), e);
            }
        }
        DaemonControl d = new DaemonControl(o, topology, hub, log);
        if (log != null) {
            d.logSub = hub.subscribe(log::offer);
        }
        return d;
    }

    public EventHub events() {
        return events;
    }

    /**
     * The apps run: events say so (and TCP apps say when they finish), the control socket and /metrics open.
     * Throws a {@link UsageException} when either cannot (what was opened is closed again by {@link #close}).
     */
    public void started(ControlPlane.Host host) {
        Apps apps = host.apps().get();
        if (apps != null) {
            List<java.util.Map<String, Object>> names = AppsVerbs.list(apps);
            List<App> list = apps.list();
            for (int i = 0; i < list.size(); i++) {
                App a = list.get(i);
                String name = (String) names.get(i).get("name");
                NetStack s = topology.stack(a.namespace());
                events.app(s, name, "start", null, null);
                CompletionStage<?> ends = a.completion();
                if (ends != null) {
                    ends.whenComplete((r, ex) -> {
                        var o = a.outcome();
                        events.app(s, name, "finish", o.ok() ? "ok" : "failed", o.ok() ? null : o.reason());
                    });
                }
            }
        }
        plane = new ControlPlane(host, events);
        if (options.ctlSocket() != null) {
            server = CtlServer.start(plane, options.ctlSocket());
        }
        if (options.metrics() != null) {
            metrics = MetricsServer.start(options.metrics(), topology, host.apps());
        }
    }

    public ControlPlane plane() {
        return plane;
    }

    /** The control socket's path, or null. */
    public Path socket() {
        return server == null ? null : server.path();
    }

    /** Where /metrics is served ({@code http://ADDR:PORT/metrics}), or null. */
    public String metricsUrl() {
        return metrics == null ? null : metrics.url();
    }

    /** Called about once a second of the run's clock: raises drop events. */
    public void tick(long nowNanos) {
        events.checkDrops(nowNanos);
    }

    /**
     * The apps have stopped: those that do not end by themselves (pings, UDP, TCP apps cut short) say how they
     * ended. Events after this (the namespaces being taken down) are not the run's.
     */
    public void appsStopped(Apps apps) {
        List<java.util.Map<String, Object>> names = AppsVerbs.list(apps);
        List<App> list = apps.list();
        for (int i = 0; i < list.size(); i++) {
            App a = list.get(i);
            if (a.completed()) {
                continue;
            }
            var o = a.outcome();
            events.app(topology.stack(a.namespace()), (String) names.get(i).get("name"), "finish", o.ok() ? "ok" : "failed",
                    o.ok() ? null : o.reason());
        }
    }

    /** The event log's file, or null. */
    public Path eventsLog() {
        return log == null ? null : log.file();
    }

    /** Real time: raises drop events from a thread of its own, once a second. */
    public void tickEverySecond() {
        ticker = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "usnet-events-tick");
            t.setDaemon(true);
            return t;
        });
        ticker.scheduleAtFixedRate(() -> tick(System.nanoTime()), 1, 1, java.util.concurrent.TimeUnit.SECONDS);
    }

    /** Closes the control socket and /metrics, ends runtime captures, writes out and closes the event log. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (ticker != null) {
            ticker.shutdownNow();
        }
        List<String> errors = new ArrayList<>();
        if (server != null) {
            server.close();
        }
        if (metrics != null) {
            metrics.close();
        }
        if (plane != null) {
            plane.close();
        }
        if (logSub != null) {
            logSub.close();
        }
        if (log != null) {
            try {
                log.close();
            } catch (IOException e) {
                errors.add("writing the event log " + log.file() + ": " + e.getMessage());
            }
        }
        errors.forEach(e -> System.err.println("usnet: " + e));
    }
}
