package dev.usnet.tools.compare;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One run of a comparison: a value for every axis (the knob overrides and parameter values that make it) and
 * a seed. Variants with the same values and different seeds share a {@code group}: group 0 is the baseline,
 * every axis at its first value.
 *
 * @param index position in the matrix (groups in order, seeds within a group)
 * @param vary every axis's name and value, in the order the axes were given
 * @param knobs the knob overrides, as {@code --set} takes them ({@code [NS:]KEY=VALUE})
 * @param params the topology parameters' values
 * @param seed the seed, or null for the file's own
 */
record Variant(int index, int group, Map<String, String> vary, List<String> knobs, Map<String, String> params, Long seed) {
    Variant {
        vary = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(vary));
        knobs = List.copyOf(knobs);
        params = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(params));
    }

    /** {@code KEY=VALUE, ...}; {@code (file as is)} when nothing varies. */
    String label() {
        return label(vary);
    }

    static String label(Map<String, String> vary) {
        if (vary.isEmpty()) {
            return "(file as is)";
        }
        List<String> l = new ArrayList<>();
        vary.forEach((k, v) -> l.add(k + "=" + v));
        return String.join(", ", l);
    }

    /**
     * The cartesian product of {@code axes} (the first axis varying slowest) times {@code seeds} (fastest),
     * with {@code fixedKnobs} ({@code --set}) before each variant's own.
     */
    static List<Variant> matrix(List<Axis> axes, List<Long> seeds, List<String> fixedKnobs) {
        List<Variant> out = new ArrayList<>();
        int groups = 1;
        for (Axis a : axes) {
            groups = Math.multiplyExact(groups, a.values().size());
        }
        for (int g = 0; g < groups; g++) {
            Map<String, String> vary = new LinkedHashMap<>();
            List<String> knobs = new ArrayList<>(fixedKnobs);
            Map<String, String> params = new LinkedHashMap<>();
            int rest = g;
            int stride = groups;
            for (Axis a : axes) {
                stride /= a.values().size();
                String v = a.values().get(rest / stride);
                rest %= stride;
                vary.put(a.name(), v);
                if (a.kind() == Axis.Kind.KNOB) {
                    knobs.add(a.knobArgument(v));
                } else {
                    params.put(a.name(), v);
                }
            }
            for (Long s : seeds) {
                out.add(new Variant(out.size(), g, vary, knobs, params, s));
            }
        }
        return out;
    }
}
