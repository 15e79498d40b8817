package dev.usnet.tcp.app;

/**
 * Whether an app did what it was run for: ok, or failed with a reason a user understands ("never connected:
 * SYN retries exhausted", "no replies: 0 of 10 echoes answered"). A run's exit status is built from these,
 * so a failed reason names the cause, not the counters that show it.
 *
 * @param ok the app did its job
 * @param reason why it failed; empty when {@code ok}
 */
public record Outcome(boolean ok, String reason) {
    public static final Outcome OK = new Outcome(true, "");

    public Outcome {
        if (reason == null) {
            throw new IllegalArgumentException("reason must not be null (empty when ok)");
        }
        if (ok != reason.isEmpty()) {
            throw new IllegalArgumentException(ok ? "an ok outcome has no reason, got '" + reason + "'"
                    : "a failed outcome needs a reason");
        }
    }

    public static Outcome failed(String reason) {
        return new Outcome(false, reason);
    }

    /** {@code ok}, or {@code FAILED: reason}: how the exit summary shows it. */
    public String format() {
        return ok ? "ok" : "FAILED: " + reason;
    }

    @Override
    public String toString() {
        return format();
    }
}
