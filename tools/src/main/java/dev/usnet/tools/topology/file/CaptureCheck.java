package dev.usnet.tools.topology.file;

import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.tools.cli.IoErrors;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.Capture;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.PcapReplay;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.Where;
import dev.usnet.tools.topology.file.YamlMap;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * An {@code expect:} item on a capture of the run (docs/topology.md, "Packet-level tests"):
 * <pre>
 * - capture: NS/DEV                 # or the capture's file: name
 *   count: {filter: "tcp and dst port 80", equals: 3}     # or min: N, or max: N
 * - capture: NS/DEV
 *   matches: expected.pcap          # or {file: expected.pcap, mask: [ttl], timestamps: 1ms}
 * </pre>
 * {@code count} counts the capture's frames that pass a {@link CaptureFilter}; {@code matches} compares the capture
 * with a pcap file by the conformance rule ({@link PcapMatch}). It is an {@link Expectation} of kind
 * {@code capture} whose value the run computes from the capture file once it is closed
 * ({@link ExpectationVerdicts}).
 *
 * @param capture the capture as the item names it
 * @param filter for {@code count}: the filter; null for {@code matches}
 * @param expected for {@code matches}: the expected pcap's frames, read with the topology file
 * @param expectedFile for {@code matches}: the expected file as named
 * @param maskTtl for {@code matches}: compare without TTLs ({@code mask: [ttl]})
 * @param timeToleranceNanos for {@code matches}: compare frame times within this; -1: not compared
 */
