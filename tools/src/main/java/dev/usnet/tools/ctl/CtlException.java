package dev.usnet.tools.ctl;

/** A control request that cannot be carried out as asked; its message says what is wrong, and nothing was changed. */
public final class CtlException extends RuntimeException {
    public CtlException(String message) {
        super(message);
    }

    public CtlException(String message, Throwable cause) {
        super(message, cause);
    }
}
