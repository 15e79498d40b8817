package dev.usnet.tools.packetdrill;

/**
 * A target cannot do what the script asks (an unknown sysctl, a missing privilege, a call it does not implement).
 * The message says what and, where a user can fix it, how.
 */
public class TargetException extends RuntimeException {

    public TargetException(String message) {
        super(message);
    }

    public TargetException(String message, Throwable cause) {
        super(message, cause);
    }
}
