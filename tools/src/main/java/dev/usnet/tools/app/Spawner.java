package dev.usnet.tools.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Timeout;
import dev.usnet.ns.pid.PidAllocException;
import dev.usnet.ns.pid.Task;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.List;

/**
 * {@code kind: spawn}: a process that forks short-lived children at a steady rate, lets each live its lifetime,
 * then reaps it (exit, wait): the churn of a process-spawning workload, each child taking a pid at every level of
 * its namespace's pid namespaces and giving it back. Forks the pid space refuses (EAGAIN, ENOMEM) are counted.
 */
public final class Spawner extends App {
    private record Child(Task task, long exitAt) {}

    private final int rate;
    private final long lifetimeNanos;
    private final long count;
    private final java.util.ArrayDeque<Child> alive = new java.util.ArrayDeque<>();
    private final java.util.Map<String, Long> forkErrors = new java.util.TreeMap<>();
    private volatile long spawned;
    private volatile long reaped;
    /** The last child forked: its pids stay readable after it was reaped. */
    private volatile Task lastChild;
    /** Wall-clock time spent in fork, exit and wait, for measured.spawn_ns. */
    private volatile long wallNanos;
    private long attempts;
    private long startNanos;
    private Timeout timer;

    public Spawner(String ns, NetStack stack, TopologySpec.Spawn s) {
        super(ns, stack);
        this.rate = s.rate();
        this.lifetimeNanos = s.lifetimeNanos();
        this.count = s.count();
    }

    @Override
    public String kind() {
        return "spawn";
    }

    /** Children forked. */
    public long spawned() {
        return spawned;
    }

    /** Children that exited and were reaped. */
    public long reaped() {
        return reaped;
    }

    /** Forks refused, by errno. */
    public synchronized java.util.Map<String, Long> forkErrors() {
        return new java.util.TreeMap<>(forkErrors);
    }

    /** The pids the last child forked had at each level (empty before the first). */
    public List<dev.usnet.ns.pid.Upid> lastChildPids() {
        Task c = lastChild;
        return c == null ? List.of() : c.pids();
    }

    /** Its {@link #nanosPerChild()}, as {@code spawn_ns}. */
    @Override
    public java.util.Map<String, Long> measuredNanos() {
        return java.util.Map.of("spawn_ns", nanosPerChild());
    }

    /** Mean wall-clock nanoseconds of fork + exit + wait per child (0 before the first). */
    public long nanosPerChild() {
        long n = spawned;
        return n == 0 ? 0 : wallNanos / n;
    }

    @Override
    public void start() {
        running = true;
        startNanos = stack.now();
        tick();
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private void tick() {
        if (!running) {
            return;
        }
        Task parent = process();
        long now = stack.now();
        long t0 = System.nanoTime();
        while (!alive.isEmpty() && alive.peekFirst().exitAt() <= now) {
            reap(parent, alive.pollFirst().task());
        }
        long due = (now - startNanos) * rate / 1_000_000_000L + 1;
        if (count > 0) {
            due = Math.min(due, count);
        }
        while (attempts < due && parent != null) {
            attempts++;
            try {
                Task c = parent.fork("spawn-child");
                spawned++;
                lastChild = c;
                if (lifetimeNanos == 0) {
                    reap(parent, c);
                } else {
                    alive.addLast(new Child(c, now + lifetimeNanos));
                }
            } catch (dev.usnet.ns.pid.PidAllocException e) {
                synchronized (this) {
                    forkErrors.merge(e.errno(), 1L, Long::sum);
                }
            }
        }
        wallNanos += System.nanoTime() - t0;
        boolean more = count == 0 || attempts < count;
        if (!more && alive.isEmpty()) {
            return;
        }
        long period = rate >= 1000 ? 1_000_000L : 1_000_000_000L / rate;
        long next = more ? period : Long.MAX_VALUE;
        if (!alive.isEmpty()) {
            next = Math.min(next, Math.max(1, alive.peekFirst().exitAt() - now));
        }
        timer = stack.scheduler().schedule(this::tick, next);
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private void reap(Task parent, Task c) {
        c.exit(0);
        parent.reap(c);
        reaped++;
    }

    /** Ends the children still alive (each exits and is reaped), then stops. */
    @Override
    public void stop() {
        running = false;
        if (timer != null) {
            timer.cancel();
        }
        Task parent = process();
        while (!alive.isEmpty()) {
            reap(parent, alive.pollFirst().task());
        }
    }

    @Override
    public String summary() {
        java.util.Map<String, Long> errs = forkErrors();
        long failed = errs.values().stream().mapToLong(Long::longValue).sum();
        return ns + ": spawn " + rate + "/s: " + spawned + " spawned, " + reaped + " reaped"
                + (failed == 0 ? "" : ", " + failed + " forks refused " + errs)
                + (process() == null ? "" : "; pids " + pidsText(process().pids()))
                + (lastChild == null ? "" : ", last child " + pidsText(lastChildPids()));
    }

    /** Failed when no child could be forked at all. */
    @Override
    public Outcome outcome() {
        if (spawned > 0) {
            return Outcome.OK;
        }
        java.util.Map<String, Long> errs = forkErrors();
        return Outcome.failed(errs.isEmpty() ? "spawned no process" : "no fork succeeded: " + errs);
    }

    /** Children forked. */
    @Override
    public AppCounters counters() {
        return AppCounters.of(0, spawned);
    }

    @Override
    public void putResultFields(java.util.Map<String, Object> m) {
        m.put("reaped", reaped());
        m.put("fork_errors", forkErrors());
        m.put("last_child_pids", ResultValues.pids(lastChildPids()));
    }

    @Override
    public String label() {
        return ns + ": spawn " + rate + "/s";
    }

    /** {@code 1234@init 5@ctr/1}: a process's numbers from the initial pid namespace down. */
    public static String pidsText(List<dev.usnet.ns.pid.Upid> pids) {
        return String.join(" ", pids.stream().map(u -> u.nr() + "@" + u.ns().name()).toList());
    }
}
