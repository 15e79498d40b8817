package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.run.RunCommand;
import dev.usnet.tools.topology.RunCommandTest.Result;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every topology in the repository's examples/ that can run in virtual time (no TAP or pcap device) runs twice
 * for 20 virtual milliseconds with its own seed (every example's apps connect and move data in it; the bulk
 * examples carry thousands of packets a millisecond, each of whose buffer operations the PARANOID leak detector
 * records with a stack trace, which makes a longer run minutes of the suite): the results without {@code measured} and every file the runs write
 * (captures, histograms) must be byte-identical. New examples are picked up by being there.
 */
class ExamplesDeterminismTest {
    @TempDir
    static Path tmp;

    /** examples/ next to this module (tests run in the module's directory). */
    private static Path examplesDir() {
        Path d = Path.of("").toAbsolutePath().resolveSibling("examples");
        assertTrue(Files.isDirectory(d), "no examples directory at " + d);
        return d;
    }

    private static List<Path> examples() throws IOException {
        try (Stream<Path> s = Files.list(examplesDir())) {
            return s.filter(p -> p.getFileName().toString().endsWith(".yaml")).sorted().toList();
        }
    }

    /** The TAP or pcap device that keeps {@code spec} in real time, or null. */
    private static String externalDevice(TopologySpec spec) {
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof TopologySpec.Tap || d instanceof TopologySpec.Pcap) {
                    return d.kind() + " device " + ns.name() + "/" + d.link().name();
                }
            }
        }
        return null;
    }

    @TestFactory
    Stream<DynamicTest> everyExampleWithoutTapOrPcapRunsTheSameTwiceInVirtualTime() throws IOException {
        List<Path> files = examples();
        List<DynamicTest> tests = new ArrayList<>();
        int runnable = 0;
        for (Path f : files) {
            TopologySpec spec;
            try {
                spec = TopologyFile.load(f);
            } catch (TopologyException e) {
                throw new AssertionError(f + " does not load: " + String.join("; ", e.errors()), e);
            }
            String external = externalDevice(spec);
            if (external == null) {
                runnable++;
            }
            tests.add(DynamicTest.dynamicTest(f.getFileName().toString(), () -> {
                Assumptions.assumeTrue(external == null, external + ": runs in real time only");
                assertSameTwice(f);
            }));
        }
        assertTrue(runnable > 0, "no example in " + examplesDir() + " can run in virtual time: " + files);
        return tests.stream();
    }

    /**
     * Parameters for examples whose defaults are an experiment's full scale: the 8 x 16 MPI cluster's 128 ranks and
     * 120 namespaces take ~25 s per 20 ms run under the PARANOID leak detector; two hosts of four ranks exercise the
     * same devices, kinds and code paths.
     */
    private static final Map<String, List<String>> SCALED_DOWN = Map.of(
            "mpi-cluster.yaml", List.of("--param", "hosts=2", "--param", "ranks_per_host=4", "--param", "mode=netns"));

    private static void assertSameTwice(Path file) throws IOException {
        String name = file.getFileName().toString().replace(".yaml", "");
        Path[] out = {tmp.resolve(name + "-a"), tmp.resolve(name + "-b")};
        Result[] r = new Result[2];
        String[] results = new String[2];
        for (int i = 0; i < 2; i++) {
            // The results file outside the output directory: the directories must hold the same names.
            Path json = tmp.resolve(name + "-" + i + ".json");
            List<String> args = new ArrayList<>(List.of("run", "--clock", "virtual", "--duration", "0.02", "--out",
                    out[i].toString(), "--results", json.toString()));
            args.addAll(SCALED_DOWN.getOrDefault(file.getFileName().toString(), List.of()));
            args.add(file.toString());
            r[i] = RunCommandTest.run(args.toArray(String[]::new));
            // An app that fails or an expectation that does not hold in 20 ms is 1, and must be 1 both times.
            assertTrue(r[i].code() == 0 || r[i].code() == RunCommand.EXIT_APPS_FAILED, file + ": exit " + r[i].code()
                    + "\n" + r[i].out() + r[i].err());
            results[i] = withoutMeasured(json);
        }
        assertEquals(r[0].code(), r[1].code(), file.toString());
        assertEquals(results[0], results[1], file + ": results differ (measured left out)");
        Map<String, byte[]> a = files(out[0]);
        Map<String, byte[]> b = files(out[1]);
        assertEquals(a.keySet(), b.keySet(), file + ": the runs wrote different files");
        for (var e : a.entrySet()) {
            assertArrayEquals(e.getValue(), b.get(e.getKey()), file + ": " + e.getKey() + " differs");
        }
        assertFalse(r[0].err().contains("Exception"), r[0].err());
    }

    /** The results text up to {@code measured}, which must be its last key. */
    private static String withoutMeasured(Path json) throws IOException {
        String s = Files.readString(json);
        int m = s.indexOf("\n  \"measured\" : ");
        assertTrue(m > 0 && s.indexOf("\n  \"", m + 1) < 0, json + ": measured is not the last key\n" + s);
        return s.substring(0, m);
    }

    /** Every file under {@code dir}, by its path relative to it. */
    private static Map<String, byte[]> files(Path dir) throws IOException {
        Map<String, byte[]> m = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return m;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                try {
                    m.put(dir.relativize(p).toString(), Files.readAllBytes(p));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        return m;
    }
}
