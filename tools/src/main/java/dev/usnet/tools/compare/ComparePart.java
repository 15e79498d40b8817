package dev.usnet.tools.compare;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.results.Results;
import dev.usnet.tools.results.RunHistograms;
import java.io.IOException;
import java.io.Reader;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * One {@code --shard K/N} run's output, {@code DIR/part.json} (schema {@value #SCHEMA}): the command that made it
 * ({@link MatrixOptions}, with the topology file's text, so the merge needs neither the file nor the shard's
 * machine), the whole matrix (run number, variant and seed of every run, so a merge can check that its parts
 * cover it), and per run of this shard everything a one-machine {@code usnet compare} keeps in memory to write
 * its report: the results as {@code results.json} holds them, the latency histograms (HdrHistogram's compressed
 * encoding, base64), the cwnd series of traced apps, and the run's clock and wall time.
 *
 * <p>The part is written last, to a temporary name and then renamed, so a shard that died leaves no part and the
 * merge says which shard is missing. Numbers are read back with the text they were written with (a decimal as
 * {@link BigDecimal}, an exponent form as {@link Double}), so the merged {@code results.json} is the same text.
 */
record ComparePart(Path dir, Shard shard, MatrixOptions options, List<String> args, List<Row> matrix,
                   Map<Integer, Stored> runs) {
    static final String SCHEMA = "usnet-compare-part/1";
    static final String FILE = "part.json";

    /** One run of the matrix: its 1-based number (as {@code runs/<run>-seed<S>} names it), variant and seed. */
    record Row(int run, Map<String, String> vary, long seed) {}

    /** A run this part ran, as the merge rebuilds it. */
    record Stored(Results results, RunHistograms histograms, Map<String, ComparePlots.CwndSeries> cwnd, long clockNanos,
                  long wallNanos) {
        CompareRunner.Outcome outcome() {
            return new CompareRunner.Outcome(results, histograms, cwnd, clockNanos, wallNanos);
        }
    }

    /** Writes {@code dir/part.json} for {@code done}, this shard's runs of {@code plan}. */
    static Path write(Path dir, Shard shard, MatrixOptions options, List<String> args, List<CompareRunner.Planned> plan,
                      List<CompareRunner.Run> done) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schema", SCHEMA);
        m.put("shard", shard.toString());
        m.put("command", options.tree());
        m.put("args", args);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (CompareRunner.Planned p : plan) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("run", p.variant().index() + 1);
            r.put("vary", p.variant().vary());
            r.put("seed", p.seed());
            rows.add(r);
        }
        m.put("matrix", rows);
        List<Map<String, Object>> runs = new ArrayList<>();
        for (CompareRunner.Run d : done) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("run", d.planned().variant().index() + 1);
            r.put("clock_ns", d.result().clockNanos());
            r.put("wall_ns", d.result().wallNanos());
            Map<String, Object> h = new LinkedHashMap<>();
            h.put("apps", encode(d.result().histograms().apps()));
            h.put("paths", encode(d.result().histograms().paths()));
            r.put("histograms", h);
            Map<String, Object> cwnd = new LinkedHashMap<>();
            d.result().cwnd().forEach((name, c) -> {
                Map<String, Object> s = new LinkedHashMap<>();
                s.put("ms", c.timeMs());
                s.put("cwnd", c.cwnd());
                cwnd.put(name, s);
            });
            r.put("cwnd", cwnd);
            r.put("results", d.result().results().tree());
            runs.add(r);
        }
        m.put("runs", runs);
        m.put("file_text", options.text());
        Path file = dir.resolve(FILE);
        Path tmp = dir.resolve(FILE + ".tmp");
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN)
                .writeValue(tmp.toFile(), m);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return file;
    }

    private static Map<String, String> encode(Map<String, Histogram> hs) {
        Map<String, String> out = new LinkedHashMap<>();
        hs.forEach((k, h) -> {
            if (h != null) {
                ByteBuffer b = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
                int n = h.encodeIntoCompressedByteBuffer(b);
                out.put(k, Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(b.array(), n)));
            }
        });
        return out;
    }

    /** Reads {@code dir/part.json}; a {@link UsageException} naming the file and what is wrong with it. */
    static ComparePart read(Path dir) {
        Path file = dir.resolve(FILE);
        Object tree;
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8);
             JsonParser p = new JsonFactory().createParser(r)) {
            p.nextToken();
            tree = value(p);
        } catch (NoSuchFileException e) {
            throw new UsageException("--merge " + dir + ": no " + FILE + " in it (a shard writes it when all its runs have"
                    + " ended: did this shard finish?)");
        } catch (IOException e) {
            throw new UsageException("--merge " + dir + ": cannot read " + file + ": " + e.getMessage());
        }
        try {
            return parse(dir, tree);
        } catch (ClassCastException | NullPointerException | IllegalArgumentException e) {
            throw new UsageException("--merge " + dir + ": " + file + " is not a usnet compare part (" + SCHEMA + "): "
                    + (e.getMessage() == null ? e.toString() : e.getMessage()));
        }
    }

    @SuppressWarnings("unchecked")
    private static ComparePart parse(Path dir, Object tree) {
        Map<String, Object> m = (Map<String, Object>) tree;
        if (!SCHEMA.equals(m.get("schema"))) {
            throw new IllegalArgumentException("schema is " + m.get("schema"));
        }
        String s = (String) m.get("shard");
        Shard shard = Shard.parse(s);
        Map<String, Object> c = (Map<String, Object>) m.get("command");
        MatrixOptions options = new MatrixOptions((String) c.get("file"), (String) m.get("file_text"),
                (List<String>) c.get("vary"), (List<String>) c.get("param"), (List<String>) c.get("set"),
                c.get("seeds") == null ? null : ((Number) c.get("seeds")).intValue(),
                c.get("seed") == null ? null : ((Number) c.get("seed")).longValue(),
                ((Number) c.get("duration")).doubleValue(), (String) c.get("clock"), ((Number) c.get("warm_up")).doubleValue());
        if (!options.fileSha256().equals(c.get("file_sha256"))) {
            throw new IllegalArgumentException("file_text does not have the recorded file_sha256");
        }
        List<Row> matrix = new ArrayList<>();
        for (Object o : (List<Object>) m.get("matrix")) {
            Map<String, Object> r = (Map<String, Object>) o;
            Map<String, String> vary = new LinkedHashMap<>();
            ((Map<String, Object>) r.get("vary")).forEach((k, v) -> vary.put(k, (String) v));
            matrix.add(new Row(((Number) r.get("run")).intValue(), vary, ((Number) r.get("seed")).longValue()));
        }
        Map<Integer, Stored> runs = new LinkedHashMap<>();
        for (Object o : (List<Object>) m.get("runs")) {
            Map<String, Object> r = (Map<String, Object>) o;
            int run = ((Number) r.get("run")).intValue();
            Results results = results((Map<String, Object>) r.get("results"));
            Map<String, Object> h = (Map<String, Object>) r.get("histograms");
            RunHistograms hist = new RunHistograms(decode((Map<String, Object>) h.get("apps")),
                    decode((Map<String, Object>) h.get("paths")));
            Map<String, ComparePlots.CwndSeries> cwnd = new LinkedHashMap<>();
            ((Map<String, Object>) r.get("cwnd")).forEach((name, v) -> {
                Map<String, Object> series = (Map<String, Object>) v;
                List<Object> ms = (List<Object>) series.get("ms");
                List<Object> cw = (List<Object>) series.get("cwnd");
                double[] t = new double[ms.size()];
                long[] w = new long[cw.size()];
                for (int i = 0; i < t.length; i++) {
                    t[i] = Double.parseDouble(ms.get(i).toString());
                }
                for (int i = 0; i < w.length; i++) {
                    w[i] = ((Number) cw.get(i)).longValue();
                }
                cwnd.put(name, new ComparePlots.CwndSeries(name, t, w));
            });
            if (runs.put(run, new Stored(results, hist, cwnd, ((Number) r.get("clock_ns")).longValue(),
                    ((Number) r.get("wall_ns")).longValue())) != null) {
                throw new IllegalArgumentException("run " + run + " is in it twice");
            }
        }
        List<String> args = new ArrayList<>((List<String>) m.get("args"));
        return new ComparePart(dir, shard, options, args, matrix, runs);
    }

    private static Map<String, Histogram> decode(Map<String, Object> m) {
        Map<String, Histogram> out = new LinkedHashMap<>();
        m.forEach((k, v) -> {
            try {
                Histogram h = Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode((String) v)), 0);
                // Pooling adds the seeds' histograms up; one may reach beyond another's range, as the live ones could.
                h.setAutoResize(true);
                out.put(k, h);
            } catch (java.util.zip.DataFormatException e) {
                throw new IllegalArgumentException("histogram " + k + ": " + e.getMessage());
            }
        });
        return out;
    }

    /** A run's results from their tree ({@link Results#tree()}), so that {@code tree()} gives the same text again. */
    @SuppressWarnings("unchecked")
    static Results results(Map<String, Object> t) {
        if (!Results.SCHEMA.equals(t.get("schema"))) {
            throw new IllegalArgumentException("results schema is " + t.get("schema"));
        }
        Map<String, Map<String, String>> knobs = new LinkedHashMap<>();
        ((Map<String, Object>) t.get("knobs")).forEach((ns, kv) -> {
            Map<String, String> k = new LinkedHashMap<>();
            ((Map<String, Object>) kv).forEach((key, v) -> k.put(key, (String) v));
            knobs.put(ns, k);
        });
        Map<String, String> params = new LinkedHashMap<>();
        ((Map<String, Object>) t.get("params")).forEach((k, v) -> params.put(k, (String) v));
        List<Map<String, Object>> snapshots = t.containsKey("snapshots") ? (List<Map<String, Object>>) t.get("snapshots")
                : List.of();
        return new Results((String) t.get("topology"), (String) t.get("clock"), ((Number) t.get("seed")).longValue(),
                ((Number) t.get("duration_s")).doubleValue(), knobs, (List<Map<String, Object>>) t.get("apps"),
                (List<Map<String, Object>>) t.get("namespaces"), (List<Map<String, Object>>) t.get("paths"),
                (List<Map<String, Object>>) t.get("devices"), (Map<String, Object>) t.get("measured"), params, snapshots,
                t.containsKey("expectations") ? (List<Map<String, Object>>) t.get("expectations") : List.of());
    }

    /**
     * A JSON value as ordered maps, lists, strings, booleans and numbers that print as they were read: an integer
     * as {@link Long} (or {@link java.math.BigInteger}), a decimal as {@link BigDecimal} (its scale kept, "5.000"
     * stays "5.000"), one in exponent form as {@link Double} (Jackson wrote it from a double, with
     * {@link Double#toString}, which reads back to the same double and the same text).
     */
    static Object value(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        if (t == null) {
            throw new IOException("empty file");
        }
        return switch (t) {
            case START_OBJECT -> {
                Map<String, Object> m = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String k = p.currentName();
                    p.nextToken();
                    m.put(k, value(p));
                }
                yield m;
            }
            case START_ARRAY -> {
                List<Object> l = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    l.add(value(p));
                }
                yield l;
            }
            case VALUE_STRING -> p.getText();
            case VALUE_NUMBER_INT -> p.getNumberType() == JsonParser.NumberType.BIG_INTEGER ? p.getBigIntegerValue()
                    : (Object) p.getLongValue();
            case VALUE_NUMBER_FLOAT -> {
                String s = p.getText();
                yield s.indexOf('e') >= 0 || s.indexOf('E') >= 0 ? (Object) Double.parseDouble(s) : new BigDecimal(s);
            }
            case VALUE_TRUE -> Boolean.TRUE;
            case VALUE_FALSE -> Boolean.FALSE;
            case VALUE_NULL -> null;
            default -> throw new IOException("unexpected " + t + " at " + p.currentLocation());
        };
    }
}
