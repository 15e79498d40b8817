package dev.usnet.tools.packetdrill;

/**
 * A script that ran and did not hold: {@code file:line: reason}, then, for packets, the script's packet and the
 * one the stack sent with their times, as packetdrill prints them.
 */
public final class ScriptFailure extends RuntimeException {
    private final int line;
    private final String reason;
    private final String details;

    public ScriptFailure(String file, int line, String reason, String details) {
        super(file + ":" + line + ": " + reason + (details.isEmpty() ? "" : "\n" + details));
        this.line = line;
        this.reason = reason;
        this.details = details;
    }

    public int line() {
        return line;
    }

    /** The one-line reason, without the file and line. */
    public String reason() {
        return reason;
    }

    /** Further lines (script vs actual packet), or empty. */
    public String details() {
        return details;
    }
}
