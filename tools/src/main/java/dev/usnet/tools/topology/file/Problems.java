package dev.usnet.tools.topology.file;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Collects the problems of one topology file so that a single run reports all of them: errors, which stop
 * the file from being built, and warnings, which do not. A problem said twice in the same words at the same
 * place (a {@code --set} applied to every namespace) is kept once. Problems that differ only in their numbers on
 * one line of the file are one problem said once with how many more there are: a template under {@code count:}
 * makes one entry per copy from the same line, and one bad template under {@code count: 100000} is one mistake,
 * not a hundred thousand lines of output.
 */
public final class Problems {
    private record Entry(Where where, String text, boolean warning, boolean virtualClock) {
        Entry(Where where, String text, boolean warning) {
            this(where, text, warning, false);
        }
    }

    private final List<Entry> list = new ArrayList<>();
    // Entries by file, line, kind and text with every number masked: the first one said, the others counted.
    private final java.util.Map<String, Entry> firstLike = new java.util.HashMap<>();
    private final java.util.Map<Entry, Likes> more = new java.util.IdentityHashMap<>();

    /** How many more entries an entry stands for, and where the last of them is. */
    private static final class Likes {
        int count;
        String lastPath;
    }
    private final Set<String> texts = new LinkedHashSet<>();
    // Every key path an error is at or inside of ("file\0path" of the error and of each key above it), so that
    // hasErrorAt is one lookup: a file with an error in each of 100 000 entries took minutes scanning the list.
    private final Set<String> errorPaths = new java.util.HashSet<>();
    private int errors;
    private final Set<String> incomplete = new LinkedHashSet<>();
    private final Set<String> dropped = new LinkedHashSet<>();

    public void add(Where w, String message) {
        put(new Entry(w, w.error(message), false));
    }

    /** A problem that does not stop the build: printed as {@code file:line: key.path: warning: message}. */
    public void warn(Where w, String message) {
        put(new Entry(w, w.error("warning: " + message), true));
    }

    /**
     * A warning that matters only in virtual time ({@code --clock virtual}): listed apart, so a real-time run does
     * not print it.
     */
    public void warnVirtualClock(Where w, String message) {
        put(new Entry(w, w.error("warning: " + message), true, true));
    }

    /** An error already formatted as {@code file:line: message} (the YAML parser's own). */
    public void addRaw(String formatted, int line) {
        put(new Entry(new Where("", line, ""), formatted, false));
    }

    private void put(Entry e) {
        if (texts.add(e.text)) {
            if (e.where.line() > 0) {
                String key = e.where.file() + "\0" + e.where.line() + "\0" + e.warning + e.virtualClock + "\0"
                        + e.text.replaceAll("[0-9]+", "#");
                Entry first = firstLike.putIfAbsent(key, e);
                if (first != null) {
                    Likes l = more.computeIfAbsent(first, k -> new Likes());
                    l.count++;
                    l.lastPath = e.where.path();
                } else {
                    list.add(e);
                }
            } else {
                list.add(e);
            }
            if (!e.warning) {
                errors++;
                String file = e.where.file() + "\0";
                String p = e.where.path();
                for (int i = 0; i < p.length(); i++) {
                    char c = p.charAt(i);
                    if (c == '.' || c == '[') {
                        errorPaths.add(file + p.substring(0, i));
                    }
                }
                errorPaths.add(file + p);
            }
        }
    }

    public boolean isEmpty() {
        return errorCount() == 0;
    }

    public int errorCount() {
        return errors;
    }

    /**
     * Whether an error was already reported at {@code w} or inside it (at a key below its path on the same
     * line or a later one): what depends on that entry is then not judged again.
     */
    public boolean hasErrorAt(Where w) {
        return errorPaths.contains(w.file() + "\0" + w.path());
    }

    /**
     * Namespace {@code ns} has a device entry that could not be read at all: what depends on all its devices
     * and addresses being there (its routes, its apps' reachability) is not judged.
     */
    public void incomplete(String ns) {
        incomplete.add(ns);
    }

    /**
     * Namespace {@code ns} has a device entry that could not be read; {@code device} is the name it gave, or
     * null when even that is unknown. References to such a device are not reported as missing: the entry's own
     * problem is the one to fix.
     */
    public void dropped(String ns, String device) {
        incomplete.add(ns);
        dropped.add(ns + "/" + (device == null ? "" : device));
    }

    /** Whether a reference to {@code device} in {@code ns} may be to an entry that could not be read. */
    public boolean mayBeDropped(String ns, String device) {
        return dropped.contains(ns + "/" + device) || dropped.contains(ns + "/");
    }

    public boolean isIncomplete(String ns) {
        return incomplete.contains(ns);
    }

    /** The errors in the order of the file's lines; command-line arguments (line 0) after the file's. */
    public List<String> errors() {
        return sorted(false);
    }

    /** The warnings but those about virtual time only. */
    public List<String> warnings() {
        return list.stream().filter(e -> e.warning && !e.virtualClock)
                .sorted(Comparator.comparingInt(e -> e.where.line() == 0 ? Integer.MAX_VALUE : e.where.line()))
                .map(this::text).toList();
    }

    /** The warnings about virtual time only ({@link #warnVirtualClock}). */
    public List<String> virtualClockWarnings() {
        return list.stream().filter(e -> e.virtualClock)
                .sorted(Comparator.comparingInt(e -> e.where.line() == 0 ? Integer.MAX_VALUE : e.where.line()))
                .map(this::text).toList();
    }

    private List<String> sorted(boolean warnings) {
        return list.stream().filter(e -> e.warning == warnings)
                .sorted(Comparator.comparingInt(e -> e.where.line() == 0 ? Integer.MAX_VALUE : e.where.line()))
                .map(this::text).toList();
    }

    /** The entry's text, with how many more like it its line gave (the copies of a count: template), if any. */
    private String text(Entry e) {
        Likes l = more.get(e);
        if (l == null) {
            return e.text;
        }
        return e.text + " (and " + l.count + " more like it from line " + e.where.line() + ", the last at "
                + (l.lastPath.isEmpty() ? "the same key" : l.lastPath) + ")";
    }

    /** Throws a {@link TopologyException} carrying every error (and the warnings), if there is an error. */
    public void throwIfAny() {
        if (!isEmpty()) {
            throw new TopologyException(errors(), warnings());
        }
    }
}
