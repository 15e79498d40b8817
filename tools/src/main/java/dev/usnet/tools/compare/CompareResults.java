package dev.usnet.tools.compare;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A comparison's {@code results.json} (docs/results.md): {@code {"variants": [{"vary": {...}, "seed": S,
 * "results": {...}}, ...]}}, variants in matrix order, each run's results as {@code usnet run --results} writes
 * them (its {@code measured} last), so the text is the same byte for byte whatever ran in parallel, up to the
 * {@code measured} objects.
 */
final class CompareResults {
    private CompareResults() {}

    static Map<String, Object> tree(List<CompareRunner.Run> runs) {
        List<Map<String, Object>> vs = new ArrayList<>();
        for (CompareRunner.Run r : runs) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("vary", r.planned().variant().vary());
            v.put("seed", r.result().results().seed());
            v.put("results", r.result().results().tree());
            vs.add(v);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("variants", vs);
        return m;
    }

    static String toJson(List<CompareRunner.Run> runs) {
        ObjectMapper om = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);
        try {
            return om.writeValueAsString(tree(runs)) + "\n";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void write(Path file, List<CompareRunner.Run> runs) throws IOException {
        Files.writeString(file, toJson(runs));
    }
}
