package dev.usnet.tools.cli;

/** Bad input from the user (a file, a key, an option): reported as one clear message, exit code 2. */
public final class UsageException extends RuntimeException {
    public UsageException(String message) {
        super(message);
    }

    public UsageException(String message, Throwable cause) {
        super(message, cause);
    }
}
