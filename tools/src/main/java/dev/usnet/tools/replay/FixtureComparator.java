package dev.usnet.tools.replay;

import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.wire.FrameDescriber;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The conformance rule: port by port, in order, byte for byte, except that an IPv4 packet whose source is
 * one of the DUT's own addresses is compared without its identification and header checksum.
 */
public final class FixtureComparator {
    /** The outcome for one port. */
    public record PortResult(String port, boolean ok, int expected, int actual, int firstDiff, String expectedFrame,
                             String actualFrame) {
        public String line(String fixture) {
            if (ok) {
                return fixture + "/" + port + ": ok (" + expected + " frames)";
            }
            StringBuilder sb = new StringBuilder(fixture + "/" + port + ": DIFFERS expected " + expected
                    + " frames, got " + actual + "; first difference at frame " + firstDiff);
            if (expectedFrame != null) {
                sb.append("\n  expected: ").append(expectedFrame);
            }
            if (actualFrame != null) {
                sb.append("\n  got:      ").append(actualFrame);
            }
            return sb.toString();
        }
    }

    private FixtureComparator() {}

    /** Reads the fixture's {@code expected/<port>.pcap} files; a broken or missing one is a usage error. */
    public static Map<String, List<PcapRecord>> expected(Path fixture, Scenario sc) {
        return Replayer.readPorts(fixture, "expected", sc);
    }

    public static List<PortResult> compare(Scenario sc, Map<String, List<PcapRecord>> expected,
                                           Map<String, List<PcapRecord>> actual) {
        Set<Integer> own = sc.ownIpv4Addresses();
        List<PortResult> results = new ArrayList<>();
        for (Scenario.Port p : sc.ports()) {
            List<PcapRecord> exp = expected.get(p.name());
            List<PcapRecord> got = actual.getOrDefault(p.name(), List.of());
            int n = Math.min(exp.size(), got.size());
            int diff = -1;
            for (int i = 0; i < n; i++) {
                if (!Arrays.equals(normalise(exp.get(i).data(), own), normalise(got.get(i).data(), own))) {
                    diff = i;
                    break;
                }
            }
            if (diff < 0 && exp.size() == got.size()) {
                results.add(new PortResult(p.name(), true, exp.size(), got.size(), -1, null, null));
                continue;
            }
            if (diff < 0) {
                diff = n;
            }
            results.add(new PortResult(p.name(), false, exp.size(), got.size(), diff,
                    diff < exp.size() ? describe(exp.get(diff).data()) : null,
                    diff < got.size() ? describe(got.get(diff).data()) : null));
        }
        return results;
    }

    private static String describe(byte[] f) {
        return FrameDescriber.describe(Unpooled.wrappedBuffer(f), 0, f.length);
    }

    /** Zeroes IP ID and header checksum of IPv4 packets sourced by the DUT. */
    public static byte[] normalise(byte[] f, Set<Integer> own) {
        int off = 14;
        if (f.length < off + 20) {
            return f;
        }
        int type = ((f[12] & 0xff) << 8) | (f[13] & 0xff);
        if (type == 0x8100 && f.length >= 18 + 20) {
            type = ((f[16] & 0xff) << 8) | (f[17] & 0xff);
            off = 18;
        }
        if (type != 0x0800 || (f[off] & 0xf0) != 0x40) {
            return f;
        }
        int src = ((f[off + 12] & 0xff) << 24) | ((f[off + 13] & 0xff) << 16) | ((f[off + 14] & 0xff) << 8) | (f[off + 15] & 0xff);
        if (!own.contains(src)) {
            return f;
        }
        byte[] c = f.clone();
        c[off + 4] = 0;
        c[off + 5] = 0;
        c[off + 10] = 0;
        c[off + 11] = 0;
        return c;
    }
}
