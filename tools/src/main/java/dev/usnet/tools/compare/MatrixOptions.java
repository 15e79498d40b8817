package dev.usnet.tools.compare;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What decides a comparison's runs and their results: the topology file (its name as given and its text), the
 * axes, the fixed knobs, the seeds, the duration, the clock and the warm-up. Two {@code --shard} parts belong to
 * one comparison exactly when these are equal; {@code --jobs}, {@code --out} and {@code --allow-app-failures}
 * change nothing that is simulated and are not part of it.
 *
 * @param seeds {@code --seeds}, or null
 * @param seed {@code --seed}, or null
 */
record MatrixOptions(String file, String text, List<String> vary, List<String> param, List<String> set, Integer seeds,
                     Long seed, double duration, String clock, double warmUp) {
    MatrixOptions {
        vary = List.copyOf(vary);
        param = List.copyOf(param);
        set = List.copyOf(set);
    }

    /** The SHA-256 of the file's text, in hex: what a part shows of the file besides its name. */
    String fileSha256() {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** As a part file holds it ({@code command}), keys named after the options; the text apart (see {@link ComparePart}). */
    Map<String, Object> tree() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("file", file);
        m.put("file_sha256", fileSha256());
        m.put("vary", vary);
        m.put("param", param);
        m.put("set", set);
        m.put("seeds", seeds);
        m.put("seed", seed);
        m.put("duration", duration);
        m.put("clock", clock);
        m.put("warm_up", warmUp);
        return m;
    }

    /** The first option in which {@code o} differs, as "--vary [a] vs [b]"; null when equal. */
    String firstDifference(MatrixOptions o) {
        Object[][] pairs = {{"FILE", file, o.file}, {"FILE's content (SHA-256)", fileSha256(), o.fileSha256()},
            {"--vary", vary, o.vary}, {"--param", param, o.param}, {"--set", set, o.set}, {"--seeds", seeds, o.seeds},
            {"--seed", seed, o.seed}, {"--duration", duration, o.duration}, {"--clock", clock, o.clock},
            {"--warm-up", warmUp, o.warmUp}};
        for (Object[] p : pairs) {
            if (!java.util.Objects.equals(p[1], p[2])) {
                return p[0] + " " + show(p[1]) + " vs " + show(p[2]);
            }
        }
        return null;
    }

    private static String show(Object o) {
        if (o instanceof List<?> l) {
            List<String> s = new ArrayList<>();
            l.forEach(x -> s.add(String.valueOf(x)));
            return "[" + String.join(" ", s) + "]";
        }
        return o == null ? "(not given)" : String.valueOf(o);
    }
}