public record CaptureCheck(String capture, CaptureFilter filter, PcapReplay.Frames expected, String expectedFile,
                           boolean maskTtl, long timeToleranceNanos) {
    static final Set<String> KEYS = Set.of("capture", "count", "matches");
    static final Set<String> COUNT_KEYS = Set.of("filter", "equals", "min", "max");
    static final Set<String> MATCH_KEYS = Set.of("file", "mask", "timestamps");

    /** The outcome of one check on a run: the value ({@code count}: frames; {@code matches}: 1 or 0) and what differed. */
    public record Outcome(BigDecimal value, String detail) {}

    /** Reads a mapping item of {@code expect:} into an expectation of kind {@code capture}; null when wrong (reported). */
    public static Expectation read(YamlMap m, Path baseDir, Problems problems) {
        m.allow(KEYS);
        boolean count = m.has("count");
        boolean matches = m.has("matches");
        if (count == matches) {
            problems.add(m.where(), count ? "a capture expectation has count: or matches:, not both"
                    : "expected count: {filter: ..., equals|min|max: N} or matches: FILE.pcap beside capture:");
        }
        if (!m.require("capture")) {
            return null;
        }
        String cap = m.string("capture");
        if (cap == null || count == matches) {
            return null;
        }
        cap = cap.trim();
        if (count) {
            YamlMap c = m.map("count");
            if (c == null) {
                return null;
            }
            c.allow(COUNT_KEYS);
            CaptureFilter filter = null;
            if (c.require("filter")) {
                String f = c.string("filter");
                if (f != null) {
                    try {
                        filter = CaptureFilter.parse(f);
                    } catch (IllegalArgumentException e) {
                        problems.add(c.where("filter"), e.getMessage() + " in \"" + f + "\"");
                    }
                }
            }
            List<String> bounds = new ArrayList<>();
            for (String k : List.of("equals", "min", "max")) {
                if (c.has(k)) {
                    bounds.add(k);
                }
            }
            if (bounds.size() != 1) {
                problems.add(c.where(), bounds.isEmpty() ? "expected one of equals: N, min: N, max: N"
                        : "expected one of equals, min, max, got " + String.join(" and ", bounds));
                return null;
            }
            Long n = c.integer(bounds.getFirst(), 0, Long.MAX_VALUE);
            if (filter == null || n == null) {
                return null;
            }
            String op = switch (bounds.getFirst()) {
                case "equals" -> "==";
                case "min" -> ">=";
                default -> "<=";
            };
            String text = "capture " + cap + " count \"" + filter + "\" " + op + " " + n;
            return new Expectation("capture", cap, "count", op, BigDecimal.valueOf(n), text, m.where(),
                    new CaptureCheck(cap, filter, null, null, false, -1));
        }
        String file;
        boolean maskTtl = false;
        long tolerance = -1;
        Where fileWhere;
        if (m.node("matches") instanceof org.snakeyaml.engine.v2.nodes.MappingNode) {
            YamlMap mm = m.map("matches");
            mm.allow(MATCH_KEYS);
            if (!mm.require("file")) {
                return null;
            }
            file = mm.string("file");
            fileWhere = mm.where("file");
            for (YamlMap.Item it : mm.list("mask")) {
                String s = mm.scalar(it.node(), it.where(), "a field to leave out: ttl");
                if (s != null && s.trim().equals("ttl")) {
                    maskTtl = true;
                } else if (s != null) {
                    problems.add(it.where(), "expected ttl (the IP ID and header checksum of the topology's own packets"
                            + " are always left out), got \"" + s + "\"");
                }
            }
            String ts = mm.string("timestamps");
            if (ts != null) {
                try {
                    tolerance = NetemParams.parseTime("timestamps", ts);
                } catch (IllegalArgumentException e) {
                    problems.add(mm.where("timestamps"), e.getMessage());
                }
            }
        } else {
            file = m.string("matches");
            fileWhere = m.where("matches");
        }
        if (file == null) {
            return null;
        }
        file = file.trim();
        Path path = baseDir.resolve(file);
        PcapReplay.Frames frames;
        try {
            if (!Files.isRegularFile(path)) {
                problems.add(fileWhere, Files.exists(path) ? path + " is not a regular file"
                        : "no such file " + path + " (the expected pcap is relative to the topology file's directory)");
                return null;
            }
            frames = new PcapReplay.Frames(PcapReader.readAll(path));
        } catch (IOException e) {
            problems.add(fileWhere, "cannot read the expected capture " + IoErrors.describe(path, e));
            return null;
        }
        String text = "capture " + cap + " matches " + file + (maskTtl ? " without ttl" : "")
                + (tolerance == 0 ? " with exact times" : tolerance > 0 ? " with times within " + NetemParams.formatTime(tolerance) : "");
        return new Expectation("capture", cap, "matches", "==", BigDecimal.ONE, text, m.where(),
                new CaptureCheck(cap, null, frames, file, maskTtl, tolerance));
    }

    /**
     * The capture a check names: one whose {@code file:} is {@code capture}, else the one capture of the device
     * {@code NS/DEV}. Null after reporting at {@code w} when there is no such capture, or more than one.
     */
    public static Capture find(TopologySpec spec, String capture, Where w, Problems p) {
        List<String> all = new ArrayList<>();
        List<Capture> onDevice = new ArrayList<>();
        int slash = capture.indexOf('/');
        for (Ns ns : spec.namespaces()) {
            for (Capture c : ns.captures()) {
                all.add(ns.name() + "/" + c.device() + " (" + c.file() + ")");
                if (c.file().equals(capture)) {
                    return c;
                }
                if (slash > 0 && ns.name().equals(capture.substring(0, slash)) && c.device().equals(capture.substring(slash + 1))) {
                    onDevice.add(c);
                }
            }
        }
        if (onDevice.size() == 1) {
            return onDevice.getFirst();
        }
        if (p != null) {
            p.add(w.child("capture"), onDevice.isEmpty()
                    ? "no capture '" + capture + "' (name one of the namespaces' captures: as NS/DEV or by its file; "
                            + (all.isEmpty() ? "this file has none" : String.join(", ", all)) + ")"
                    : capture + " has " + onDevice.size() + " captures; name one by its file ("
                            + String.join(", ", onDevice.stream().map(Capture::file).toList()) + ")");
        }
        return null;
    }

    /** Every address the topology gives its namespaces' devices: the sources of the packets usnet itself makes. */
    public static Set<Integer> ownAddresses(TopologySpec spec) {
        Set<Integer> own = new HashSet<>();
        for (Ns ns : spec.namespaces()) {
            for (Addr a : spec.addresses(ns.name())) {
                own.add(a.ip());
            }
        }
        return own;
    }

    /** Judges this check on the closed capture file {@code file} of a run of {@code spec}. */
    public Outcome judge(TopologySpec spec, Path file) {
        List<PcapRecord> got;
        try {
            // A capture stopped by a full disk keeps what was written before, up to a torn last record.
            got = PcapReader.readComplete(file);
        } catch (IOException e) {
            return new Outcome(null, "cannot read the capture " + IoErrors.describe(file, e));
        }
        if (filter != null) {
            long n = 0;
            for (PcapRecord r : got) {
                if (filter.matches(r.data())) {
                    n++;
                }
            }
            return new Outcome(BigDecimal.valueOf(n), null);
        }
        String diff = new PcapMatch(ownAddresses(spec), maskTtl, timeToleranceNanos).difference(expected.records(), got);
        return new Outcome(diff == null ? BigDecimal.ONE : BigDecimal.ZERO, diff);
    }
}
