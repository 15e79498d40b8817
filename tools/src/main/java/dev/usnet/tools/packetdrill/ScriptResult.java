package dev.usnet.tools.packetdrill;

/**
 * How one script went. {@code outcome}: passed, failed (a {@link ScriptFailure} or a target error while it ran),
 * or not run because it could not be read. {@code message} is the one-line reason, {@code details} further lines.
 */
record ScriptResult(String name, Outcome outcome, String target, double wallSeconds, String message,
                    String details) {

    enum Outcome { PASSED, FAILED, BROKEN, SKIPPED }
}
