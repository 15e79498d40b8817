package dev.usnet.tools.experiment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tcp.TcpTrace;
import dev.usnet.tcp.cc.KernelPreset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The credit-bug experiment at a small scale (1 Gbit/s, a 100-frame receive queue, bursts of 200 segments
 * every 300 ms, 13.5 s of virtual time): deterministic, and the presets differ the way tcp-variants.md explains.
 */
class CreditBugExperimentTest {
    private static final CreditBugExperiment.Params SMALL = CreditBugExperiment.Params.defaults()
            .withRateBps(1_000_000_000L).withQueueLimit(100).withBurstBytes(296_000).withComputeNanos(300_000_000L)
            .withBursts(45);

    private static final Map<KernelPreset, CreditBugExperiment.PresetResult> RESULTS = new EnumMap<>(KernelPreset.class);

    @TempDir
    static Path tmp;

    @BeforeAll
    static void runAllPresets() throws Exception {
        for (CreditBugExperiment.PresetResult r : CreditBugExperiment.run(SMALL, tmp.resolve("all"))) {
            RESULTS.put(r.kernel(), r);
        }
    }

    /** Times (ms after the start) at which a loss episode began: fast recovery or an RTO. */
    private static List<Long> lossEpisodes(CreditBugExperiment.PresetResult r) {
        TcpTrace t = r.trace();
        List<Long> l = new ArrayList<>();
        for (int i = 0; i < t.rows(); i++) {
            if (t.event(i).equals("recovery") || t.event(i).equals("rto")) {
                l.add((t.timeNanos(i) - r.startNanos()) / 1_000_000);
            }
        }
        return l;
    }

    @Test
    void theDefaultsAreWhatTheTopologyFileSays() {
        var d = CreditBugExperiment.Params.defaults();
        assertEquals("credit-bug", d.topology().name());
        assertEquals(List.of(KernelPreset.V3_18, KernelPreset.V3_19, KernelPreset.V4_0, KernelPreset.V4_3), d.kernels());
        assertEquals(1, d.seed());
        assertEquals(300, d.bursts());
        assertEquals(2 << 20, d.burstBytes());
        assertEquals(100_000_000L, d.computeNanos());
        assertEquals(10_000_000_000L, d.rateBps());
        assertEquals(10_000L, d.oneWayDelayNanos());
        assertEquals(1000, d.queueLimit());
        assertEquals(1000, d.hz());
        assertEquals(false, d.gso());
        // The preset and the options become knobs and app settings of the file, for both ends.
        var t = CreditBugExperiment.topologyFor(SMALL.withKnobs(Map.of("usnet.tcp.ai", "per-ack")), KernelPreset.V3_19);
        for (String ns : List.of("node1", "node2")) {
            var knobs = t.namespace(ns).knobs().stream().map(k -> k.key() + "=" + k.value()).toList();
            assertEquals("usnet.tcp.kernel=3.19", knobs.get(knobs.lastIndexOf("usnet.tcp.kernel=3.19")), ns);
            assertTrue(knobs.indexOf("usnet.tcp.ai=per-ack") > knobs.lastIndexOf("usnet.tcp.kernel=3.19"), knobs.toString());
        }
        var host = t.namespace("host").knobs().stream().map(k -> k.key() + "=" + k.value()).toList();
        assertTrue(host.contains("usnet.netem.veth2.rate=1000000000") && host.contains("usnet.netem.veth2.limit=100"),
                host.toString());
    }

    @Test
    void everyBurstCompletesAndFilesAreWritten() throws Exception {
        for (var r : RESULTS.values()) {
            assertEquals(SMALL.bursts(), r.bursts().size(), r.kernel().label());
            assertEquals(SMALL.bursts(), r.completion().getTotalCount());
            String k = r.kernel().label();
            for (String f : List.of("trace-" + k + ".csv", "bursts-" + k + ".csv", "cwnd-" + k + ".png")) {
                assertTrue(Files.size(tmp.resolve("all").resolve(f)) > 1000, f);
            }
            byte[] png = Files.readAllBytes(tmp.resolve("all").resolve("cwnd-" + k + ".png"));
            assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G'}, java.util.Arrays.copyOf(png, 4));
        }
        String summary = Files.readString(tmp.resolve("all").resolve("summary.txt"));
        assertTrue(summary.contains("3.19") && summary.contains("max cwnd jump"), summary);
    }

    @Test
    void sameSeedGivesByteIdenticalTraces() throws Exception {
        var p = SMALL.withKernels(List.of(KernelPreset.V3_19)).withBursts(30);
        CreditBugExperiment.run(p, tmp.resolve("a"));
        CreditBugExperiment.run(p, tmp.resolve("b"));
        for (String f : List.of("trace-3.19.csv", "bursts-3.19.csv", "summary.txt")) {
            assertArrayEquals(Files.readAllBytes(tmp.resolve("a").resolve(f)), Files.readAllBytes(tmp.resolve("b").resolve(f)), f);
        }
    }

    @Test
    void creditBugDumpsCreditInOneAckAndOverflowsTheQueue() {
        var v318 = RESULTS.get(KernelPreset.V3_18);
        var v319 = RESULTS.get(KernelPreset.V3_19);
        var v40 = RESULTS.get(KernelPreset.V4_0);
        var v43 = RESULTS.get(KernelPreset.V4_3);
        // 3.19 pays out snd_cwnd_cnt built up while CUBIC's cnt was large in one ACK; 4.0+ add one packet.
        assertTrue(v319.largestJump() >= 10 * Math.max(v40.largestJump(), v43.largestJump()),
                "3.19 jump " + v319.largestJump() + " vs 4.0 " + v40.largestJump() + ", 4.3 " + v43.largestJump());
        assertTrue(v319.largestJump() > 5 * v318.largestJump());
        assertTrue(v319.queueDrops() > v40.queueDrops() && v319.retransmits() > v40.retransmits(),
                "the dumps overflow the receive queue: 3.19 " + v319.queueDrops() + " drops vs 4.0 " + v40.queueDrops());
    }

    @Test
    void staleEpochMakesPre43KernelsReturnToTheLossPointSooner() {
        List<Long> v318 = lossEpisodes(RESULTS.get(KernelPreset.V3_18));
        List<Long> v319 = lossEpisodes(RESULTS.get(KernelPreset.V3_19));
        List<Long> v40 = lossEpisodes(RESULTS.get(KernelPreset.V4_0));
        List<Long> v43 = lossEpisodes(RESULTS.get(KernelPreset.V4_3));
        String all = "loss episodes (ms): 3.18 " + v318 + ", 3.19 " + v319 + ", 4.0 " + v40 + ", 4.3 " + v43;
        // 4.0's CUBIC epoch keeps running through the idle compute phases, so its target reaches the last
        // loss point (and runs past it) within seconds of wall time; 4.3 counts only the time spent sending.
        assertTrue(v40.size() >= 2, all);
        assertTrue(v43.size() < v40.size(), all);
        // 3.18 credits one ACK, not the packets it covers: slower additive increase, fewer returns to the loss point.
        assertTrue(v318.size() <= v40.size(), all);
        // 3.19's credit dumps overshoot the receive queue again and again.
        assertTrue(v319.size() > v40.size(), all);
    }
}
