package dev.usnet.tap;

import java.io.IOException;

/** A failed system call while creating or configuring a TAP device, with its errno and a message saying what to do. */
public final class TunException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String op;
    private final int errno;

    public TunException(String op, int errno, String message) {
        super(message);
        this.op = op;
        this.errno = errno;
    }

    /** The operation that failed: "open", "TUNSETIFF", "setns", ... */
    public String op() {
        return op;
    }

    /** The errno it failed with (0 when the failure was not a system call's). */
    public int errno() {
        return errno;
    }
}
