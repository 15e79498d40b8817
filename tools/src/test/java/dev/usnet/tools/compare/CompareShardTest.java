package dev.usnet.tools.compare;

import static dev.usnet.tools.compare.CompareTest.compare;
import static dev.usnet.tools.compare.CompareTest.withoutMeasured;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.tools.Usnet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet compare --shard K/N} and {@code --merge}: three shards of a 2 variants × 2 seeds matrix, merged,
 * give the one-machine run's files byte for byte (up to what the wall clock measured), and parts that do not
 * make one whole comparison are refused before anything is written.
 */
class CompareShardTest {
    @TempDir
    static Path tmp;
    static Path file;
    static Path single;
    static Path merged;
    static final List<Path> PARTS = new ArrayList<>();
    static final List<CompareTest.Result> SHARD_RUNS = new ArrayList<>();
    static CompareTest.Result mergeRun;

    /** The one command: 4 runs (run r is shard r mod 3's: shard 0 has runs 1 and 4), with a warm-up. */
    static List<String> command(String... more) {
        List<String> a = new ArrayList<>(List.of(file.toString(), "--vary", "host:usnet.forward.cow=full-copy,head-copy",
                "--seeds", "2", "--seed", "5", "--duration", "0.2", "--warm-up", "0.05"));
        a.addAll(List.of(more));
        return a;
    }

    @BeforeAll
    static void runOnOneMachineThenInThreeShardsAndMerge() throws IOException {
        file = CompareTest.topology(tmp);
        Path out = tmp.resolve("out");
        CompareTest.Result one = compare(command("--out", out.toString()).toArray(String[]::new));
        assertEquals(0, one.code(), one.out() + one.err());
        single = Files.move(out, tmp.resolve("single"));
        for (int k = 0; k < 3; k++) {
            Path part = tmp.resolve("part" + k);
            PARTS.add(part);
            CompareTest.Result r = compare(command("--shard", k + "/3", "--out", part.toString()).toArray(String[]::new));
            assertEquals(0, r.code(), r.out() + r.err());
            SHARD_RUNS.add(r);
        }
        // Merged into the directory the one-machine run wrote, so its command line in report.md is the same text.
        merged = out;
        mergeRun = compare("--merge", PARTS.get(2).toString(), PARTS.get(0).toString(), PARTS.get(1).toString(),
                "--out", merged.toString());
        assertEquals(0, mergeRun.code(), mergeRun.out() + mergeRun.err());
    }

    @Test
    void eachShardRunsEveryNthRunAfterTheWarmUpAndSaysSo() throws IOException {
        assertTrue(SHARD_RUNS.get(0).err().contains("usnet: compare: 2 variants × 2 seeds = 4 runs of 0.2 virtual seconds;"
                + " shard 0/3 runs 2 of them (run r is shard r mod 3's), 1 at a time"), SHARD_RUNS.get(0).err());
        int[][] runs = {{1, 4}, {2}, {3}};
        for (int k = 0; k < 3; k++) {
            String err = SHARD_RUNS.get(k).err();
            assertTrue(err.contains("usnet: compare: warm-up (the baseline for 0.05 virtual seconds, not counted)"), err);
            JsonNode part = new ObjectMapper().readTree(PARTS.get(k).resolve("part.json").toFile());
            assertEquals("usnet-compare-part/1", part.path("schema").asText());
            assertEquals(k + "/3", part.path("shard").asText());
            assertEquals(4, part.path("matrix").size());
            List<Integer> got = new ArrayList<>();
            part.path("runs").forEach(r -> got.add(r.path("run").asInt()));
            assertEquals(java.util.Arrays.stream(runs[k]).boxed().toList(), got);
            assertFalse(Files.exists(PARTS.get(k).resolve("results.json")), "a part is not a comparison's result");
            assertTrue(SHARD_RUNS.get(k).out().contains("shard " + k + "/3: wrote " + PARTS.get(k).resolve("part.json")),
                    SHARD_RUNS.get(k).out());
        }
        assertTrue(mergeRun.err().contains("usnet: compare: merged 3 parts of 4 runs (2 variants × 2 seeds)"), mergeRun.err());
    }

