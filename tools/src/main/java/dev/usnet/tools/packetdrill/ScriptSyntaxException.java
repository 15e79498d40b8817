package dev.usnet.tools.packetdrill;

/** A script that cannot be read: the message starts with {@code file:line:}. */
public class ScriptSyntaxException extends RuntimeException {
    private final int line;

    public ScriptSyntaxException(String file, int line, String message) {
        super(file + ":" + line + ": " + message);
        this.line = line;
    }

    public int line() {
        return line;
    }
}
