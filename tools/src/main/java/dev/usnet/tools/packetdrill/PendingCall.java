package dev.usnet.tools.packetdrill;

/**
 * A system call a target has started. A call that does not block is done when {@link Target#call} returns.
 * A blocking call (accept with nothing queued, connect on a blocking socket, read with no data, poll/epoll_wait
 * with a timeout) completes later on the target's clock: in virtual time when the event loop makes it ready,
 * on the kernel when the thread making it returns.
 */
public interface PendingCall {

    boolean isDone();

    /** The result; only when {@link #isDone()}. */
    SyscallResult result();

    /** Script time (µs) at which the call returned; only when {@link #isDone()}. */
    long endMicros();
}
