package dev.usnet.core.stats;

/**
 * One namespace's CPU: what its work really took on the thread that ran it (measured, noisy, wall-clock
 * nanoseconds around each backlog run), and what the CPU model says it costs (modelled, deterministic:
 * per-operation costs summed per backlog run, see docs/cpu-model.md). Like a process's utime in
 * /proc/PID/stat for the measured part, and netperf {@code -c} for utilisation.
 *
 * <p>Written only on the namespace's thread; read from any thread (reports).
 */
public final class CpuAccount {
    private final long startClockNanos;
    private final long startWallNanos = System.nanoTime();
    private volatile long measuredNanos;
    private volatile long measuredRuns;
    private volatile long measuredTimerRuns;
    private volatile long modelPicos;
    private volatile long modelBusyNanos;
    private volatile boolean modelEnabled;
    private volatile int cores = 1;
    // Operation counts no other counter holds (plain increments on the namespace thread).
    private long bridgeForwards;
    private long bytesChecksummed;
    private long conntrackLookups;
    private long conntrackCreates;
    private long natRewrites;
    private long nftRules;
    // Timer callbacks to go until the next timed one (virtual time; namespace thread only).
    private int timersUntilTimed;
    // Carry of the busy-time division by cores, so busy time sums exactly over runs.
    private long busyRemainderPicos;

    /** {@code startClockNanos}: the namespace clock when the account opens (utilisation counts from there). */
    public CpuAccount(long startClockNanos) {
        this.startClockNanos = startClockNanos;
    }

    /** Adds one unit of measured work (a backlog run) of {@code nanos} wall-clock ns on the namespace thread. */
    public void addMeasured(long nanos) {
        addMeasured(nanos, 1);
    }

    /**
     * Adds one backlog run that was timed at {@code nanos} wall-clock ns and stands for {@code weight} runs' time:
     * virtual time reads the clock around one run in {@link #VIRTUAL_SAMPLE} (two clock reads per run were a few per
     * cent of a simulated frame) and counts the others with {@link #ran()}.
     */
    public void addMeasured(long nanos, int weight) {
        MEASURED_NANOS.setOpaque(this, measuredNanos + nanos * weight);
        ran();
    }

    /** Counts one backlog run that was not timed (its time is in a timed run's weight). */
    public void ran() {
        MEASURED_RUNS.setOpaque(this, measuredRuns + 1);
    }

    /** Adds one timer callback of this namespace that took {@code nanos} wall-clock ns on its thread. */
    public void addMeasuredTimer(long nanos) {
        addMeasuredTimer(nanos, 1);
    }

    /** Adds one timed timer callback standing for {@code weight} callbacks' time, as {@link #addMeasured(long, int)}. */
    public void addMeasuredTimer(long nanos, int weight) {
        MEASURED_NANOS.setOpaque(this, measuredNanos + nanos * weight);
        timerRan();
    }

    /** Counts one timer callback that was not timed. */
    public void timerRan() {
        MEASURED_TIMER_RUNS.setOpaque(this, measuredTimerRuns + 1);
    }

    /**
     * Virtual time: whether to time this timer callback (one in {@link #VIRTUAL_SAMPLE}, then counted with
     * {@link #addMeasuredTimer(long, int)}); a callback not timed is counted here.
     */
    public boolean timeThisTimer() {
        if (--timersUntilTimed > 0) {
            timerRan();
            return false;
        }
        timersUntilTimed = VIRTUAL_SAMPLE;
        return true;
    }

    /** In virtual time one backlog run and one timer callback in this many is timed ({@link #addMeasured(long, int)}). */
    public static final int VIRTUAL_SAMPLE = 16;

    // Written by the namespace's thread only: plain stores, no fence per run (the fields are volatile for readers).
    private static final java.lang.invoke.VarHandle MEASURED_NANOS;
    private static final java.lang.invoke.VarHandle MEASURED_RUNS;
    private static final java.lang.invoke.VarHandle MEASURED_TIMER_RUNS;

