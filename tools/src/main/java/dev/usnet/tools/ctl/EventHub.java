package dev.usnet.tools.ctl;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.Device;
import dev.usnet.core.event.NetListener;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.neigh.NudState;
import dev.usnet.core.route.Route;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.topology.build.Topology;
import java.io.IOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * The daemon's event stream ({@code usnet ctl events}, {@code events.jsonl}): what {@code ip monitor} and
 * {@code bridge monitor} would print, plus apps starting and finishing and drop bursts. While nobody subscribes no
 * namespace has a listener, so the data path pays a null check; the first subscriber installs one on every
 * namespace and the last one to leave removes them. Events are built on the thread where they happen and handed
 * to each subscriber without blocking: a subscriber that cannot take one loses it, and is told how many it lost.
 */
public final class EventHub {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Topology topology;
    private final boolean virtual;
    private final long startNanos;
    private final CopyOnWriteArrayList<Subscription> subs = new CopyOnWriteArrayList<>();
    /** Drops per second of one reason in one namespace from which a {@code drops} event is raised. */
    private volatile long dropRateThreshold = DEFAULT_DROP_RATE;
    /** Per namespace and reason, the count at the last look. */
    private final Map<String, long[]> lastDrops = new java.util.concurrent.ConcurrentHashMap<>();
    private long lastDropCheck;

    public static final long DEFAULT_DROP_RATE = 100;

    /**
     * @param virtual   times are the virtual clock's (seconds since its start) rather than the wall clock's
     * @param startNanos the namespace clock at the start of the run, so events carry seconds since then
     */
    public EventHub(Topology topology, boolean virtual, long startNanos) {
        this.topology = topology;
        this.virtual = virtual;
        this.startNanos = startNanos;
    }

    public void setDropRateThreshold(long perSecond) {
        this.dropRateThreshold = perSecond;
    }

    /** One subscriber: {@code sink} takes an event line (JSON, no newline) and says whether it could. */
    public final class Subscription implements AutoCloseable {
        private final Predicate<String> sink;
        private final AtomicLong lost = new AtomicLong();

        private Subscription(Predicate<String> sink) {
            this.sink = sink;
        }

        void offer(String json) {
            if (lost.get() > 0) {
                resumed();
            }
            if (!sink.test(json)) {
                lost.incrementAndGet();
            }
        }

        /** The subscriber can take events again: it first hears how many it lost. */
        public void resumed() {
            long n = lost.getAndSet(0);
            if (n > 0) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("type", "lost");
                m.put("count", n);
                if (!sink.test(line(m))) {
                    lost.addAndGet(n);
                }
            }
        }

        /** Events this subscriber could not take and has not been told of yet. */
        public long lost() {
            return lost.get();
        }

