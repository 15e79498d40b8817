package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.topology.file.PcapMatch;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The byte-for-byte comparison of a capture check: the conformance masking rule, its options, and what it reports. */
class PcapMatchTest {
    private static final int OWN = Ipv4Addr.parse("198.18.26.1");

    /** An Ethernet + IPv4 + UDP frame from {@code src} with this ID, TTL and header checksum. */
    private static byte[] udp(String src, int id, int ttl, int csum) {
        byte[] f = new byte[14 + 20 + 8 + 4];
        f[12] = 0x08;
        f[14] = 0x45;
        f[17] = 32;
        f[18] = (byte) (id >> 8);
        f[19] = (byte) id;
        f[22] = (byte) ttl;
        f[23] = 17;
        f[24] = (byte) (csum >> 8);
        f[25] = (byte) csum;
        int s = Ipv4Addr.parse(src);
        for (int i = 0; i < 4; i++) {
            f[26 + i] = (byte) (s >>> (24 - 8 * i));
            f[30 + i] = (byte) (198 - i * 180);
        }
        f[34] = 0x13;
        f[36] = 0x00;
        f[37] = 0x35;
        return f;
    }

    private static List<PcapRecord> frames(long[] times, byte[]... f) {
        List<PcapRecord> l = new java.util.ArrayList<>();
        for (int i = 0; i < f.length; i++) {
            l.add(new PcapRecord(times[i], f[i]));
        }
        return l;
    }

    private static List<PcapRecord> frames(byte[]... f) {
        return frames(new long[f.length], f);
    }

    @Test
    void ownPacketsAreComparedWithoutIdAndChecksumOthersWithThem() {
        PcapMatch m = new PcapMatch(Set.of(OWN), false, -1);
        assertNull(m.difference(frames(udp("198.18.26.1", 1, 64, 0x1111)), frames(udp("198.18.26.1", 2, 64, 0x2222))));
        assertEquals("frame 1 differs at byte 19 (ip.id): expected 1 (0x0001), got 2 (0x0002)",
                m.difference(frames(udp("198.19.0.1", 1, 64, 0x1111)), frames(udp("198.19.0.1", 2, 64, 0x1111)))
                        .lines().findFirst().orElseThrow());
    }

    @Test
    void ttlIsComparedUnlessMasked() {
        List<PcapRecord> want = frames(udp("198.19.0.1", 7, 63, 0x1111));
        List<PcapRecord> got = frames(udp("198.19.0.1", 7, 64, 0x1011));
        String d = new PcapMatch(Set.of(OWN), false, -1).difference(want, got);
        assertTrue(d.startsWith("frame 1 differs at byte 22 (ip.ttl): expected 63 (0x3f), got 64 (0x40)\n  expected: "), d);
        assertNull(new PcapMatch(Set.of(OWN), true, -1).difference(want, got));
    }

    @Test
    void countsAndTimesAreReported() {
        byte[] a = udp("198.19.0.1", 1, 64, 0x1111);
        byte[] b = udp("198.19.0.1", 2, 64, 0x1111);
        PcapMatch m = new PcapMatch(Set.of(), false, 1000);
        String fewer = m.difference(frames(a, b), frames(a));
        assertTrue(fewer.startsWith("the capture has 1 frame, expected 2; the first 1 agree\n  first missing, frame 2: "), fewer);
        String more = m.difference(frames(a), frames(a, b));
        assertTrue(more.startsWith("the capture has 2 frames, expected 1; the first 1 agree\n  first extra, frame 2: "), more);
        assertNull(m.difference(frames(new long[] {5_000, 6_000}, a, b), frames(new long[] {0, 1_500}, a, b)),
                "times since the first frame, within 1 us");
        String late = m.difference(frames(new long[] {0, 1_000}, a, b), frames(new long[] {0, 2_001}, a, b));
        assertTrue(late.startsWith("frame 2 is at 0.000002 s after the first frame, expected 0.000001 s"), late);
    }

    @Test
    void fieldsAreNamedAsWiresharkNamesThem() {
        byte[] f = udp("198.19.0.1", 1, 64, 0x1111);
        assertEquals("eth.dst", PcapMatch.fieldAt(f, 3));
        assertEquals("eth.type", PcapMatch.fieldAt(f, 13));
        assertEquals("ip.checksum", PcapMatch.fieldAt(f, 25));
        assertEquals("ip.src", PcapMatch.fieldAt(f, 29));
        assertEquals("udp.dstport", PcapMatch.fieldAt(f, 37));
        assertEquals("udp.payload", PcapMatch.fieldAt(f, 43));
        assertEquals("198.19.0.1", PcapMatch.valueAt(f, 27));
    }
}