    @Test
    void aShardBeyondTheRunsWritesAnEmptyPartWithoutWarmingUpAndReplacesAStaleOneWithForce() throws IOException {
        Path part = tmp.resolve("part-empty");
        Files.createDirectories(part);
        Files.writeString(part.resolve("part.json"), "stale");
        CompareTest.Result refused = compare(command("--shard", "4/5", "--out", part.toString()).toArray(String[]::new));
        assertEquals(2, refused.code(), "a directory holding an earlier part is not reused silently: " + refused.err());
        assertTrue(refused.err().contains("is not empty") && refused.err().contains("--force"), refused.err());
        assertEquals("stale", Files.readString(part.resolve("part.json")));
        CompareTest.Result r = compare(command("--shard", "4/5", "--force", "--out", part.toString()).toArray(String[]::new));
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("shard 4/5 runs 0 of them"), r.err());
        assertFalse(r.err().contains("warm-up") || r.err().contains(" done: "), r.err());
        JsonNode p = new ObjectMapper().readTree(part.resolve("part.json").toFile());
        assertEquals(0, p.path("runs").size());
        assertEquals(4, p.path("matrix").size());
    }

    @Test
    void theMergeIsTheOneMachineRunsResultsJsonByteForByteUpToMeasured() throws IOException {
        String a = Files.readString(single.resolve("results.json"));
        String b = Files.readString(merged.resolve("results.json"));
        assertEquals(withoutMeasured(a), withoutMeasured(b));
        assertEquals(4, new ObjectMapper().readTree(b).path("variants").size());
    }

    @Test
    void theMergeIsTheOneMachineRunsReportAndChartsByteForByteUpToMeasured() throws IOException {
        String a = Files.readString(single.resolve("report.md"));
        String b = Files.readString(merged.resolve("report.md"));
        assertTrue(b.contains("usnet compare " + file + " --vary host:usnet.forward.cow=full-copy,head-copy --seeds 2"
                + " --seed 5 --duration 0.2 --warm-up 0.05 --out " + merged + "\n"), b);
        assertTrue(b.contains("‡"), "the report has measured columns to blank out");
        assertEquals(unmeasured(a), unmeasured(b));
        TreeMap<String, byte[]> x = files(single);
        TreeMap<String, byte[]> y = files(merged);
        assertEquals(x.keySet(), y.keySet());
        for (String f : x.keySet()) {
            if (f.endsWith(".png") && !f.equals("cpu-measured.png")) {
                assertArrayEquals(x.get(f), y.get(f), f);
            }
        }
        assertTrue(x.containsKey("cwnd-a.stream-0.png") && x.containsKey("latency-app-a.rr-0.png"), x.keySet().toString());
    }

    @Test
    void eachRunsOwnFilesEndUpWhereTheOneMachineRunPutsThem() throws IOException {
        TreeMap<String, byte[]> x = files(single.resolve("runs"));
        TreeMap<String, byte[]> y = files(merged.resolve("runs"));
        assertEquals(x.keySet(), y.keySet());
        assertTrue(x.keySet().stream().anyMatch(f -> f.startsWith("4-seed6/")), x.keySet().toString());
        assertTrue(x.keySet().stream().anyMatch(f -> f.startsWith("warm-up/")), x.keySet().toString());
        for (String f : x.keySet()) {
            if (!f.startsWith("warm-up/")) {
                assertArrayEquals(x.get(f), y.get(f), f);
            }
        }
    }

    @Test
    void aShardOutOfRangeOrMalformedOrAnOutThatCannotBeWrittenIsRefusedBeforeAnyRun() throws IOException {
        Path out = tmp.resolve("refused");
        Path aFile = Files.writeString(tmp.resolve("plain-file"), "x");
        String[][] bad = {{"--shard", "3/3", "--out", out.toString(), "--shard 3/3: K must be 0..2 (shards are counted from 0), got 3"},
            {"--shard", "-1/3", "--out", out.toString(), "K must be 0..2"},
            {"--shard", "1", "--out", out.toString(), "--shard 1: expected K/N, the K-th (from 0) of N parts"},
            {"--shard", "0/0", "--out", out.toString(), "--shard 0/0: N must be 1..10000, got 0"},
            {"--shard", "0/2", "--out", aFile.resolve("sub").toString(), "--out " + aFile.resolve("sub") + ": " + aFile
                    + " is not a directory"}};
        for (String[] b : bad) {
            CompareTest.Result r = compare(command(java.util.Arrays.copyOf(b, 4)).toArray(String[]::new));
            assertEquals(Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
            assertTrue(r.err().contains(b[4]), r.err());
            assertFalse(r.err().contains(" done: ") || r.err().contains("warm-up"), r.err());
        }
        assertFalse(Files.exists(out), "nothing is written");
    }

    @Test
    void partsThatAreNotOneWholeComparisonAreRefusedWithNothingWritten() throws IOException {
        Path p0 = PARTS.get(0);
        Path p1 = PARTS.get(1);
        Path p2 = PARTS.get(2);
        // A part of another command: the same shard 2/3 of a comparison with another --duration.
        Path other = tmp.resolve("other");
        Files.createDirectories(other);
        String text = Files.readString(p2.resolve("part.json"));
        assertTrue(text.contains("\"duration\" : 0.2,"), text.substring(0, 600));
        Files.writeString(other.resolve("part.json"), text.replace("\"duration\" : 0.2,", "\"duration\" : 0.5,"));
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        Path out = tmp.resolve("never");
        String[][] bad = {
            {p0.toString(), p1.toString(), "--merge: shard 2/3 of 3 is missing (give every part's --out directory)"},
            {p0.toString(), p1.toString(), p1.toString(), p2.toString(), "--merge: shard 1/3 is given twice: " + p1 + " and " + p1},
            {p0.toString(), p1.toString(), other.toString(), "--merge: " + other + " and " + p0
                    + " are parts of different comparisons: --duration 0.2 vs 0.5"},
            {p0.toString(), p1.toString(), empty.toString(), "--merge " + empty + ": no part.json in it"},
            {p0.toString(), p1.toString(), p2.toString(), "--vary", "x=1,2", "--merge takes the topology and the matrix"
                    + " from the parts; do not give --vary"},
            {p0.toString(), p1.toString(), p2.toString(), "--out", p1.toString(), "--out " + p1 + " is one of the parts"}};
        for (String[] b : bad) {
            List<String> args = new ArrayList<>(List.of("--merge"));
            args.addAll(List.of(b).subList(0, b.length - 1));
            if (!args.contains("--out")) {
                args.addAll(List.of("--out", out.toString()));
            }
            CompareTest.Result r = compare(args.toArray(String[]::new));
            assertEquals(Usnet.EXIT_USAGE, r.code(), String.join(" ", args) + ": " + r.out() + r.err());
            assertTrue(r.err().contains(b[b.length - 1]), r.err());
            assertFalse(r.err().contains("Exception"), r.err());
        }
        assertFalse(Files.exists(out), "nothing is written");
        assertFalse(Files.exists(p1.resolve("results.json")), "nothing is written into a part");
    }

    /** report.md with every cell of a measured column (‡, and the variants' wall s and speed) replaced by ~. */
    static String unmeasured(String md) {
        StringBuilder b = new StringBuilder();
        List<Integer> blank = null;
        for (String line : md.split("\n", -1)) {
            if (!line.startsWith("|")) {
                blank = null;
                b.append(line).append('\n');
                continue;
            }
            String[] cells = line.split("\\|", -1);
            if (blank == null) {
                blank = new ArrayList<>();
                for (int i = 0; i < cells.length; i++) {
                    String c = cells[i].trim();
                    if (c.endsWith("‡") || c.equals("wall s") || c.equals("speed")) {
                        blank.add(i);
                    }
                }
            } else if (!line.startsWith("|---")) {
                for (int i : blank) {
                    cells[i] = " ~ ";
                }
            }
            b.append(String.join("|", cells)).append('\n');
        }
        return b.toString();
    }

    /** Every file under {@code dir} by its relative path, with its bytes. */
    static TreeMap<String, byte[]> files(Path dir) throws IOException {
        TreeMap<String, byte[]> m = new TreeMap<>();
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (Files.isRegularFile(p)) {
                    m.put(dir.relativize(p).toString(), Files.readAllBytes(p));
                }
            }
        }
        return m;
    }
}
