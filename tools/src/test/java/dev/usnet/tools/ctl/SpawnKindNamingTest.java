package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.tools.metrics.UsnetCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An app is named by its kind, the file's word, in {@code usnet ctl apps} and {@code /metrics} as in the results: a
 * spawn app is {@code spawn} there too (it was its class's name), with its counters.
 */
class SpawnKindNamingTest {
    @Test
    void aSpawnAppIsSpawnInCtlAppsAndMetrics(@TempDir Path dir) throws Exception {
        try (LiveDaemon d = LiveDaemon.start(LiveDaemon.topology("- {kind: spawn, rate: 200}\n", ""), dir)) {
            assertTrue(LiveDaemon.eventually(10_000, () -> {
                try {
                    return d.app("ctr1.spawn-0", "ops") > 0;
                } catch (Exception e) {
                    return false;
                }
            }), "the spawn app forks");
            JsonNode app = d.ctl(null, "apps").path("data").get(0);
            assertEquals("ctr1.spawn-0", app.path("name").asText());
            assertEquals("spawn", app.path("kind").asText());
            assertTrue(app.path("ops").asLong() > 0, app.toString());

            long ops = -1;
            for (MetricSnapshot s : new UsnetCollector(d.topology(), d.daemon::apps).collect()) {
                if (s.getMetadata().getName().equals("usnet_app_operations")) {
                    for (CounterSnapshot.CounterDataPointSnapshot p : ((CounterSnapshot) s).getDataPoints()) {
                        assertEquals("spawn", p.getLabels().get("kind"));
                        assertEquals("ctr1.spawn-0", p.getLabels().get("app"));
                        ops = (long) p.getValue();
                    }
                }
            }
            assertTrue(ops > 0, "usnet_app_operations of the spawn app: " + ops);
        }
    }
}
