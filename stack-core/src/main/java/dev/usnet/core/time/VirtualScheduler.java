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
 * <p>A run whose events all fall on one instant for ever never gets the clock past it (a TCP flow over links with
 * neither a rate nor a delay: every segment and its ACK happen at once; a broadcast circling a loop of bridges). Much
 * work at one instant is no proof of that: 5 000 hosts on one bridge that each send an ARP broadcast at the start make
 * 25 million frames there, all legitimate, and then the instant ends. So the watchdog looks closer instead of giving
 * up: after {@link #stallLimit()} units of work (events, and frames handled by receive runs) in a row at one instant
 * it counts the work of each task from then on (a namespace's receive backlog, a timer of one kind), and only when
 * one task alone has done {@link #taskLimit()} units there, which no finite burst in a topology of a sane size
 * makes one task do but any endless one at last does (its tasks are finitely many and one of them must keep
 * running), the run ends with {@link ClockStalled} naming the busiest tasks.
 */
public final class VirtualScheduler implements Scheduler {
    /**
     * Work at one instant (events plus the frames receive runs handled, {@link #ranFrames}) after which the
     * watchdog counts work per task: a burst smaller than that costs nothing to watch.
     */
    public static final long DEFAULT_STALL_LIMIT = 2_000_000L;
    /**
     * Work of one task at one instant, counted once the instant passed the stall limit, that makes it a livelock:
     * a receive backlog handling half a million frames at once. Hosts on one bridge that each ARP for a server and
     * ping it give the busiest backlog (the bridge's) four frames per host, so that takes over 100 000 hosts, more
     * than a topology file can declare; a TCP flow that cannot move the clock gets there in seconds.
     */
    public static final long DEFAULT_TASK_LIMIT = 500_000L;
    /** How many of the busiest tasks a stall names. */
    private static final int BUSIEST = 5;

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
    private long taskLimit = DEFAULT_TASK_LIMIT;
    // Events run (not cancelled) since the scheduler was made.
    private long eventsRun;
    // Events run since the clock last moved.
    private long sameInstant;
    // Past the stall limit at this instant: work per task (keyed by the task if it names itself, else by its
    // class), else null. The counter of the task running, which its receive run's frames go to, or null.
    private java.util.IdentityHashMap<Object, long[]> watched;
    private long[] running;
    // Told when an instant passes the stall limit, before the watchdog counts per task (null: nobody).
    private Runnable onLongInstant;
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
     * {@link #atNanos()}, and one task did {@link #taskLimit()} of those counted after the stall limit;
     * {@link #busiest()} says which tasks did most of them (as their {@code toString}, or their class).
     */
    public static final class ClockStalled extends IllegalStateException {
        private final long atNanos;
        private final long events;
        private final Map<String, Long> busiest;

        ClockStalled(long atNanos, long events, long stallLimit, long taskLimit, Map<String, Long> busiest, int tasks) {
            super(String.format(java.util.Locale.ROOT, "virtual time stalled at %.6f s: %d events and frames in a row at"
                    + " that instant and the clock never moved; of the work after the first %d, one task did %d, more"
                    + " than a burst that ends gives one task, so this instant never ends (busiest of %d tasks: %s)",
                    atNanos / 1e9, events, stallLimit, taskLimit, tasks, describe(busiest)));
            this.atNanos = atNanos;
            this.events = events;
            this.busiest = busiest;
        }

        private static String describe(Map<String, Long> busiest) {
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

        /** The tasks that did most work at the instant once it was watched, most first, with their work. */
        public Map<String, Long> busiest() {
            return busiest;
        }
    }

    /** Work in a row at one instant (events and frames) after which the watchdog counts work per task. */
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

    /** Work of one task at one instant, counted after {@link #stallLimit()}, that ends the run with {@link ClockStalled}. */
    public long taskLimit() {
        return taskLimit;
    }

    /** Sets {@link #taskLimit()}; at least 1. */
    public void setTaskLimit(long work) {
        if (work < 1) {
            throw new IllegalArgumentException("task limit must be at least 1 unit of work, got " + work);
        }
        this.taskLimit = work;
    }

    /**
     * Runs {@code hook} (null: nothing) whenever an instant passes {@link #stallLimit()}, once per instant, before
     * any more work runs there: a caller that wants to say what the work was can take its counters then.
     */
    public void onLongInstant(Runnable hook) {
        this.onLongInstant = hook;
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
        if (running != null) {
            running[0] += frames;
        }
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
                    instantEnded();
                    break;
                }
                remove(e);
                if (e.time > now) {
                    now = e.time;
                    instantEnded();
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
                    eventsRun++;
                    if (++sameInstant <= stallLimit) {
                        run(t, account);
                    } else {
                        runWatched(t, account);
                    }
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
        } else if (!account.timeThisTimer()) {
            // Measured CPU of timers is sampled: one callback of the namespace's in CpuAccount.VIRTUAL_SAMPLE is
            // timed and stands for them all (TCP re-arms a timer on most segments; two clock reads each were a few
            // per cent of a frame).
            t.run();
        } else {
            long t0 = System.nanoTime();
            try {
                t.run();
            } finally {
                account.addMeasuredTimer(System.nanoTime() - t0, CpuAccount.VIRTUAL_SAMPLE);
            }
        }
    }

    private void instantEnded() {
        sameInstant = 0;
        watched = null;
    }

    /** Runs a task of an instant past the stall limit, counting its work, and ends the run if that is a livelock. */
    private void runWatched(Runnable t, CpuAccount account) {
        if (watched == null) {
            watched = new java.util.IdentityHashMap<>();
            if (onLongInstant != null) {
                onLongInstant.run();
            }
        }
        long[] work = watched.computeIfAbsent(key(t), k -> new long[1]);
        work[0]++;
        running = work;
        try {
            run(t, account);
        } finally {
            running = null;
        }
        // A task that names itself but is made afresh each time would never reach the limit: as many different
        // tasks at one instant as the limit allows one task is no burst either.
        if (work[0] >= taskLimit || watched.size() >= taskLimit) {
            throw stalled();
        }
    }

    /**
     * What a task's work is counted under: the task itself if it names itself (a namespace's receive backlog is one
     * object for the namespace's life), else its class (a lambda made afresh for each timer is one kind of work).
     */
    private static Object key(Runnable t) {
        return NAMES_ITSELF.get(t.getClass()) ? t : t.getClass();
    }

    // Whether a class has its own toString, asked once per class: watching looks at every task.
    private static final ClassValue<Boolean> NAMES_ITSELF = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> c) {
            try {
                return c.getMethod("toString").getDeclaringClass() != Object.class;
            } catch (NoSuchMethodException e) {
                return false;    // every object has one
            }
        }
    };

    /** The exception for a livelocked instant, naming the busiest tasks; the watchdog starts afresh. */
    private ClockStalled stalled() {
        Map<String, Long> top = new java.util.LinkedHashMap<>();
        watched.entrySet().stream()
                .sorted(Map.Entry.<Object, long[]>comparingByValue((x, y) -> Long.compare(y[0], x[0]))
                        .thenComparing(x -> describe(x.getKey())))
                .limit(BUSIEST).forEach(x -> top.merge(describe(x.getKey()), x.getValue()[0], Long::sum));
        ClockStalled e = new ClockStalled(now, sameInstant, stallLimit, taskLimit, top, watched.size());
        instantEnded();
        return e;
    }

    /** What a task is: its own {@code toString} if it has one, else its class (a lambda's: where it was written). */
    private static String describe(Object key) {
        if (!(key instanceof Class<?> c)) {
            return key.toString();
        }
        String n = c.getName();
        int lambda = n.indexOf("$$Lambda");
        return lambda >= 0 ? n.substring(0, lambda) + " (lambda)" : n;
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

    /** Events run so far (cancelled timers not counted): with the frames, what a run's wall time paid for. */
    public long eventsRun() {
        return eventsRun;
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