    static {
        try {
            java.lang.invoke.MethodHandles.Lookup l = java.lang.invoke.MethodHandles.lookup();
            MEASURED_NANOS = l.findVarHandle(CpuAccount.class, "measuredNanos", long.class);
            MEASURED_RUNS = l.findVarHandle(CpuAccount.class, "measuredRuns", long.class);
            MEASURED_TIMER_RUNS = l.findVarHandle(CpuAccount.class, "measuredTimerRuns", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Timer callbacks measured (those the stack schedules through {@code NetStack.schedule}). */
    public long measuredTimerRuns() {
        return measuredTimerRuns;
    }

    /** Wall-clock ns this namespace's work took on its thread (noisy; never part of a deterministic result). */
    public long measuredNanos() {
        return measuredNanos;
    }

    /** Backlog runs measured. */
    public long measuredRuns() {
        return measuredRuns;
    }

    /** Measured time as a fraction of wall-clock time since the account opened. */
    public double measuredBusyFraction() {
        long wall = System.nanoTime() - startWallNanos;
        return wall <= 0 ? 0 : (double) measuredNanos / wall;
    }

    /** A bridge forwarded (or flooded) one frame. */
    public void bridgeForwarded() {
        bridgeForwards++;
    }

    public long bridgeForwards() {
        return bridgeForwards;
    }

    /** Software checksummed {@code bytes} (skb_checksum_help, csum_partial). */
    public void checksummed(int bytes) {
        bytesChecksummed += bytes;
    }

    public long bytesChecksummed() {
        return bytesChecksummed;
    }

    /** Connection tracking looked a packet's tuple up in its table (nf_conntrack_in, __nf_conntrack_find_get). */
    public void conntrackLookedUp() {
        conntrackLookups++;
    }

    public long conntrackLookups() {
        return conntrackLookups;
    }

    /** Connection tracking made a new entry (init_conntrack) for a packet of an unknown connection. */
    public void conntrackCreated() {
        conntrackCreates++;
    }

    public long conntrackCreates() {
        return conntrackCreates;
    }

    /** NAT rewrote one packet's addresses or ports (nf_nat_manip_pkt), checksums included. */
    public void natRewrote() {
        natRewrites++;
    }

    public long natRewrites() {
        return natRewrites;
    }

    /** nftables evaluated {@code rules} rules for one packet at one hook (nft_do_chain). */
    public void nftEvaluated(int rules) {
        nftRules += rules;
    }

    public long nftRules() {
        return nftRules;
    }

    /** Whether usnet.cpu.model was on when the namespace last ran its backlog. */
    public boolean modelEnabled() {
        return modelEnabled;
    }

    void setModel(boolean on, int cores) {
        this.modelEnabled = on;
        this.cores = cores;
    }

    /**
     * Charges one backlog run's modelled cost (picoseconds of CPU) with the model on {@code cores} cores and
     * returns the busy time in ns the namespace's clock must advance before its next run.
     */
    public long chargeModel(long picos, int cores) {
        setModel(true, cores);
        modelPicos += picos;
        long perCore = picos + busyRemainderPicos;
        long busyPicos = perCore / cores;
        long busyNanos = busyPicos / 1000;
        busyRemainderPicos = perCore - busyNanos * 1000 * cores;
        modelBusyNanos += busyNanos;
        return busyNanos;
    }

    /** Modelled CPU time over all cores, ns (cpu_model_ns); 0 with the model off. */
    public long modelNanos() {
        return modelPicos / 1000;
    }

    /** Modelled CPU time in picoseconds (exact sum of the per-operation costs). */
    public long modelPicos() {
        return modelPicos;
    }

    /** Wall time on the namespace clock its cores were busy, ns (modelled CPU / cores). */
    public long modelBusyNanos() {
        return modelBusyNanos;
    }

    /**
     * cpu_util: modelled CPU as a fraction of the namespace's cores over {@code nowClockNanos - start} on its
     * clock (1.0: every core busy the whole time), like netperf -c's utilisation.
     */
    public double modelUtilisation(long nowClockNanos) {
        long elapsed = nowClockNanos - startClockNanos;
        return elapsed <= 0 ? 0 : (double) modelPicos / 1000.0 / cores / elapsed;
    }
}
