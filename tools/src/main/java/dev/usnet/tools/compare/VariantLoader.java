package dev.usnet.tools.compare;

import dev.usnet.tools.UsageException;
import dev.usnet.tools.topology.TopologyException;
import dev.usnet.tools.topology.TopologyFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The topology of one variant, loaded the one way every variant is: the file read with the variant's parameter
 * values, then its knob overrides applied and judged by a build in virtual time ({@link TopologyFile#check}),
 * so a bad value is found before anything runs. Errors name the {@code --vary} argument that gave the value.
 */
final class VariantLoader {
    private final Path file;
    private final List<Axis> axes;

    VariantLoader(Path file, List<Axis> axes) {
        this.file = file;
        this.axes = List.copyOf(axes);
    }

    /** The checked topology of {@code v}; a {@link TopologyException} with every problem of this variant. */
    TopologyFile.Checked load(Variant v) {
        if (!v.params().isEmpty()) {
            throw new UsageException("--param: this build has no topology parameters yet");
        }
        try {
            return TopologyFile.check(file, List.of(), v.knobs());
        } catch (TopologyException e) {
            List<String> errors = new ArrayList<>();
            for (String s : e.errors()) {
                errors.add(asVary(s, v));
            }
            throw new TopologyException(errors, e.warnings());
        }
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
