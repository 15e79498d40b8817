package dev.usnet.perf;

import dev.usnet.ns.pid.PidAllocException;
import dev.usnet.ns.pid.PidAllocator;
import dev.usnet.ns.pid.PidModel;
import dev.usnet.ns.pid.PidNamespace;
import dev.usnet.ns.pid.PidNsChain;
import dev.usnet.ns.pid.Task;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The pid-namespace models at nesting depth 1..4 (none ignores the depth: its processes live in the initial
 * namespace): {@code spawnExit} forks a child of a process {@code depth} levels deep, lets it exit and reaps it
 * (alloc_pid over every level the model numbers, then free_pid); {@code lookup} finds one of {@code tasks} live
 * processes by its number in the asker's own namespace and reads its pid there and in the initial namespace
 * (find_task_by_vpid, task_pid_vnr, pid_nr); {@code ps} walks every process numbered in the container's namespace with
 * its number there, as ps in a container reads /proc.
 */
@State(Scope.Thread)
public class PidNamespaceBench extends UsnetBench {
    @Param({"none", "flat", "multilevel"})
    String model;

    @Param({"1", "2", "3", "4"})
    int depth;

    @Param({"1000"})
    int tasks;

    private PidAllocator pids;
    private PidNamespace initNs;
    private PidNamespace inner;
    private Task spawner;
    private int[] vpids;
    private int i;

    @Setup(Level.Trial)
    public void setup() throws PidAllocException {
        pids = new PidAllocator(PidNamespace.PID_MAX_DEFAULT);
        initNs = pids.initNs();
        PidNsChain chain = PidNsChain.create(pids, "ctr", PidModel.parse(model), depth, PidNamespace.PID_MAX_DEFAULT);
        inner = chain.innermost();
        spawner = chain.spawn("spawner");
        vpids = new int[Integer.highestOneBit(tasks)];
        for (int k = 0; k < tasks; k++) {
            Task t = spawner.fork("t" + k);
            if (k < vpids.length) {
                vpids[k] = t.getpid();
            }
        }
        // What a broken model could not pass: each live process found by its own number, the same process.
        for (int v : vpids) {
            Task t = spawner.findByVpid(v);
            BridgeForwardBench.check(t != null && t.getpid() == v && pids.findTask(initNs, t.pid().globalNr()) == t,
                    "lookup of vpid " + v + " in " + inner + " gave " + t);
        }
        int visible = pids.forEachVisible(inner, (t, nr) -> { });
        BridgeForwardBench.check(visible >= tasks + 1, "ps in " + inner + " lists " + visible + " processes");
    }

    @Benchmark
    public Task spawnExit() throws PidAllocException {
        Task c = spawner.fork("child");
        c.exit(0);
        spawner.reap(c);
        return c;
    }

    @Benchmark
    public int lookup() {
        Task t = spawner.findByVpid(vpids[i++ & (vpids.length - 1)]);
        return t.getpid() + t.pidIn(initNs);
    }

    @Benchmark
    public long ps() {
        long[] sum = new long[1];
        pids.forEachVisible(inner, (t, nr) -> sum[0] += nr);
        return sum[0];
    }
}
