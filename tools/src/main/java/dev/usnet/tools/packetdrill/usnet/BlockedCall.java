package dev.usnet.tools.packetdrill.usnet;

import dev.usnet.tools.packetdrill.PendingCall;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.SyscallResult;

/**
 * A system call of the usnet target: done at once, or blocked until {@link Attempt#tryNow} has a result. The
 * target retries every blocked call after each instant of virtual time, so the call returns at the instant the
 * event that unblocked it happened, as the woken thread would.
 */
final class BlockedCall implements PendingCall {
    /** One try of the call; null: it would still block. */
    @FunctionalInterface
    interface Attempt {
        SyscallResult tryNow();
    }

    final Syscall call;
    private final Attempt attempt;
    private SyscallResult result;
    private long endMicros;

    BlockedCall(Syscall call, Attempt attempt) {
        this.call = call;
        this.attempt = attempt;
    }

    static BlockedCall done(Syscall call, SyscallResult r, long nowMicros) {
        BlockedCall b = new BlockedCall(call, null);
        b.result = r;
        b.endMicros = nowMicros;
        return b;
    }

    /** Tries the call again at {@code nowMicros}; true if it completed now. */
    boolean retry(long nowMicros) {
        if (result != null) {
            return false;
        }
        SyscallResult r = attempt.tryNow();
        if (r == null) {
            return false;
        }
        result = r;
        endMicros = nowMicros;
        return true;
    }

    @Override
    public boolean isDone() {
        return result != null;
    }

    @Override
    public SyscallResult result() {
        if (result == null) {
            throw new IllegalStateException(call.name() + " (line " + call.line() + ") has not returned yet");
        }
        return result;
    }

    @Override
    public long endMicros() {
        if (result == null) {
            throw new IllegalStateException(call.name() + " (line " + call.line() + ") has not returned yet");
        }
        return endMicros;
    }

    @Override
    public String toString() {
        return call.name() + " (line " + call.line() + ")" + (result == null ? " blocked" : " = " + result.ret());
    }
}
