package dev.usnet.tools.experiment.pidns;

import dev.usnet.ns.pid.PidAllocException;
import dev.usnet.ns.pid.PidAllocator;
import dev.usnet.ns.pid.PidModel;
import dev.usnet.ns.pid.PidNamespace;
import dev.usnet.ns.pid.PidNsChain;
import dev.usnet.ns.pid.Task;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * usnet's pid-namespace models measured in process, the operations of {@code PidNamespaceBench} (perf-tests) with a
 * plain timing loop so that {@code usnet experiment pidns} can run them: per model and depth, a process {@code depth}
 * levels deep with {@code tasks} live children; spawn+exit (fork a child, it exits, reap it: alloc_pid and free_pid over
 * every level the model numbers), lookup (find a child by its number in the asker's namespace, read its pid there and
 * in the initial namespace) and ps (walk every process of the container's namespace with its number there). Each round
 * runs a batch of each operation for every model and depth in turn, so that drift on a busy machine hits them alike,
 * and times it in slices short against a scheduler time slice (500 spawns, 5000 lookups, one walk): the figure is the
 * median over all slices of all rounds, so the slices a preempted thread stretched are outliers, not part of it.
 */
public final class UsnetPidCosts {
    /** One model at one depth: median ns per operation over the timed slices. */
    public record Row(PidModel model, int depth, double spawnExitNs, double lookupNs, double psNs) {}

    /** Depths (1..32), rounds, and batch sizes per round: spawns, lookups, ps walks; live processes in each namespace. */
    public record Params(List<Integer> depths, int rounds, int spawns, int lookups, int walks, int tasks) {
        public Params {
            depths = List.copyOf(depths);
            if (depths.isEmpty() || depths.stream().anyMatch(d -> d < 1 || d > PidNamespace.MAX_PID_NS_LEVEL)) {
                throw new IllegalArgumentException("depths must be 1.." + PidNamespace.MAX_PID_NS_LEVEL + ", got " + depths);
            }
            if (rounds < 1 || spawns < 1 || lookups < 1 || walks < 1 || tasks < 1 || tasks > 20_000) {
                throw new IllegalArgumentException("rounds and batch sizes must be at least 1, tasks 1..20000");
            }
        }

        /** What the command runs by default: depths 1-4, 15 rounds of 20 000 spawns, 100 000 lookups, 100 walks. */
        public static Params defaults() {
            return new Params(List.of(1, 2, 3, 4), 15, 20_000, 100_000, 100, 1000);
        }
    }

    /** One model at one depth, ready to be timed. */
    private static final class Subject {
        final PidModel model;
        final int depth;
        final PidAllocator pids;
        final PidNamespace initNs;
        final PidNamespace inner;
        final Task spawner;
        final int[] vpids;
        final double[] spawn;
        final double[] lookup;
        final double[] ps;
        int next;
        long sink;
        private int nSpawn;
        private int nLookup;
        private int nPs;

        Subject(PidModel model, int depth, Params p) throws PidAllocException {
            this.model = model;
            this.depth = depth;
            this.pids = new PidAllocator(PidNamespace.PID_MAX_DEFAULT);
            this.initNs = pids.initNs();
            PidNsChain chain = PidNsChain.create(pids, "ctr", model, depth, PidNamespace.PID_MAX_DEFAULT);
            this.inner = chain.innermost();
            this.spawner = chain.spawn("spawner");
            this.vpids = new int[p.tasks()];
            for (int k = 0; k < p.tasks(); k++) {
                vpids[k] = spawner.fork("t" + k).getpid();
            }
            for (int v : vpids) {
                Task t = spawner.findByVpid(v);
                if (t == null || t.getpid() != v || pids.findTask(initNs, t.pid().globalNr()) != t) {
                    throw new IllegalStateException(model.knobValue() + " depth " + depth + ": lookup of " + v + " gave " + t);
                }
            }
            spawn = new double[p.rounds() * slices(p.spawns(), SPAWN_SLICE)];
            lookup = new double[p.rounds() * slices(p.lookups(), LOOKUP_SLICE)];
            ps = new double[p.rounds() * p.walks()];
        }

        /** One batch of each operation, timed slice by slice; {@code keep} false for warm-up. */
        void round(boolean keep, Params p) throws PidAllocException {
            for (int done = 0; done < p.spawns(); done += SPAWN_SLICE) {
                int n = Math.min(SPAWN_SLICE, p.spawns() - done);
                long t0 = System.nanoTime();
                for (int k = 0; k < n; k++) {
                    Task c = spawner.fork("child");
                    c.exit(0);
                    spawner.reap(c);
                }
                long t1 = System.nanoTime();
                if (keep) {
                    spawn[nSpawn++] = (double) (t1 - t0) / n;
                }
            }
            for (int done = 0; done < p.lookups(); done += LOOKUP_SLICE) {
                int n = Math.min(LOOKUP_SLICE, p.lookups() - done);
                long t0 = System.nanoTime();
                for (int k = 0; k < n; k++) {
                    Task t = spawner.findByVpid(vpids[next]);
                    next = next + 1 == vpids.length ? 0 : next + 1;
                    sink += t.getpid() + t.pidIn(initNs);
                }
                long t1 = System.nanoTime();
                if (keep) {
                    lookup[nLookup++] = (double) (t1 - t0) / n;
                }
            }
            for (int k = 0; k < p.walks(); k++) {
                long t0 = System.nanoTime();
                pids.forEachVisible(inner, (t, nr) -> sink += nr);
                long t1 = System.nanoTime();
                if (keep) {
                    ps[nPs++] = t1 - t0;
                }
            }
        }
    }

    /** Spawns and lookups timed together: short enough that most slices run without being preempted. */
    static final int SPAWN_SLICE = 500;
    static final int LOOKUP_SLICE = 5000;

    private static int slices(int ops, int slice) {
        return (ops + slice - 1) / slice;
    }

    private UsnetPidCosts() {}

    /** Every model at every depth ({@code none} once, at depth 1: it has no pid namespace to nest). */
    public static List<Row> run(Params p, Consumer<String> progress) {
        List<Subject> subjects = new ArrayList<>();
        try {
            subjects.add(new Subject(PidModel.NONE, 1, p));
            for (PidModel m : new PidModel[] {PidModel.FLAT, PidModel.MULTILEVEL}) {
                for (int d : p.depths()) {
                    subjects.add(new Subject(m, d, p));
                }
            }
            progress.accept("usnet: " + subjects.size() + " model/depth combinations, " + p.tasks() + " live processes each; "
                    + p.rounds() + " rounds of " + p.spawns() + " spawns, " + p.lookups() + " lookups, " + p.walks() + " ps walks");
            int warm = Math.max(2, p.rounds() / 3);
            for (int r = -warm; r < p.rounds(); r++) {
                for (int j = 0; j < subjects.size(); j++) {
                    // Rotate the order each round: no combination always runs first after the others.
                    subjects.get(Math.floorMod(j + r, subjects.size())).round(r >= 0, p);
                }
            }
        } catch (PidAllocException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
        List<Row> rows = new ArrayList<>();
        for (Subject s : subjects) {
            rows.add(new Row(s.model, s.depth, median(s.spawn), median(s.lookup), median(s.ps)));
        }
        return rows;
    }

    static double median(double[] xs) {
        double[] a = xs.clone();
        Arrays.sort(a);
        int n = a.length;
        return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
    }
}
