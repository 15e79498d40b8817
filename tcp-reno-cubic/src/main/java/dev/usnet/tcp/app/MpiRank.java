package dev.usnet.tcp.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Scheduler;
import org.HdrHistogram.Histogram;

/**
 * One MPI process: it runs its {@link MpiStep}s once per iteration on its namespace's thread. A compute step
 * stays idle for the job's compute time; an exchange step writes its message (to a TCP {@link MpiChannel}, or to
 * the peer's memory when both ranks share a host and the job uses shared memory) and completes once the message
 * is all handed over (MPI_Send returning: the bytes are in the socket's send buffer) <em>and</em> the partner's
 * message has been received in full (MPI_Wait on the MPI_Irecv). Bytes from a peer that arrive before the step
 * that expects them (the peer is ahead) wait in {@link #avail} for it, as MPI's unexpected-message queue holds
 * them. Nothing is allocated per step or per message.
 */
final class MpiRank {
    final MpiJob job;
    final int id;
    final NetStack stack;
    final Scheduler sched;
    /** The address peers connect to (the rank's namespace's). */
    final int addr;
    private final MpiStep[] steps;
    /** This rank's end of the TCP connection to each peer, or null (no traffic, or shared memory). */
    final MpiChannel[] channels;
    /** Bytes received from each peer and not yet consumed by an exchange step. */
    private final long[] avail;
    /** Per-iteration duration of this rank, ns: its start (or the end of the last) to its last step's end. */
    final Histogram iterations = new Histogram(3);

    private final Runnable computeDone = this::computeDone;
    private final Runnable kick = this::kick;

    private int iteration;
    private int step;
    /** The current exchange's message is all written (or there is none). */
    private boolean sent;
    private boolean stepStarted;
    private boolean computing;
    private boolean kickQueued;
    private boolean inAdvance;
    private boolean again;
    private boolean begun;
    private boolean done;
    private long iterationStart;
    /** Payload bytes this rank sent (TCP and shared memory). */
    long bytesSent;
    long shmBytesSent;

    MpiRank(MpiJob job, int id, NetStack stack, int addr, MpiStep[] steps, int ranks) {
        this.job = job;
        this.id = id;
        this.stack = stack;
        this.sched = stack.scheduler();
        this.addr = addr;
        this.steps = steps;
        this.channels = new MpiChannel[ranks];
        this.avail = new long[ranks];
    }

    MpiStep[] steps() {
        return steps;
    }

    boolean isDone() {
        return done;
    }

    /** Where the rank is, for a failed job's reason: {@code rank 3: iteration 2, step 5 (exchange with rank 7)}. */
    String where() {
        if (done) {
            return "rank " + id + ": done";
        }
        if (!begun) {
            return "rank " + id + ": not started";
        }
        MpiStep s = steps[step];
        String what = s.isCompute() ? "compute"
                : s.sendTo() == s.recvFrom() ? "exchange with rank " + s.sendTo()
                : "send to rank " + s.sendTo() + ", receive from rank " + s.recvFrom();
        String waiting = s.isCompute() ? "" : !sent ? ", sending" : ", waiting for " + (s.recvBytes() - avail[s.recvFrom()])
                + " bytes from rank " + s.recvFrom();
        return "rank " + id + ": iteration " + iteration + ", step " + step + " (" + what + waiting + ")";
    }

    /** Every connection is up: the first iteration starts (namespace thread). */
    void begin() {
        begun = true;
        iterationStart = sched.nanoTime();
        advance();
    }

    /** {@code n} bytes from {@code peer} arrived (TCP or shared memory); namespace thread. */
    void received(int peer, long n) {
        avail[peer] += n;
        advance();
    }

    /** A channel wrote all it owed: the current exchange's send is complete. */
    void sendComplete() {
        sent = true;
        advance();
    }

    /** Shared memory: the peer on this host copied {@code n} bytes for us; taken on our next turn of the loop. */
    void shmArrive(int peer, long n) {
        avail[peer] += n;
        if (!kickQueued) {
            kickQueued = true;
            sched.execute(kick);
        }
    }

    private void kick() {
        kickQueued = false;
        advance();
    }

    private void computeDone() {
        if (!computing || job.isStopped()) {
            return;
        }
        computing = false;
        step++;
        advance();
    }

    /** Runs steps until one has to wait; re-entered calls (a callback inside a write) only ask for another turn. */
    private void advance() {
        if (!begun || done || computing || job.isStopped()) {
            return;
        }
        if (inAdvance) {
            again = true;
            return;
        }
        inAdvance = true;
        try {
            do {
                again = false;
                runSteps();
            } while (again && !done && !computing);
        } finally {
            inAdvance = false;
        }
    }

    private void runSteps() {
        while (!done && !job.isStopped()) {
            if (step == steps.length) {
                long now = sched.nanoTime();
                iterations.recordValue(Math.max(0, now - iterationStart));
                iterationStart = now;
                iteration++;
                step = 0;
                if (iteration == job.iterations()) {
                    done = true;
                    job.rankDone(this);
                    return;
                }
            }
            MpiStep s = steps[step];
            if (s.isCompute()) {
                if (job.computeNanos() > 0) {
                    computing = true;
                    sched.executeAfter(computeDone, job.computeNanos());
                    return;
                }
                step++;
                continue;
            }
            if (!stepStarted) {
                stepStarted = true;
                sent = s.sendBytes() == 0;
                if (s.sendBytes() > 0) {
                    send(s.sendTo(), s.sendBytes());
                }
            }
            if (!sent || s.recvBytes() > 0 && avail[s.recvFrom()] < s.recvBytes()) {
                return;
            }
            if (s.recvBytes() > 0) {
                avail[s.recvFrom()] -= s.recvBytes();
            }
            stepStarted = false;
            step++;
        }
    }

    private void send(int peer, int bytes) {
        bytesSent += bytes;
        MpiChannel ch = channels[peer];
        if (ch == null) {
            // Same host, shared memory: the copy is the peer's to take, and the send is complete at once.
            shmBytesSent += bytes;
            job.rank(peer).shmArrive(id, bytes);
            sent = true;
            return;
        }
        ch.send(bytes);
    }
}
