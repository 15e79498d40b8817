package dev.usnet.tap.sys;

import java.io.IOException;

/** A failed system call (or kernel request) of usnet's platform code, with its errno and a message saying what to do. */
public class SysException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String op;
    private final int errno;

    public SysException(String op, int errno, String message) {
        super(message);
        this.op = op;
        this.errno = errno;
    }

    /** A failure whose message {@link Errno#message} makes from the step, what it was done to, and the errno. */
    public static SysException of(String op, String subject, int errno) {
        return new SysException(op, errno, Errno.message(op, subject, errno));
    }

    /** The step that failed: "setns", "open netns", "RTM_GETADDR", ... */
    public String op() {
        return op;
    }

    /** The errno it failed with (0 when the failure was not a system call's). */
    public int errno() {
        return errno;
    }
}
