package dev.usnet.tools.topology.file;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.tools.cli.IoErrors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * What a {@code kind: replay} device sends: the frames of a pcap file, at the file's relative timestamps divided
 * by {@code rate}, {@code loop} times (0: until the run ends), as tcpreplay sends a capture out of an interface.
 * The device is one end of a veth pair; its peer is an ordinary veth end of the topology. The file is read when
 * the topology file is, so a missing, unreadable or non-Ethernet capture is an error of {@code --check}.
 *
 * @param file the pcap file as the topology file names it (relative to the topology file's directory)
 * @param path where it was read from
 * @param frames its frames, in file order
 * @param loop how many times the file is sent; 0: again and again until the run ends
 * @param rate the time scale: 2 sends twice as fast as captured, 0.5 half as fast (tcpreplay's --multiplier)
 * @param where where the device entry is
 */
public record PcapReplay(String file, Path path, Frames frames, int loop, double rate, Where where) {
    /** The keys of a replay device besides every device's ({@code name}, {@code mac}, {@code mtu}, ...). */
    public static final Set<String> KEYS = Set.of("peer", "file", "loop", "rate");

    /**
     * A capture's frames, held by identity: two replays of one file are the same spec without the records' bytes
     * being compared or hashed.
     */
    public static final class Frames {
        private final List<PcapRecord> records;

        public Frames(List<PcapRecord> records) {
            this.records = List.copyOf(records);
        }

        public List<PcapRecord> records() {
            return records;
        }

        /** When each frame leaves, in nanoseconds after the first, at time scale {@code rate}; never going back. */
        public long[] offsets(double rate) {
            long[] at = new long[records.size()];
            if (records.isEmpty()) {
                return at;
            }
            long t0 = records.getFirst().timestampNanos();
            long prev = 0;
            for (int i = 0; i < at.length; i++) {
                // A capture whose clock stepped back sends the frame at once after the one before, as tcpreplay does.
                long off = Math.round((records.get(i).timestampNanos() - t0) / rate);
                prev = Math.max(prev, off);
                at[i] = prev;
            }
            return at;
        }
    }

    /** How long one pass over the file takes at the replay's rate: from its first frame to its last. */
    public long spanNanos() {
        long[] at = frames.offsets(rate);
        return at.length == 0 ? 0 : at[at.length - 1];
    }

    /**
     * Reads a replay device's own keys ({@code file}, {@code loop}, {@code rate}) and its pcap file, relative to
     * {@code baseDir}; null (reported at the key's line) when something is wrong.
     */
    public static PcapReplay read(YamlMap m, Path baseDir, Problems problems) {
        Long loop = m.integer("loop", 0, Integer.MAX_VALUE);
        Double rate = m.number("rate", 0.001, 1000);
        if (!m.require("file")) {
            return null;
        }
        String f = m.string("file");
        if (f == null) {
            return null;
        }
        Path path = baseDir.resolve(f.trim());
        Frames frames;
        if (!Files.isRegularFile(path)) {
            problems.add(m.where("file"), Files.exists(path) ? path + " is not a regular file"
                    : "no such file " + path + " (a replay's file is relative to the topology file's directory)");
            return null;
        }
        try {
            frames = new Frames(PcapReader.readAll(path));
        } catch (IOException e) {
            problems.add(m.where("file"), "cannot replay " + IoErrors.describe(path, e));
            return null;
        }
        if (m.has("loop") && loop == null || m.has("rate") && rate == null) {
            return null;
        }
        PcapReplay r = new PcapReplay(f.trim(), path, frames, loop == null ? 1 : loop.intValue(),
                rate == null ? 1 : rate, m.where());
        if (r.loop == 0 && r.spanNanos() == 0) {
            problems.add(m.where("loop"), "loop: 0 repeats the file until the run ends, which needs its frames to span"
                    + " some time; " + path.getFileName() + " has " + frames.records().size() + " frame"
                    + (frames.records().size() == 1 ? "" : "s") + " at one instant (give loop a count instead)");
            return null;
        }
        return r;
    }

    /** The directory a topology file's relative input paths are taken from: the file's own. */
    public static Path baseDir(String topologyFile) {
        Path p = Path.of(topologyFile).toAbsolutePath().getParent();
        return p == null ? Path.of("").toAbsolutePath() : p;
    }
}
