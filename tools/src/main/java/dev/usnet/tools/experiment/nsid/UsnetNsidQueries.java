package dev.usnet.tools.experiment.nsid;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.ns.AddrInfo;
import dev.usnet.ns.LinkInfo;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tap.BusyPollSelectStrategy;
import dev.usnet.tcp.app.Percentiles;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * usnet's side of the nsid question, in real time: N containers ({@code c<i>} with eth0, a veth whose peer
 * {@code h<i>} is in namespace {@code host}, an address from 198.18.0.0/15, lo with 127.0.0.1/8), spread over the
 * event loops as {@code usnet run} spreads namespaces, and {@code host} as the manager asking for each container's
 * addresses or links. By nsid, {@link NamespaceRegistry#addressesByNsid} answers on the asking thread without entering;
 * entering runs the same dump as a task on the container's own event loop and waits for it, the JVM's setns. The
 * JMH benchmark {@code NsidQueryBench} (perf-tests) and {@code usnet experiment nsid} both use this.
 */
public final class UsnetNsidQueries implements AutoCloseable {
    /** What is dumped. */
    public enum Dump {
        ADDRESSES("addresses"),
        LINKS("links");

        private final String label;

        Dump(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** How the manager asks. */
    public enum Mode {
        BY_NSID("by nsid"),
        ENTERING("entering (task on its loop)");

        private final String label;

        Mode(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** One dump and mode at one namespace count: the latency of a query (each timed on its own). */
    public record Row(int namespaces, Dump dump, Mode mode, Percentiles latency) {}

    /** Namespace counts, queries per dump, mode and count, event loops. */
    public record Params(List<Integer> counts, int iterations, int loops) {
        public Params {
            counts = List.copyOf(counts);
            if (counts.isEmpty() || counts.stream().anyMatch(n -> n < 1 || n > 1_000_000)) {
                throw new IllegalArgumentException("namespace counts must be 1..1000000, got " + counts);
            }
            if (iterations < 1) {
                throw new IllegalArgumentException("iterations must be at least 1, got " + iterations);
            }
            if (loops < 1) {
                throw new IllegalArgumentException("loops must be at least 1, got " + loops);
            }
        }
    }

    static final int BLOCK = 500;

    private final MultiThreadIoEventLoopGroup group;
    private final NamespaceRegistry registry;
    private final NetNamespace host;
    private final NetNamespace[] targets;
    private final int[] nsids;

    private UsnetNsidQueries(MultiThreadIoEventLoopGroup group, NamespaceRegistry registry, NetNamespace host,
                             NetNamespace[] targets, int[] nsids) {
        this.group = group;
        this.registry = registry;
        this.host = host;
        this.targets = targets;
        this.nsids = nsids;
    }

    /** Builds {@code host} and {@code n} containers on {@code loops} event loops (epoll as usnet run uses, when here). */
    public static UsnetNsidQueries build(int n, int loops) {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(loops, io.netty.channel.epoll.Epoll.isAvailable()
                ? io.netty.channel.epoll.EpollIoHandler.newFactory(0,
                        BusyPollSelectStrategy.factory(BusyPollSelectStrategy.DEFAULT_MICROS))
                : LocalIoHandler.newFactory());
        NamespaceRegistry reg = new NamespaceRegistry(name -> new RealTimeScheduler(group.next()), 1);
        try {
            NetNamespace host = reg.create("host");
            NetNamespace[] targets = new NetNamespace[n];
            int[] nsids = new int[n];
            int net = (198 << 24) | (18 << 16);
            for (int i = 0; i < n; i++) {
                NetNamespace c = reg.create("c" + i);
                VethEnd[] pair = reg.createVeth(c, "eth0", host, "h" + i);
                c.stack().devinet().add(pair[0], net + 256 + i, 15);
                pair[0].setUp(true);
                pair[1].setUp(true);
                targets[i] = c;
                nsids[i] = host.nsidOf(c);
            }
            return new UsnetNsidQueries(group, reg, host, targets, nsids);
        } catch (RuntimeException e) {
            reg.close();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    public int size() {
        return targets.length;
    }

    /** Container {@code i}'s dump as {@code host} asks for it in {@code mode}: a list of AddrInfo or LinkInfo. */
    public List<?> query(Dump dump, Mode mode, int i) {
        NetNamespace t = targets[i];
        return switch (mode) {
            case BY_NSID -> dump == Dump.ADDRESSES ? registry.addressesByNsid(host, nsids[i]) : registry.linksByNsid(host, nsids[i]);
            case ENTERING -> {
                RealTimeScheduler s = (RealTimeScheduler) t.stack().scheduler();
                try {
                    yield s.executor().submit(() -> dump == Dump.ADDRESSES ? NamespaceRegistry.addresses(t) : registry.links(t, t))
                            .get(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while namespace " + t.name() + " ran the dump", e);
                } catch (ExecutionException | TimeoutException e) {
                    throw new IllegalStateException("namespace " + t.name() + " did not run the dump: " + e, e);
                }
            }
        };
    }

    /** The answer is container i's: lo and eth0, 127.0.0.1/8 and its 198.18 address; throws otherwise. */
    public void check(Dump dump, int i, List<?> answer) {
        if (dump == Dump.ADDRESSES) {
            List<String> got = answer.stream().map(a -> ((AddrInfo) a).dev() + " " + ((AddrInfo) a).cidr()).sorted().toList();
            int a = (198 << 24 | 18 << 16) + 256 + i;
            String mine = "eth0 " + (a >>> 24) + "." + (a >>> 16 & 255) + "." + (a >>> 8 & 255) + "." + (a & 255) + "/15";
            if (!got.equals(List.of(mine, "lo 127.0.0.1/8"))) {
                throw new IllegalStateException("addresses of c" + i + ": " + got + ", expected [" + mine + ", lo 127.0.0.1/8]");
            }
        } else {
            List<String> got = answer.stream().map(l -> ((LinkInfo) l).name()).sorted().toList();
            if (!got.equals(List.of("eth0", "lo"))) {
                throw new IllegalStateException("links of c" + i + ": " + got + ", expected [eth0, lo]");
            }
        }
    }

    /** Deletes every namespace and stops the event loops. */
    @Override
    public void close() {
        registry.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Runs every count in turn, timing each query; {@code progress} hears a line per count. */
    public static List<Row> run(Params p, Consumer<String> progress) {
        List<Row> rows = new ArrayList<>();
        for (int n : p.counts()) {
            long t0 = System.nanoTime();
            try (UsnetNsidQueries q = build(n, p.loops())) {
                progress.accept(String.format(java.util.Locale.ROOT, "usnet: %d namespace%s and host built in %.2f s on %d event"
                        + " loops; %d queries per dump and way", n, n == 1 ? "" : "s", (System.nanoTime() - t0) / 1e9, p.loops(),
                        p.iterations()));
                rows.addAll(q.measure(p.iterations()));
            }
        }
        return rows;
    }

    private List<Row> measure(int iterations) {
        int n = targets.length;
        Dump[] dumps = Dump.values();
        Mode[] modes = Mode.values();
        Histogram[][] h = new Histogram[dumps.length][modes.length];
        int warm = Math.max(1, Math.min(20_000, iterations / 10));
        for (Dump d : dumps) {
            for (Mode m : modes) {
                for (int k = 0; k < warm; k++) {
                    check(d, k % n, query(d, m, k % n));
                }
                h[d.ordinal()][m.ordinal()] = new Histogram(3_600_000_000L, 3);
            }
        }
        int combos = dumps.length * modes.length;
        int done = 0;
        int turn = 0;
        while (done < iterations) {
            int count = Math.min(BLOCK, iterations - done);
            for (int j = 0; j < combos; j++) {
                int c = (turn + j) % combos;
                Dump d = dumps[c / modes.length];
                Mode m = modes[c % modes.length];
                Histogram into = h[d.ordinal()][m.ordinal()];
                for (int k = 0; k < count; k++) {
                    int i = (done + k) % n;
                    long t = System.nanoTime();
                    List<?> a = query(d, m, i);
                    into.recordValue(System.nanoTime() - t);
                    if (a.size() != 2) {
                        throw new IllegalStateException(d.label() + " " + m.label() + " of c" + i + " gave " + a);
                    }
                }
            }
            done += count;
            turn++;
        }
        List<Row> rows = new ArrayList<>();
        for (Dump d : dumps) {
            for (Mode m : modes) {
                rows.add(new Row(n, d, m, Percentiles.of(h[d.ordinal()][m.ordinal()])));
            }
        }
        return rows;
    }
}
