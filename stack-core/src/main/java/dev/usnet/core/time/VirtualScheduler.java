package dev.usnet.core.time;

import dev.usnet.core.stats.CpuAccount;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * Discrete-event virtual time: time jumps to the next event. Single-threaded and deterministic: events at
 * the same instant run in the order they were scheduled. Driven by {@link #runUntil}, {@link #runFor} or
 * {@link #runUntilIdle} from one thread, which counts as the loop thread for every namespace on it.
 *
 * <p>A run whose events all fall on one instant never gets the clock past it (a TCP flow over links with neither
 * a rate nor a delay: every segment and its ACK happen at once). After {@link #stallLimit()} units of work (events,
 * and frames handled by receive runs) in a row at one instant, with more always due then, the run ends with
 * {@link ClockStalled} instead of going on for ever.
 */
public final class VirtualScheduler implements Scheduler {
    /**
     * Work at one instant (events plus the frames receive runs handled, {@link #ranFrames}) after which a run is
     * taken to be stalled: several times what a broadcast flooded to 100 000 ports makes (each port a frame and a
     * receive run, a few hundred thousand in all), and a second or two of a TCP flow that cannot move the clock.
     */
    public static final long DEFAULT_STALL_LIMIT = 2_000_000L;
    /** How many of the events after the stall are sampled to say what kept the clock where it is. */
    private static final int STALL_SAMPLE = 100;

    // Events due later than now, by time then order. Events for now (execute) wait in `immediate`, in order:
    // nothing can be due before now, so they run before everything in `queue` but what is also due now and was
    // scheduled earlier, which the order numbers settle.
    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private final ArrayDeque<Event> immediate = new ArrayDeque<>();
    private final ArrayDeque<Event> free = new ArrayDeque<>();
    private long now;
    private long seq;
    private Thread owner;
    private long stallLimit = DEFAULT_STALL_LIMIT;
    // Events run since the clock last moved.
    private long sameInstant;
    // Modelled machines by name (usnet.cpu.machine), made on first use; their order of creation is the run's.
    private final Map<String, CpuMachine> machines = new HashMap<>();

    public VirtualScheduler() {
        this(0);
    }

    public VirtualScheduler(long startNanos) {
        this.now = startNanos;
    }

    /**
     * The clock could not advance: {@link #work()} units of work (events and frames) in a row ran at
     * {@link #atNanos()}; {@link #busiest()} says which tasks they were (a sample, most frequent first, as their
     * {@code toString}).
     */
    public static final class ClockStalled extends IllegalStateException {
        private final long atNanos;
        private final long events;
        private final Map<String, Integer> busiest;

        ClockStalled(long atNanos, long events, Map<String, Integer> busiest) {
            super(String.format(java.util.Locale.ROOT, "virtual time stalled at %.6f s: %d events and frames in a row at"
                    + " that instant and the clock never moved (busiest: %s)", atNanos / 1e9, events, describe(busiest)));
            this.atNanos = atNanos;
            this.events = events;
            this.busiest = busiest;
        }

        private static String describe(Map<String, Integer> busiest) {
            StringBuilder b = new StringBuilder();
            busiest.forEach((k, v) -> b.append(b.isEmpty() ? "" : ", ").append(k).append(" ×").append(v));
            return b.toString();
        }

        public long atNanos() {
            return atNanos;
        }

        public long work() {
            return events;
        }

        /** The tasks seen most often in a sample after the stall, most frequent first. */
        public Map<String, Integer> busiest() {
            return busiest;
        }
    }

    /** Work in a row at one instant (events and frames) after which a run throws {@link ClockStalled}. */
    public long stallLimit() {
        return stallLimit;
    }

    /** Sets {@link #stallLimit()}; at least 1. */
    public void setStallLimit(long events) {
        if (events < 1) {
            throw new IllegalArgumentException("stall limit must be at least 1 event, got " + events);
        }
        this.stallLimit = events;
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
        immediate.addLast(e);
    }

    @Override
    public CpuMachine cpuMachine(String name) {
        return machines.computeIfAbsent(name, n -> new CpuMachine(n, this));
    }

    @Override
    public void executeAfter(Runnable task, long delayNanos) {
        Event e = free.pollFirst();
        if (e == null) {
            e = new Event();
        }
        e.init(now + Math.max(0, delayNanos), seq++, task, true);
        add(e);
    }

    @Override
    public Timeout schedule(Runnable task, long delayNanos) {
        Event e = new Event();
        e.init(now + Math.max(0, delayNanos), seq++, task, false);
        add(e);
        return e;
    }

    @Override
    public Timeout schedule(Runnable task, long delayNanos, CpuAccount account) {
        // The account rides on the event itself: no wrapper per timer.
        Event e = new Event();
        e.init(now + Math.max(0, delayNanos), seq++, task, false);
        e.account = account;
        add(e);
        return e;
    }

    private void add(Event e) {
        if (e.time == now) {
            // Due now: behind everything already due, like execute.
            immediate.addLast(e);
        } else {
            queue.add(e);
        }
    }

    @Override
    public void ranFrames(int frames) {
        sameInstant += frames;
    }

    @Override
    public boolean inLoop() {
        return owner == null || owner == Thread.currentThread();
    }

    @Override
    public boolean isVirtual() {
        return true;
    }

    /** The next event to run (not removed), or null. */
    private Event peek() {
        Event i = immediate.peekFirst();
        Event q = queue.peek();
        if (i == null) {
            return q;
        }
        return q != null && q.compareTo(i) < 0 ? q : i;
    }

    private void remove(Event e) {
        if (e == immediate.peekFirst()) {
            immediate.pollFirst();
        } else {
            queue.poll();
        }
    }

    /** Runs every event due at or before {@code deadline}, then sets the clock to it. */
    public void runUntil(long deadline) {
        owner = Thread.currentThread();
        try {
            while (true) {
                Event e = peek();
                if (e == null || e.time > deadline) {
                    // Whatever was due now has run: this instant's work ended.
                    sameInstant = 0;
                    break;
                }
                remove(e);
                if (e.time > now) {
                    now = e.time;
                    sameInstant = 0;
                }
                Runnable t = e.task;
                CpuAccount account = e.account;
                boolean recyclable = e.recyclable;
                e.task = null;
                e.account = null;
                if (recyclable) {
                    free.addLast(e);
                }
                if (t != null) {
                    if (++sameInstant > stallLimit) {
                        throw stalled(t);
                    }
                    run(t, account);
                }
            }
            now = Math.max(now, deadline);
        } finally {
            owner = null;
        }
    }

    private static void run(Runnable t, CpuAccount account) {
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

    /**
     * The run is stuck at one instant: runs a sample of what comes next (it would have run anyway) to name the
     * busiest tasks, and builds the exception. Nothing is left half done: each task sampled ran to its end.
     */
    private ClockStalled stalled(Runnable first) {
        Map<String, Integer> counts = new HashMap<>();
        counts.merge(describe(first), 1, Integer::sum);
        run(first, null);
        for (int k = 1; k < STALL_SAMPLE; k++) {
            Event e = peek();
            if (e == null || e.time != now) {
                break;
            }
            remove(e);
            Runnable t = e.task;
            CpuAccount account = e.account;
            e.task = null;
            e.account = null;
            if (e.recyclable) {
                free.addLast(e);
            }
            if (t != null) {
                counts.merge(describe(t), 1, Integer::sum);
                run(t, account);
            }
        }
        Map<String, Integer> top = new java.util.LinkedHashMap<>();
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Integer>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
                .limit(5).forEach(x -> top.put(x.getKey(), x.getValue()));
        long events = sameInstant;
        sameInstant = 0;
        return new ClockStalled(now, events, top);
    }

    /** What a task is: its own {@code toString} if it has one, else its class (a lambda's: where it was written). */
    private static String describe(Runnable t) {
        try {
            if (t.getClass().getMethod("toString").getDeclaringClass() != Object.class) {
                return t.toString();
            }
        } catch (NoSuchMethodException e) {
            // every object has one
        }
        String c = t.getClass().getName();
        int lambda = c.indexOf("$$Lambda");
        return lambda >= 0 ? c.substring(0, lambda) + " (lambda)" : c;
    }

    public void runFor(long nanos) {
        runUntil(now + nanos);
    }

    /** Runs events until none are left or the clock would pass {@code limitNanos}; returns events left. */
    public int runUntilIdle(long limitNanos) {
        runUntil(limitNanos);
        return pending();
    }

    /** Time of the next pending event, or -1. */
    public long nextEventTime() {
        while (true) {
            Event e = peek();
            if (e == null) {
                return -1;
            }
            if (e.task != null) {
                return e.time;
            }
            remove(e);
            if (e.recyclable) {
                free.addLast(e);
            }
        }
    }

    public int pending() {
        return queue.size() + immediate.size();
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
