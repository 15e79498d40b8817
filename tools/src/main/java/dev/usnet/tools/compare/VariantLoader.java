package dev.usnet.tools.compare;

import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.TopologyFile;
import java.util.ArrayList;
import java.util.List;

/**
 * The topology of one variant, loaded the one way every variant is: the file read with the variant's parameter
 * values, then its knob overrides applied and judged by a build in virtual time ({@link TopologyFile#check}),
 * so a bad value is found before anything runs. Errors name the {@code --vary} or {@code --param} that gave the
 * value.
 */
final class VariantLoader {
    private final String file;
    private final String text;
    private final List<Axis> axes;

    /**
     * {@code text} is the file's content, read once: every variant (and a {@code --merge} long after the shards ran)
     * sees the same bytes; {@code file} is the name as the user gave it, for errors and the report.
     */
    VariantLoader(String file, String text, List<Axis> axes) {
        this.file = file;
        this.text = text;
        this.axes = List.copyOf(axes);
    }

    /** The checked topology of {@code v}; a {@link TopologyException} with every problem of this variant. */
    TopologyFile.Checked load(Variant v) {
        try {
            return TopologyFile.check(file, text, v.params(), List.of(), v.knobs());
        } catch (TopologyException e) {
            List<String> errors = new ArrayList<>();
            for (String s : e.errors()) {
                errors.add(withParam(asVary(s, v), v));
            }
            throw new TopologyException(errors, e.warnings());
        }
    }

    /**
     * An error a parameter's value caused names the file's line it was substituted into, not the value's
     * source: when the error quotes one of the variant's parameter values, say which {@code --param} gave it.
     */
    private static String withParam(String error, Variant v) {
        List<String> from = new ArrayList<>();
        v.params().forEach((k, val) -> {
            if (error.contains("'" + val + "'")) {
                from.add("--param " + k + "=" + val);
            }
        });
        return from.isEmpty() || error.startsWith("--") ? error : error + " (with " + String.join(", ", from) + ")";
    }

    /** A knob error names {@code --set KEY=V}, the form the check takes; the user wrote {@code --vary KEY=V1,...}. */
    private String asVary(String error, Variant v) {
        for (Axis a : axes) {
            if (a.kind() == Axis.Kind.KNOB && v.vary().containsKey(a.name())) {
                String set = "--set " + a.knobArgument(v.vary().get(a.name())) + ":";
                if (error.startsWith(set)) {
                    return "--vary " + a.knobArgument(v.vary().get(a.name())) + ":" + error.substring(set.length());
                }
            }
        }
        return error;
    }
}
