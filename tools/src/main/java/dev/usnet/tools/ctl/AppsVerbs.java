package dev.usnet.tools.ctl;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.AppCounters;
import dev.usnet.tools.app.AppKind;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tcp.app.Percentiles;
import dev.usnet.tools.app.Apps;
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
            String kind = a.kind();
            int i = index.merge(a.namespace() + "." + kind, 1, Integer::sum) - 1;
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", a.namespace() + "." + kind + "-" + i);
            m.put("ns", a.namespace());
            m.put("kind", kind);
            // A TCP app is done when both its ends are; any other once it was started and stopped (app stop).
            boolean done = a.order() == AppKind.Order.CLIENT_SERVER ? !a.isRunning() : a.process() != null && !a.isRunning();
            m.put("status", done ? "done" : "running");
            if (a.outcomePending()) {
                // A TCP app's outcome is its ends' results, which come when it finishes.
                m.put("outcome", "pending");
                m.put("reason", null);
            } else {
                Outcome o = a.outcome();
                m.put("outcome", o.ok() ? "ok" : "failed");
                m.put("reason", o.ok() ? null : o.reason());
            }
            a.putLiveFields(m);
            String to = a.peer();
            AppCounters c = a.counters();
            long bytes;
            long ops = 0;
            Percentiles lat = null;
            if (c != null) {
                bytes = c.bytes();
                ops = c.operations();
                lat = c.latency();
                if (c.mbitPerSecond() != null) {
                    m.put("mbit_s", c.mbitPerSecond());
                }
            } else {
                bytes = a.bytesSoFar();
                a.putProgress(m, bytes, clock);
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
