package dev.usnet.ns.pid;

/**
 * fork failing in alloc_pid: {@code EAGAIN} when a pid namespace on the way up has no free number below its pid_max,
 * {@code ENOMEM} when the process's namespace no longer takes new processes (its init has exited); and clone(CLONE_NEWPID)
 * failing with {@code ENOSPC} when the new namespace would be deeper than MAX_PID_NS_LEVEL.
 */
public final class PidAllocException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String errno;

    PidAllocException(String errno, String message) {
        super(message);
        this.errno = errno;
    }

    /** "EAGAIN", "ENOMEM" or "ENOSPC". */
    public String errno() {
        return errno;
    }
}
