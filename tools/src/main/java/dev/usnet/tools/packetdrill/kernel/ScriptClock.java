package dev.usnet.tools.packetdrill.kernel;

import java.util.concurrent.locks.LockSupport;

/**
 * Script time on the kernel target: real time from {@link System#nanoTime()}, 0 at {@link #start()}. Events are
 * stamped in nanoTime where they happen (the sniffer's read, a system call's return) and turned into script time
 * when asked, so a packet read before {@link #start()} simply has a negative time.
 */
final class ScriptClock {
    /** A sleep wakes up this long before its deadline and spins the rest: parkNanos alone is 50-100 µs late here. */
    private static final long SPIN_NANOS = 200_000;

    private volatile long originNanos = System.nanoTime();

    void start() {
        originNanos = System.nanoTime();
    }

    long nowMicros() {
        return toMicros(System.nanoTime());
    }

    /** The script time of a {@link System#nanoTime()} reading. */
    long toMicros(long nanoTime) {
        return Math.floorDiv(nanoTime - originNanos, 1000);
    }

    /** The {@link System#nanoTime()} value at script time {@code micros}. */
    long nanoTimeAt(long micros) {
        return originNanos + micros * 1000;
    }

    /** Nanoseconds from now until script time {@code micros} (negative once it has passed). */
    long nanosUntil(long micros) {
        return nanoTimeAt(micros) - System.nanoTime();
    }

    /** Sleeps until script time {@code micros}; returns at once when it has passed. Keeps an interrupt. */
    void sleepUntil(long micros) {
        long deadline = nanoTimeAt(micros);
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            if (Thread.currentThread().isInterrupted()) {
                return;
            }
            if (left > SPIN_NANOS) {
                LockSupport.parkNanos(left - SPIN_NANOS);
            } else {
                Thread.onSpinWait();
            }
        }
    }
}
