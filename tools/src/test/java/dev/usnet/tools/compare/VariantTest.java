package dev.usnet.tools.compare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.usnet.tools.cli.UsageException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The matrix of variants, and how the table picks the one that differs most. */
class VariantTest {
    @Test
    void theMatrixIsTheProductWithTheFirstAxisSlowestAndSeedsFastest() {
        List<Axis> axes = List.of(Axis.parse(Axis.Kind.KNOB, "host:usnet.forward.cow=full-copy, head-copy"),
                Axis.parse(Axis.Kind.KNOB, "usnet.tcp.kernel=3.18,3.19,4.3"), Axis.parse(Axis.Kind.PARAM, "rtt=1ms"));
        List<Variant> vs = Variant.matrix(axes, List.of(1L, 2L), List.of("usnet.cpu.model=1"));
        assertEquals(12, vs.size());
        Variant v = vs.get(7);
        assertEquals(7, v.index());
        assertEquals(3, v.group());
        assertEquals(2L, v.seed());
        assertEquals(Map.of("host:usnet.forward.cow", "head-copy", "usnet.tcp.kernel", "3.18", "rtt", "1ms"), v.vary());
        assertEquals("host:usnet.forward.cow=head-copy, usnet.tcp.kernel=3.18, rtt=1ms", v.label());
        assertEquals(List.of("usnet.cpu.model=1", "host:usnet.forward.cow=head-copy", "usnet.tcp.kernel=3.18"), v.knobs());
        assertEquals(Map.of("rtt", "1ms"), v.params());
        assertEquals("full-copy 3.18 1", vs.get(0).vary().get("host:usnet.forward.cow") + " "
                + vs.get(0).vary().get("usnet.tcp.kernel") + " " + vs.get(0).seed());
        assertEquals("head-copy 4.3 2", vs.get(11).vary().get("host:usnet.forward.cow") + " "
                + vs.get(11).vary().get("usnet.tcp.kernel") + " " + vs.get(11).seed());
        assertThrows(UsageException.class, () -> Axis.parse(Axis.Kind.KNOB, ":x=1"));
        assertThrows(UsageException.class, () -> Axis.parse(Axis.Kind.PARAM, "=1"));
    }

    @Test
    void theVariantThatDiffersMostHasTheLargestRelativeDifferenceInASimulatedColumn() {
        // Column 0 simulated, column 1 measured (ignored, however different).
        MetricTable t = new MetricTable.Builder("t", List.of("#1", "#2", "#3"), 2)
                .column("p99", false, new double[][] {{100, 100}, {150, 130}, {100, 100}})
                .column("cpu", true, new double[][] {{1, 1}, {1, 1}, {1000, 1000}})
                .build();
        MetricTable.Most m = t.mostDifferent();
        assertEquals(1, m.row());
        assertEquals(0, m.column());
        assertEquals((140.0 - 100) / 140, m.score(), 1e-9);
        assertEquals(140, t.median(1, 0));
        String md = t.markdown(3);
        assertEquals(true, md.contains("| **#2** | **140 (130–150)** | 1 |"), md);
        assertEquals(true, md.contains("Differs most from the baseline: **#2**, in p99: 100 → 140 (+40.0%)."), md);
        assertEquals(true, md.contains("| cpu ‡ |"), md);

        MetricTable same = new MetricTable.Builder("s", List.of("#1", "#2"), 1)
                .column("x", false, new double[][] {{0}, {0}}).build();
        assertNull(same.mostDifferent());
        assertEquals(true, same.markdown(3).contains("No variant differs from the baseline"));
        // A metric only one run has counts as entirely different.
        assertEquals(1.0, MetricTable.relativeDifference(Double.NaN, 5), 0);
        assertEquals(0.0, MetricTable.relativeDifference(Double.NaN, Double.NaN), 0);
        assertEquals("3.142", MetricTable.format(3.14159));
        assertEquals("120", MetricTable.format(120.0));
    }
}
