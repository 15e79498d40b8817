package dev.usnet.tools.packetdrill.kernel;

import dev.usnet.tap.Capabilities;
import dev.usnet.tools.packetdrill.PendingCall;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.SyscallResult;
import dev.usnet.tools.packetdrill.TargetException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One system call of the script, made by a thread in the test namespace. The thread marks the moment it enters the
 * kernel ({@link #enteringKernel}) and stamps the moment the kernel returned ({@link #returned}); the runner's thread
 * sees whether the call is done, or whether the kernel put the calling thread to sleep inside it
 * ({@link #looksBlocked}: the thread's state in /proc is S, interruptible sleep, while it is inside the call) —
 * that is how a call that blocks (accept with nothing queued, a blocking connect, read without data, poll with a
 * timeout) is told apart from one that is merely slow to return.
 */
final class KernelCall implements PendingCall {
    private static final ThreadLocal<Long> TID = ThreadLocal.withInitial(Capabilities::threadId);

    private final Syscall syscall;
    private final ScriptClock clock;
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile long tid = -1;
    private volatile boolean inKernel;
    private volatile long returnedNanos;
    private volatile SyscallResult result;
    private volatile RuntimeException failure;

    KernelCall(Syscall syscall, ScriptClock clock) {
        this.syscall = syscall;
        this.clock = clock;
    }

    Syscall syscall() {
        return syscall;
    }

    /** Called by the calling thread right before the system call that may block. */
    void enteringKernel() {
        tid = TID.get();
        inKernel = true;
    }

    /** Called by the calling thread as soon as the kernel returned: the call's end time. */
    void returned() {
        returnedNanos = System.nanoTime();
        inKernel = false;
    }

    void complete(SyscallResult r) {
        if (returnedNanos == 0) {
            returnedNanos = System.nanoTime();
        }
        result = r;
        finished.countDown();
    }

    /** The call could not be made as written (bad arguments, an unsupported call): the runner sees the exception. */
    void fail(RuntimeException e) {
        if (returnedNanos == 0) {
            returnedNanos = System.nanoTime();
        }
        failure = e;
        finished.countDown();
    }

    @Override
    public boolean isDone() {
        return finished.getCount() == 0;
    }

    @Override
    public SyscallResult result() {
        if (!isDone()) {
            throw new IllegalStateException(syscall.name() + " of line " + syscall.line() + " has not returned yet");
        }
        RuntimeException f = failure;
        if (f != null) {
            throw f;
        }
        return result;
    }

    @Override
    public long endMicros() {
        if (!isDone()) {
            throw new IllegalStateException(syscall.name() + " of line " + syscall.line() + " has not returned yet");
        }
        return clock.toMicros(returnedNanos);
    }

    /** Waits until done or {@link System#nanoTime()} reaches {@code deadlineNanos}; true if done. */
    boolean awaitUntilNanoTime(long deadlineNanos) {
        try {
            long left = deadlineNanos - System.nanoTime();
            return left <= 0 ? isDone() : finished.await(left, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return isDone();
        }
    }

    /** True when the calling thread is inside the call and the kernel has it asleep. */
    boolean looksBlocked() {
        long t = tid;
        if (!inKernel || t <= 0 || isDone()) {
            return false;
        }
        return threadState(t) == 'S';
    }

    /** The state letter of thread {@code tid} of this process (third field of /proc/self/task/TID/stat). */
    static char threadState(long tid) {
        try {
            String stat = Files.readString(Path.of("/proc/self/task/" + tid + "/stat"));
            // The command name (second field) is in parentheses and may hold spaces: the state follows the last ')'.
            int close = stat.lastIndexOf(')');
            return close >= 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
        } catch (IOException e) {
            return '?';
        }
    }

    /** A failure as the runner reports it: the line and the call. */
    static TargetException bad(Syscall s, String what) {
        return new TargetException("line " + s.line() + ": " + s.name() + ": " + what);
    }
}
