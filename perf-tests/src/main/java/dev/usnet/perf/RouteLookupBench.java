package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.route.Route;
import dev.usnet.core.route.Fib4;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.wire.Ipv4Addr;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Longest-prefix match: {@code Fib4.lookup} over {@code prefixes} distinct random prefixes of length
 * 8..32 (fixed seed). Probe addresses come from a precomputed array walked in order: {@code uniform} draws
 * them uniformly from the address space, {@code covered} picks a random installed prefix and randomises its
 * host bits, so the answer is mostly a long, specific prefix.
 */
@State(Scope.Thread)
public class RouteLookupBench extends UsnetBench {
    /** Probe addresses (a power of two): 64 Ki ints = 256 KiB, so the probe stream itself mostly hits L2. */
    private static final int PROBES = 1 << 16;

    @Param({"1000", "100000"})
    int prefixes;

    @Param({"uniform", "covered"})
    String probe;

    private Fib4 table;
    private final int[] addrs = new int[PROBES];
    private int i;

    @Setup(Level.Trial)
    public void setup() {
        SplittableRandom rnd = new SplittableRandom(0x5eed_0000L + prefixes);
        SinkDevice dev = new SinkDevice("eth0", 0x02_00_00_00_00_01L);
        table = new Fib4();
        List<Route> installed = new ArrayList<>(prefixes);
        while (table.size() < prefixes) {
            int len = 8 + rnd.nextInt(25);
            int prefix = rnd.nextInt() & Ipv4Addr.mask(len);
            int before = table.size();
            Route r = new Route(prefix, len, RouteType.UNICAST, 0x0a00_0001, dev, 0, 0, false);
            table.add(r);
            if (table.size() > before) {
                installed.add(r);
            }
        }
        for (int k = 0; k < PROBES; k++) {
            if (probe.equals("covered")) {
                Route r = installed.get(rnd.nextInt(installed.size()));
                addrs[k] = r.prefix() | (rnd.nextInt() & ~Ipv4Addr.mask(r.prefixLen()));
            } else if (probe.equals("uniform")) {
                addrs[k] = rnd.nextInt();
            } else {
                throw new IllegalArgumentException("probe: uniform | covered, not " + probe);
            }
        }
        // The flat table is built on the first lookup; do it here, then check the fast path against the
        // brute-force reference on a sample of the probes.
        int hits = 0;
        for (int k = 0; k < PROBES; k += 64) {
            Route fast = table.lookup(addrs[k]);
            Route slow = table.lookupSlow(addrs[k]);
            check(fast == slow, "lookup(" + Ipv4Addr.format(addrs[k]) + ") = " + fast + ", brute force says " + slow);
            hits += fast != null ? 1 : 0;
        }
        check(hits > 0, "no probe matched any route");
    }

    @Benchmark
    public Route lookup() {
        return table.lookup(addrs[i++ & (PROBES - 1)]);
    }
}
