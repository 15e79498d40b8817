package dev.usnet.tools.topology.file;

/** A place in a topology file: the file as the user named it, a 1-based line, and the key path there. */
public record Where(String file, int line, String path) {
    /** {@code file:line: path: message}, the shape of every topology error. */
    public String error(String message) {
        // Line 0: not from the file (a command-line argument names itself instead).
        return file + (line > 0 ? ":" + line : "") + ": " + (path.isEmpty() ? "" : path + ": ") + message;
    }

    /** The same line with a longer key path. */
    public Where child(String key) {
        return new Where(file, line, path.isEmpty() ? key : path + "." + key);
    }

    @Override
    public String toString() {
        return file + ":" + line;
    }
}
