package dev.usnet.tools.replay;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.tools.UsageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Replays a fixture: builds its DUT, feeds every frame of every {@code in/<port>.pcap} in global timestamp
 * order at its timestamp (virtual time), runs {@code settle_s} more, and returns what left each port.
 */
public final class Replayer {
    /** The default seed: fixes the random draws (proxy ARP delay, ARP reachable time) of a replay. */
    public static final long DEFAULT_SEED = 1;

    private Replayer() {}

    private record Input(String port, PcapRecord rec, int order) {}

    /** Output per port, timestamps in epoch nanoseconds aligned to the inputs'. */
    public static Map<String, List<PcapRecord>> run(Path fixture, long seed) {
        Scenario sc = Scenario.load(fixture);
        List<Input> inputs = new ArrayList<>();
        int order = 0;
        for (Scenario.Port p : sc.ports()) {
            Path f = fixture.resolve("in").resolve(p.name() + ".pcap");
            if (!Files.exists(f)) {
                continue;
            }
            try {
                for (PcapRecord r : PcapReader.readAll(f)) {
                    inputs.add(new Input(p.name(), r, order++));
                }
            } catch (IOException e) {
                throw new UsageException(e.getMessage(), e);
            }
        }
        Path inDir = fixture.resolve("in");
        if (Files.isDirectory(inDir)) {
            try (var files = Files.list(inDir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    String n = f.getFileName().toString();
                    String port = n.endsWith(".pcap") ? n.substring(0, n.length() - 5) : n;
                    if (sc.ports().stream().noneMatch(p -> p.name().equals(port))) {
                        throw new UsageException(f + ": no port '" + port + "' in scenario.json");
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        inputs.sort(Comparator.comparingLong((Input i) -> i.rec.timestampNanos()).thenComparingInt(i -> i.order));
        long t0 = inputs.isEmpty() ? 0 : inputs.get(0).rec.timestampNanos();
        try (DeviceUnderTest dut = new DeviceUnderTest(sc, seed)) {
            long last = 0;
            for (Input in : inputs) {
                long at = in.rec.timestampNanos() - t0;
                dut.inject(in.port, in.rec.data(), at);
                last = Math.max(last, at);
            }
            dut.scheduler().runUntil(last + (long) ((sc.trailingAdvanceS() + sc.settleS()) * 1e9));
            Map<String, List<PcapRecord>> out = new LinkedHashMap<>();
            for (var e : dut.captured().entrySet()) {
                List<PcapRecord> l = new ArrayList<>();
                for (PcapRecord r : e.getValue()) {
                    l.add(new PcapRecord(r.timestampNanos() + t0, r.data()));
                }
                out.put(e.getKey(), l);
            }
            return out;
        }
    }

    /** Writes {@code OUT/<port>.pcap} for every port. */
    public static void write(Map<String, List<PcapRecord>> out, Path dir) throws IOException {
        Files.createDirectories(dir);
        for (var e : out.entrySet()) {
            try (PcapWriter w = new PcapWriter(dir.resolve(e.getKey() + ".pcap"))) {
                for (PcapRecord r : e.getValue()) {
                    w.write(r.timestampNanos(), r.data(), 0, r.data().length, r.data().length);
                }
            }
        }
    }
}
