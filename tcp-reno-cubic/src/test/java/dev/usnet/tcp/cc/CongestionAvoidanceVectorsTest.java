package dev.usnet.tcp.cc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The public test vectors of the kernel-version presets (shared/design/tcp-variants.md). */
class CongestionAvoidanceVectorsTest {

    private static List<String> ai(KernelPreset k, long cwnd, long cnt, long[][] calls) {
        CwndState s = new CwndState(cwnd, cnt, 0);
        List<String> out = new ArrayList<>();
        for (long[] c : calls) {
            AdditiveIncrease.apply(s, c[0], c[1], k.switches().ai());
            out.add(s.toString());
        }
        return out;
    }

    private static long[][] repeat(int n, long w, long acked) {
        long[][] r = new long[n][];
        for (int i = 0; i < n; i++) {
            r[i] = new long[] {w, acked};
        }
        return r;
    }

    private static long[][] concat(long[][] a, long[][] b) {
        long[][] r = new long[a.length + b.length][];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    @Test
    void vectorA() {
        for (KernelPreset k : KernelPreset.values()) {
            List<String> r = ai(k, 10, 0, repeat(11, 10, 1));
            for (int i = 1; i <= 9; i++) {
                assertEquals("10/" + i, r.get(i - 1), k + " call " + i);
            }
        }
        assertEquals(List.of("10/10", "11/0"), ai(KernelPreset.V3_18, 10, 0, repeat(11, 10, 1)).subList(9, 11));
        assertEquals(List.of("11/0", "11/1"), ai(KernelPreset.V3_19, 10, 0, repeat(11, 10, 1)).subList(9, 11));
        assertEquals(List.of("11/0", "11/1"), ai(KernelPreset.V4_0, 10, 0, repeat(11, 10, 1)).subList(9, 11));
    }

    @Test
    void vectorB() {
        assertEquals(List.of("10/1", "10/2", "10/3", "10/4", "10/5"), ai(KernelPreset.V3_18, 10, 0, repeat(5, 10, 4)));
        assertEquals(List.of("10/4", "10/8", "11/2", "11/6", "12/0"), ai(KernelPreset.V3_19, 10, 0, repeat(5, 10, 4)));
        assertEquals(List.of("10/4", "10/8", "11/2", "11/6", "12/0"), ai(KernelPreset.V4_0, 10, 0, repeat(5, 10, 4)));
    }

    @Test
    void vectorC() {
        assertEquals(List.of("10/1"), ai(KernelPreset.V3_18, 10, 0, repeat(1, 10, 64)));
        assertEquals(List.of("16/4"), ai(KernelPreset.V3_19, 10, 0, repeat(1, 10, 64)));
        assertEquals(List.of("16/4"), ai(KernelPreset.V4_0, 10, 0, repeat(1, 10, 64)));
    }

    @Test
    void vectorDTheCreditBug() {
        long[][] calls = concat(repeat(40, 50, 1), repeat(4, 2, 1));
        assertEquals("20/40", ai(KernelPreset.V3_18, 20, 0, calls).get(39));
        assertEquals("20/40", ai(KernelPreset.V3_19, 20, 0, calls).get(39));
        assertEquals("20/40", ai(KernelPreset.V4_0, 20, 0, calls).get(39));
        assertEquals(List.of("21/0", "21/1", "21/2", "22/0"), ai(KernelPreset.V3_18, 20, 0, calls).subList(40, 44));
        assertEquals(List.of("40/1", "41/0", "41/1", "42/0"), ai(KernelPreset.V3_19, 20, 0, calls).subList(40, 44));
        assertEquals(List.of("21/1", "22/0", "22/1", "23/0"), ai(KernelPreset.V4_0, 20, 0, calls).subList(40, 44));
    }

    @Test
    void vectorE() {
        assertEquals(List.of("21/0", "21/1", "21/2"), ai(KernelPreset.V3_18, 20, 45, repeat(3, 2, 2)));
        assertEquals(List.of("43/1", "44/1", "45/1"), ai(KernelPreset.V3_19, 20, 45, repeat(3, 2, 2)));
        assertEquals(List.of("22/0", "23/0", "24/0"), ai(KernelPreset.V4_0, 20, 45, repeat(3, 2, 2)));
    }

    @Test
    void vectorI() {
        assertEquals(List.of("10/1", "10/2", "11/0", "11/1"), ai(KernelPreset.V3_18, 10, 0, repeat(4, 2, 2)));
        assertEquals(List.of("11/0", "12/0", "13/0", "14/0"), ai(KernelPreset.V3_19, 10, 0, repeat(4, 2, 2)));
        assertEquals(List.of("11/0", "12/0", "13/0", "14/0"), ai(KernelPreset.V4_0, 10, 0, repeat(4, 2, 2)));
    }

    private static String reno(KernelPreset k, long cwnd, long cnt, long ssthresh, long acked) {
        CwndState s = new CwndState(cwnd, cnt, ssthresh);
        RenoCongAvoid.congAvoid(s, acked, k.switches());
        return s.toString();
    }

    @Test
    void renoVectors() {
        // 6.x slow-starts and caps as 4.3.
        String[] first = {"11/0", "11/2", "11/2", "10/3", "10/3"};
        String[] second = {"11/0", "11/2", "11/2", "10/3", "10/3"};
        KernelPreset[] ks = KernelPreset.values();
        for (int i = 0; i < ks.length; i++) {
            assertEquals(first[i], reno(ks[i], 8, 0, 10, 5), ks[i] + " (8, 0, 10, 5)");
            assertEquals(second[i], reno(ks[i], 10, 0, 10, 3), ks[i] + " (10, 0, 10, 3)");
        }
    }

    @Test
    void clampStopsGrowthButNotTheCountInThreeNineteen() {
        CwndState s = new CwndState(10, 0, 0);
        s.sndCwndClamp = 10;
        AdditiveIncrease.apply(s, 2, 5, CcSwitches.AiMode.ACCUMULATE);
        assertEquals("10/1", s.toString());
        CwndState t = new CwndState(10, 10, 0);
        t.sndCwndClamp = 10;
        AdditiveIncrease.apply(t, 10, 1, CcSwitches.AiMode.PER_ACK);
        assertEquals("10/0", t.toString(), "3.18 resets the count even when the clamp blocked the +1");
    }
}
