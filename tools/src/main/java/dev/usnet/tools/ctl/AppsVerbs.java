package dev.usnet.tools.ctl;

import dev.usnet.tools.topology.App;
import dev.usnet.tools.topology.Pinger;
import dev.usnet.tools.topology.Spawner;
import dev.usnet.tools.topology.TcpApp;
import dev.usnet.tools.topology.UdpSender;
import dev.usnet.tools.topology.UdpSink;
import dev.usnet.tcp.app.AppResult;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tcp.app.Percentiles;
import dev.usnet.tools.topology.Apps;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code apps}: each app of the topology with its status and what it has counted so far; names as in the results
 * file ({@code <ns>.<kind>-<i>}, docs/results.md).
 */
final class AppsVerbs {
    private AppsVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("apps");
        a.end();
        List<Map<String, Object>> l = listAll(c);
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            sb.append(m.get("name")).append(" [").append(m.get("status")).append(", ").append(m.get("outcome"));
            if (m.get("reason") != null) {
                sb.append(": ").append(m.get("reason"));
            }
            sb.append("] ").append(m.get("summary")).append('\n');
        }
        return Reply.of(l, l.isEmpty() ? "no apps" : sb.toString().stripTrailing());
    }

    /** What a running TCP app's ends have received so far: the payload that got through. */
    static long delivered(TcpApp t) {
        return t.client().bytesReceived() + t.server().bytesReceived();
    }

    /**
     * A TCP app that has not finished has no result yet (its ends report when they close): what it has moved so
     * far, and the rate since its client started, instead of its ends' "no result".
     */
    private static void running(Map<String, Object> m, TcpApp t, long bytes, java.util.function.ToLongFunction<String> clock) {
        long started = t.startNanos();
        String so = bytes + " bytes received so far (client " + t.client().bytesReceived() + ", server "
                + t.server().bytesReceived() + ")";
        if (clock == null || started == 0) {
            m.put("summary", (started == 0 ? "starting: " : "running: ") + so);
            return;
        }
        double seconds = (clock.applyAsLong(t.namespace()) - started) / 1e9;
        if (seconds > 0) {
            double mbit = bytes * 8 / seconds / 1e6;
            m.put("elapsed_s", Math.round(seconds * 1000) / 1000.0);
            m.put("mbit_s_so_far", Math.round(mbit * 1000) / 1000.0);
            m.put("summary", String.format(java.util.Locale.ROOT, "running for %.1f s: %s, %.1f Mbit/s so far", seconds, so, mbit));
        } else {
            m.put("summary", "running: " + so);
        }
    }

    static String kind(App a) {
        return switch (a) {
            case Pinger p -> "ping";
            case UdpSender u -> "udp-send";
            case UdpSink u -> "udp-sink";
            case TcpApp t -> t.kind();
            default -> a.getClass().getSimpleName();
        };
    }

    /** The file's apps, then those started with {@code app start}, in the order they started. */
    static List<App> all(ControlPlane.Call c) {
        Apps apps = c.cp().host().apps().get();
        List<App> l = new ArrayList<>(apps == null ? List.of() : apps.list());
        l.addAll(c.cp().liveApps().list());
        return l;
    }

    /** {@link #all} as {@code apps} lists them, with a running TCP app's time and rate so far. */
    static List<Map<String, Object>> listAll(ControlPlane.Call c) {
        return list(all(c), ns -> c.cp().stack(ns).now());
    }

    /** Every app, in file order, as it is now (read from any thread: app counters are safe to read). */
    static List<Map<String, Object>> list(Apps apps) {
        return list(apps, null);
    }

    /**
     * As {@link #list(Apps)}; {@code clock} (a namespace's clock now, ns) gives a running TCP app its elapsed time
     * and rate so far.
     */
    static List<Map<String, Object>> list(Apps apps, java.util.function.ToLongFunction<String> clock) {
        return list(apps.list(), clock);
    }

    /** As {@link #list(Apps, java.util.function.ToLongFunction)} for the apps given, named by their order here. */
    static List<Map<String, Object>> list(List<App> apps, java.util.function.ToLongFunction<String> clock) {
        List<Map<String, Object>> l = new ArrayList<>();
        Map<String, Integer> index = new HashMap<>();
        for (App a : apps) {
            String kind = kind(a);
            int i = index.merge(a.namespace() + "." + kind, 1, Integer::sum) - 1;
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", a.namespace() + "." + kind + "-" + i);
            m.put("ns", a.namespace());
            m.put("kind", kind);
            // A TCP app is done when both its ends are; a ping, UDP or spawn app once it was started and stopped (app stop).
            boolean simple = a instanceof Pinger || a instanceof UdpSender || a instanceof UdpSink
                    || a instanceof Spawner;
            boolean done = a instanceof TcpApp t ? t.isDone() : simple && a.process() != null && !Apps.isRunning(a);
            m.put("status", done ? "done" : "running");
            if (a instanceof TcpApp && !done) {
                // A TCP app's outcome is its ends' results, which come when it finishes.
                m.put("outcome", "pending");
                m.put("reason", null);
            } else {
                Outcome o = a.outcome();
                m.put("outcome", o.ok() ? "ok" : "failed");
                m.put("reason", o.ok() ? null : o.reason());
            }
            long bytes = 0;
            long ops = 0;
            Percentiles lat = null;
            String to = "";
            switch (a) {
                case Pinger p -> {
                    to = p.to();
                    ops = p.received();
                    m.put("sent", p.sent());
                    lat = Percentiles.of(p.histogram());
                }
                case UdpSender u -> {
                    to = u.to();
                    ops = u.sent();
                    bytes = u.sent() * u.size();
                }
                case UdpSink u -> {
                    to = ":" + u.port();
                    ops = u.received();
                    bytes = u.bytes();
                }
                case TcpApp t -> {
                    to = t.to();
                    AppResult r = t.client().result();
                    if (r != null) {
                        bytes = r.bytes();
                        ops = r.operations();
                        lat = r.latency();
                        m.put("mbit_s", r.mbps());
                    } else {
                        bytes = delivered(t);
                        running(m, t, bytes, clock);
                    }
                }
                default -> { }
            }
            m.put("to", to);
            m.put("bytes", bytes);
            m.put("ops", ops);
            if (lat != null) {
                m.put("p50_us", lat.p50Us());
                m.put("p99_us", lat.p99Us());
            }
            if (!m.containsKey("summary")) {
                m.put("summary", a.summary().replace('\n', ' '));
            }
            l.add(m);
        }
        return l;
    }
}
