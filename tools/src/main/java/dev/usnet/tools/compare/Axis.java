package dev.usnet.tools.compare;

import dev.usnet.tools.cli.UsageException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One dimension of a comparison, as given on the command line: a knob ({@code --vary [NS:]KEY=V1,V2,...}) or a
 * topology parameter ({@code --param NAME=V1,V2,...}) and the values it takes, in the order given.
 */
record Axis(Kind kind, String name, List<String> values, String argument) {
    enum Kind {
        KNOB("--vary"), PARAM("--param");

        final String option;

        Kind(String option) {
            this.option = option;
        }
    }

    Axis {
        values = List.copyOf(values);
    }

    /**
     * Parses {@code NAME=V1,V2,...}. Values are split at commas and trimmed; an empty value or one given twice
     * is refused, since two runs of one variant would only differ by noise.
     */
    static Axis parse(Kind kind, String arg) {
        int eq = arg.indexOf('=');
        String what = kind == Kind.KNOB ? "[NS:]KEY=V1,V2,..." : "NAME=V1,V2,...";
        if (eq <= 0) {
            throw new UsageException(kind.option + " " + arg + ": expected " + what);
        }
        String name = arg.substring(0, eq).trim();
        if (name.isEmpty() || (kind == Kind.KNOB && (name.startsWith(":") || name.endsWith(":")))) {
            throw new UsageException(kind.option + " " + arg + ": expected " + what);
        }
        List<String> values = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        for (String v : arg.substring(eq + 1).split(",", -1)) {
            String t = v.trim();
            if (t.isEmpty()) {
                throw new UsageException(kind.option + " " + arg + ": empty value (values are separated by commas)");
            }
            if (!seen.add(t)) {
                throw new UsageException(kind.option + " " + arg + ": value '" + t + "' is given twice");
            }
            values.add(t);
        }
        return new Axis(kind, name, values, arg);
    }

    /** What {@code --set} takes for this knob at {@code value}. */
    String knobArgument(String value) {
        return name + "=" + value;
    }
}
