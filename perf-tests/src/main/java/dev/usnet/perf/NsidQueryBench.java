package dev.usnet.perf;

import dev.usnet.tools.experiment.nsid.UsnetNsidQueries;
import dev.usnet.tools.experiment.nsid.UsnetNsidQueries.Dump;
import dev.usnet.tools.experiment.nsid.UsnetNsidQueries.Mode;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Another namespace's addresses or links as namespace {@code host} asks for them, with {@code namespaces} containers
 * on two real-time event loops ({@link UsnetNsidQueries}): {@code byNsid} is {@code NamespaceRegistry}'s dump by nsid
 * on the asking thread, without entering; {@code entering} runs the same dump as a task on the container's own event
 * loop and waits for it (the JVM's setns). Targets go round robin. Setup checks both answers of every container it can
 * in a second.
 */
@State(Scope.Thread)
public class NsidQueryBench extends UsnetBench {
    @Param({"1", "100", "10000"})
    int namespaces;

    @Param({"addresses", "links"})
    String dump;

    private UsnetNsidQueries q;
    private Dump d;
    private int i;

    @Setup(Level.Trial)
    public void setup() {
        d = switch (dump) {
            case "addresses" -> Dump.ADDRESSES;
            case "links" -> Dump.LINKS;
            default -> throw new IllegalArgumentException("dump: addresses | links, not " + dump);
        };
        q = UsnetNsidQueries.build(namespaces, 2);
        long end = System.nanoTime() + 1_000_000_000L;
        for (int k = 0; k < namespaces && System.nanoTime() < end; k++) {
            for (Mode m : Mode.values()) {
                q.check(d, k, q.query(d, m, k));
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        q.close();
    }

    private int next() {
        int k = i;
        i = k + 1 == namespaces ? 0 : k + 1;
        return k;
    }

    @Benchmark
    public List<?> byNsid() {
        return q.query(d, Mode.BY_NSID, next());
    }

    @Benchmark
    public List<?> entering() {
        return q.query(d, Mode.ENTERING, next());
    }
}
