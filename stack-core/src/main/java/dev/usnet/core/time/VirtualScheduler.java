package dev.usnet.core.time;

import dev.usnet.core.stats.CpuAccount;
import java.util.ArrayDeque;
import java.util.PriorityQueue;

/**
 * Discrete-event virtual time: time jumps to the next event. Single-threaded and deterministic: events at
 * the same instant run in the order they were scheduled. Driven by {@link #runUntil}, {@link #runFor} or
 * {@link #runUntilIdle} from one thread, which counts as the loop thread for every namespace on it.
 */
public final class VirtualScheduler implements Scheduler {
    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private final ArrayDeque<Event> free = new ArrayDeque<>();
    private long now;
    private long seq;
    private Thread owner;

    public VirtualScheduler() {
        this(0);
    }

    public VirtualScheduler(long startNanos) {
        this.now = startNanos;
    }

    @Override
    public long nanoTime() {
        return now;
    }

    @Override
    public void execute(Runnable task) {
        // Immediate work is internal to the stack and never cancelled, so its event objects are reused.
        Event e = free.pollFirst();
        if (e == null) {
            e = new Event();
        }
        e.init(now, seq++, task, true);
        queue.add(e);
    }

    @Override
    public void executeAfter(Runnable task, long delayNanos) {
        Event e = free.pollFirst();
        if (e == null) {
            e = new Event();
        }
        e.init(now + Math.max(0, delayNanos), seq++, task, true);
        queue.add(e);
    }

    @Override
    public Timeout schedule(Runnable task, long delayNanos) {
        Event e = new Event();
        e.init(now + Math.max(0, delayNanos), seq++, task, false);
        queue.add(e);
        return e;
    }

    @Override
    public Timeout schedule(Runnable task, long delayNanos, CpuAccount account) {
        // The account rides on the event itself: no wrapper per timer.
        Event e = new Event();
        e.init(now + Math.max(0, delayNanos), seq++, task, false);
        e.account = account;
        queue.add(e);
        return e;
    }

    @Override
    public boolean inLoop() {
        return owner == null || owner == Thread.currentThread();
    }

    @Override
    public boolean isVirtual() {
        return true;
    }

    /** Runs every event due at or before {@code deadline}, then sets the clock to it. */
    public void runUntil(long deadline) {
        owner = Thread.currentThread();
        try {
            while (true) {
                Event e = queue.peek();
                if (e == null || e.time > deadline) {
                    break;
                }
                queue.poll();
                now = Math.max(now, e.time);
                Runnable t = e.task;
                CpuAccount account = e.account;
                boolean recyclable = e.recyclable;
                e.task = null;
                e.account = null;
                if (recyclable) {
                    free.addLast(e);
                }
                if (t != null) {
                    if (account == null) {
                        t.run();
                    } else {
                        long t0 = System.nanoTime();
                        try {
                            t.run();
                        } finally {
                            account.addMeasuredTimer(System.nanoTime() - t0);
                        }
                    }
                }
            }
            now = Math.max(now, deadline);
        } finally {
            owner = null;
        }
    }

    public void runFor(long nanos) {
        runUntil(now + nanos);
    }

    /** Runs events until none are left or the clock would pass {@code limitNanos}; returns events left. */
    public int runUntilIdle(long limitNanos) {
        runUntil(limitNanos);
        return queue.size();
    }

    /** Time of the next pending event, or -1. */
    public long nextEventTime() {
        Event e = queue.peek();
        while (e != null && e.task == null) {
            queue.poll();
            e = queue.peek();
        }
        return e == null ? -1 : e.time;
    }

    public int pending() {
        return queue.size();
    }

    private static final class Event implements Comparable<Event>, Timeout {
        long time;
        long order;
        Runnable task;
        CpuAccount account;
        boolean recyclable;

        void init(long time, long order, Runnable task, boolean recyclable) {
            this.time = time;
            this.order = order;
            this.task = task;
            this.recyclable = recyclable;
        }

        @Override
        public int compareTo(Event o) {
            int c = Long.compare(time, o.time);
            return c != 0 ? c : Long.compare(order, o.order);
        }

        @Override
        public void cancel() {
            task = null;
        }

        @Override
        public boolean isPending() {
            return task != null;
        }
    }
}
