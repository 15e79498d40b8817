package dev.usnet.tools.replay;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.tools.cli.IoErrors;
import dev.usnet.tools.cli.UsageException;
import java.io.IOException;
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
        // The DUT first: it checks the scenario's settings, whose errors come before those of the pcaps.
        try (DeviceUnderTest dut = new DeviceUnderTest(sc, seed)) {
            List<Input> inputs = new ArrayList<>();
            int order = 0;
            for (var e : readPorts(fixture, "in", sc).entrySet()) {
                for (PcapRecord r : e.getValue()) {
                    inputs.add(new Input(e.getKey(), r, order++));
                }
            }
            inputs.sort(Comparator.comparingLong((Input i) -> i.rec.timestampNanos()).thenComparingInt(i -> i.order));
            long t0 = inputs.isEmpty() ? 0 : inputs.get(0).rec.timestampNanos();
            long last = 0;
            for (Input in : inputs) {
                long at = in.rec.timestampNanos() - t0;
                dut.inject(in.port, in.rec.data(), at);
                last = Math.max(last, at);
            }
            dut.runUntil(last + (long) ((sc.trailingAdvanceS() + sc.settleS()) * 1e9));
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

    /**
     * Reads {@code FIXTURE/DIR/<port>.pcap} for every port of the scenario. Every fixture holds one file per
     * port in {@code in/} and in {@code expected/} (a header-only pcap when nothing crossed that port), so a
     * missing directory or file is a broken fixture, not an empty port; so is a file for no port.
     */
    public static Map<String, List<PcapRecord>> readPorts(Path fixture, String dir, Scenario sc) {
        Path d = fixture.resolve(dir);
        if (!Files.isDirectory(d)) {
            throw new UsageException(d + ": no such directory (a fixture holds " + dir
                    + "/<port>.pcap for every port in scenario.json)");
        }
        Map<String, List<PcapRecord>> byPort = new LinkedHashMap<>();
        for (Scenario.Port p : sc.ports()) {
            Path f = d.resolve(p.name() + ".pcap");
            if (!Files.isRegularFile(f)) {
                throw new UsageException(f + ": missing (scenario.json has port '" + p.name()
                        + "'; a port with no frames has a header-only pcap)");
            }
            try {
                byPort.put(p.name(), PcapReader.readAll(f));
            } catch (IOException e) {
                throw new UsageException(IoErrors.describe(f, e), e);
            }
        }
        try (var files = Files.list(d)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String n = f.getFileName().toString();
                String port = n.endsWith(".pcap") ? n.substring(0, n.length() - 5) : n;
                if (!byPort.containsKey(port)) {
                    throw new UsageException(f + ": no port '" + port + "' in scenario.json");
                }
            }
        } catch (IOException e) {
            throw new UsageException(IoErrors.describe(d, e), e);
        }
        return byPort;
    }

    /** Writes {@code OUT/<port>.pcap} for every port; a file that cannot be written is a usage error naming why. */
    public static void write(Map<String, List<PcapRecord>> out, Path dir) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UsageException("cannot create " + IoErrors.describe(dir, e), e);
        }
        for (var e : out.entrySet()) {
            Path f = dir.resolve(e.getKey() + ".pcap");
            try (PcapWriter w = new PcapWriter(f)) {
                for (PcapRecord r : e.getValue()) {
                    w.write(r.timestampNanos(), r.data(), 0, r.data().length, r.data().length);
                }
                if (w.failure() != null) {
                    throw w.failure();
                }
            } catch (IOException ex) {
                throw new UsageException("cannot write " + IoErrors.describe(f, ex), ex);
            }
        }
    }
}
