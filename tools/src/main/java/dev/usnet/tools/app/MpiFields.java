package dev.usnet.tools.app;

import dev.usnet.tcp.app.MpiResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The fields an {@code mpi} app adds to its {@code apps[]} object (docs/results.md): completion, application
 * bandwidth, the job's shape, and the losses per connection with the cwnd at each, as a distribution over all
 * connections plus the connections that had any (lists capped so ~1000 lossy connections stay a few hundred kB).
 */
public final class MpiFields {
    /** At most this many cwnd values per connection and kind in {@code lossy_connections}. */
    static final int MAX_LISTED = 64;

    private MpiFields() {}

    public static void put(Map<String, Object> m, MpiApp app) {
        MpiResult r = app.result();
        m.put("pattern", app.spec().pattern().label());
        m.put("ranks", r == null ? 0 : r.ranks());
        m.put("iterations", app.spec().iterations());
        m.put("connections", r == null ? 0 : r.connections());
        m.put("completion_s", ResultValues.fixed(r == null || !r.completed() ? 0 : r.completionNanos() / 1e9));
        m.put("completion_us", ResultValues.fixed(r == null || !r.completed() ? 0 : r.completionNanos() / 1e3));
        m.put("mb_s", ResultValues.fixed(r == null ? 0 : r.mbPerSecond()));
        m.put("tcp_mb_s", ResultValues.fixed(r == null || r.completionNanos() <= 0 ? 0
                : (r.bytesSent() - r.shmBytes()) / (r.completionNanos() / 1e9) / 1e6));
        m.put("shm_bytes", r == null ? 0 : r.shmBytes());
        TreeMap<Long, Long> recovery = new TreeMap<>();
        TreeMap<Long, Long> rto = new TreeMap<>();
        List<Map<String, Object>> lossy = new ArrayList<>();
        if (r != null) {
            for (MpiResult.Connection c : r.perConnection()) {
                for (long w : c.recoveryCwnds()) {
                    recovery.merge(w, 1L, Long::sum);
                }
                for (long w : c.rtoCwnds()) {
                    rto.merge(w, 1L, Long::sum);
                }
                if (c.retransmits() > 0 || c.timeouts() > 0) {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("ranks", c.a() + "-" + c.b());
                    x.put("retrans", c.retransmits());
                    x.put("rtos", c.timeouts());
                    x.put("recoveries", c.recoveryCwnds().length);
                    x.put("recovery_cwnd", capped(c.recoveryCwnds()));
                    x.put("rto_cwnd", capped(c.rtoCwnds()));
                    lossy.add(x);
                }
            }
        }
        Map<String, Object> dist = new LinkedHashMap<>();
        dist.put("recovery", keyed(recovery));
        dist.put("rto", keyed(rto));
        m.put("cwnd_at_loss", dist);
        m.put("lossy_connections", lossy);
    }

    private static List<Long> capped(long[] v) {
        List<Long> l = new ArrayList<>(Math.min(v.length, MAX_LISTED));
        for (int i = 0; i < v.length && i < MAX_LISTED; i++) {
            l.add(v[i]);
        }
        return l;
    }

    /** {cwnd: count} with the cwnd as a string key, in ascending cwnd order. */
    private static Map<String, Long> keyed(TreeMap<Long, Long> t) {
        Map<String, Long> m = new LinkedHashMap<>();
        t.forEach((k, v) -> m.put(Long.toString(k), v));
        return m;
    }
}