        @Override
        public void close() {
            unsubscribe(this);
        }
    }

    public Subscription subscribe(Predicate<String> sink) {
        Subscription s = new Subscription(sink);
        synchronized (subs) {
            boolean first = subs.isEmpty();
            subs.add(s);
            if (first) {
                for (NetNamespace n : topology.namespaces()) {
                    n.stack().setListener(new Listener(n.stack()));
                }
            }
        }
        return s;
    }

    private void unsubscribe(Subscription s) {
        synchronized (subs) {
            if (subs.remove(s) && subs.isEmpty()) {
                for (NetNamespace n : topology.namespaces()) {
                    n.stack().setListener(null);
                }
            }
        }
    }

    /** A namespace added while running gets the listener when someone listens. */
    public void attach(NetStack s) {
        synchronized (subs) {
            if (!subs.isEmpty()) {
                s.setListener(new Listener(s));
            }
        }
    }

    public boolean hasSubscribers() {
        return !subs.isEmpty();
    }

    /** Sends {@code fields} (with "type" first) to every subscriber, stamped with {@code ns}'s clock. */
    public void emit(NetStack ns, Map<String, Object> fields) {
        if (subs.isEmpty()) {
            return;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        long now = ns != null ? ns.now() : virtual ? 0 : System.nanoTime();
        m.put("time_s", Math.round((now - startNanos) / 1e6) / 1e3);
        if (!virtual) {
            m.put("wall", Instant.now().toString());
        }
        if (ns != null) {
            m.put("ns", ns.name());
        }
        m.putAll(fields);
        String json = line(m);
        for (Subscription s : subs) {
            s.offer(json);
        }
    }

    private static String line(Map<String, Object> m) {
        try {
            return JSON.writeValueAsString(m);
        } catch (IOException e) {
            return "{\"type\":\"error\",\"error\":\"unwritable event\"}";
        }
    }

    private static Map<String, Object> fields(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    /** An app began ({@code action} start) or ended (finish, with its outcome). */
    public void app(NetStack ns, String name, String action, String outcome, String reason) {
        Map<String, Object> f = fields("type", "app", "action", action, "app", name);
        if (outcome != null) {
            f.put("outcome", outcome);
        }
        if (reason != null) {
            f.put("reason", reason);
        }
        emit(ns, f);
    }

    /**
     * Looks at every namespace's drop counters and raises a {@code drops} event for each reason that grew faster
     * than the threshold since the last look. Called about once a second by the daemon (real time) or at each slice
     * of virtual time; {@code nowNanos} is the clock of the caller.
     */
    public void checkDrops(long nowNanos) {
        if (subs.isEmpty()) {
            lastDrops.clear();
            lastDropCheck = nowNanos;
            return;
        }
        long dt = nowNanos - lastDropCheck;
        boolean first = lastDrops.isEmpty();
        for (NetNamespace n : topology.namespaces()) {
            NetStack s = n.stack();
            long[] last = lastDrops.computeIfAbsent(s.name(), x -> new long[DropReason.values().length]);
            for (DropReason r : DropReason.values()) {
                long c = s.drops().get(r);
                long d = c - last[r.ordinal()];
                last[r.ordinal()] = c;
                if (!first && dt > 0 && d > 0) {
                    double rate = d * 1e9 / dt;
                    if (rate >= dropRateThreshold) {
                        emit(s, fields("type", "drops", "reason", r.name(), "count", d,
                                "per_s", Math.round(rate * 10) / 10.0, "total", c));
                    }
                }
            }
        }
        lastDropCheck = nowNanos;
    }

    /** One namespace's listener: every event it raises is stamped with that namespace. */
    private final class Listener implements NetListener {
        private final NetStack stack;

        Listener(NetStack stack) {
            this.stack = stack;
        }
        @Override
        public void linkChanged(Device dev) {
            emit(stack, fields("type", "link", "dev", dev.name(), "up", dev.isUp(), "carrier", dev.hasCarrier(),
                    "state", LinkVerbs.operstate(dev)));
        }

        @Override
        public void fdbLearned(Bridge bridge, long mac, Device port) {
            emit(stack, fields("type", "fdb", "action", "learn", "bridge", bridge.name(), "mac", MacAddr.format(mac),
                    "dev", port.name()));
        }

        @Override
        public void fdbMoved(Bridge bridge, long mac, Device from, Device to) {
            emit(stack, fields("type", "fdb", "action", "move", "bridge", bridge.name(), "mac", MacAddr.format(mac),
                    "dev", to.name(), "from", from.name()));
        }

        @Override
        public void fdbAged(Bridge bridge, long mac, Device port) {
            emit(stack, fields("type", "fdb", "action", "age", "bridge", bridge.name(), "mac", MacAddr.format(mac),
                    "dev", port == null ? null : port.name()));
        }

        @Override
        public void neighChanged(Neighbour n, NudState from) {
            emit(stack, fields("type", "neigh", "action", "change", "dev", n.dev().name(), "dst",
                    n.address(), "lladdr", n.state().valid() ? MacAddr.format(n.mac()) : null, "state",
                    n.state().name(), "from", from.name()));
        }

        @Override
        public void neighDeleted(Neighbour n) {
            emit(stack, fields("type", "neigh", "action", "del", "dev", n.dev().name(), "dst",
                    n.address(), "state", n.state().name()));
        }

        @Override
        public void routeChanged(Route r, boolean added) {
            emit(stack, fields("type", "route", "action", added ? "add" : "del", "route", r.toString()));
        }
    }

    /** Every subscriber's undelivered count, for tests and the exit report. */
    List<Long> lostCounts() {
        return subs.stream().map(Subscription::lost).toList();
    }
}
