package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.Pinger;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.run.VirtualRun;
import dev.usnet.tools.topology.RunCommandTest.Result;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A TCP app between namespaces whose links take no time cannot move the virtual clock: {@code usnet run --check}
 * warns about it (for virtual time only), and a virtual run of it ends with an error naming the app and the fix
 * instead of spinning for ever at one instant.
 */
class VirtualClockStallTest {
    /** a -- veth -- host/br0 -- veth -- b, a TCP app from a to b; {@code NETEM} and {@code APP} filled in per case. */
    private static final String FILE = """
            version: 1
            namespaces:
              host:
                devices:
                  - {name: br0, kind: bridge}
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    peer: {namespace: host, name: ha, master: br0NETEM}
                apps:
                  - APP
              b:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.2/24]
                    peer: {namespace: host, name: hb, master: br0}
            """;

    private static String file(String netem, String app) {
        return FILE.replace("NETEM", netem).replace("APP", app);
    }

    private static List<String> virtualClockWarnings(String text, String... knobs) {
        return TopologyFile.check("t.yaml", text, List.of(), List.of(knobs)).virtualClockWarnings();
    }

    @Test
    void checkWarnsAboutTcpAppsWhosePathsTakeNoTimeAndOnlyThem() {
        List<String> w = virtualClockWarnings(file("", "{kind: stream, server: b}"));
        assertEquals(1, w.size(), w.toString());
        assertTrue(w.get(0).startsWith("t.yaml:13: namespaces.a.apps[0]: warning: in virtual time (--clock virtual)"
                + " a.stream-0 (a -> b) cannot move the clock"), w.get(0));
        assertTrue(w.get(0).contains("netem: {rate: 1gbit}") && w.get(0).contains("usnet.cpu.model"), w.get(0));
        assertEquals(1, virtualClockWarnings(file("", "{kind: rr, server: b, count: 10}")).size());
        assertEquals(1, virtualClockWarnings(file("", "{kind: burst, server: b, burst_size: 64k}")).size());
        // A rate or a delay on any link end of the way, the CPU model, or an app that waits on its own timer: fine.
        assertEquals(List.of(), virtualClockWarnings(file(", netem: {rate: 1gbit}", "{kind: stream, server: b}")));
        assertEquals(List.of(), virtualClockWarnings(file(", netem: {delay: 10us}", "{kind: rr, server: b}")));
        assertEquals(List.of(), virtualClockWarnings(file("", "{kind: stream, server: b}"), "host:usnet.cpu.model=1"));
        assertEquals(List.of(), virtualClockWarnings(file("", "{kind: stream, server: b}"), "b:usnet.netem.eth0.delay=1ms"));
        assertEquals(List.of(), virtualClockWarnings(file("", "{kind: stream, server: b, interval: 10ms}")));
        assertEquals(List.of(), virtualClockWarnings(file("", "{kind: burst, server: b, burst_size: 64k, compute: 1ms}")));
        assertEquals(List.of(), virtualClockWarnings(file("", "{kind: ping, to: 198.18.0.2}")));
        // Real time does not care: the warning is kept apart from the others.
        assertEquals(List.of(), TopologyFile.check("t.yaml", file("", "{kind: stream, server: b}"), List.of(), List.of())
                .warnings());
    }

    @Test
    void theCommandLineWarnsOnCheckAndInVirtualTimeButNotForARealTimeRun(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("stall.yaml");
        Files.writeString(f, file("", "{kind: stream, server: b}"));
        Result check = RunCommandTest.run("run", "--check", f.toString());
        assertEquals(0, check.code(), check.out() + check.err());
        assertTrue(check.err().contains("warning: in virtual time (--clock virtual) a.stream-0 (a -> b) cannot move the clock"),
                check.err());
        Result real = RunCommandTest.run("run", "--duration", "0.3", "--out", tmp.resolve("out").toString(), f.toString());
        assertEquals(0, real.code(), real.out() + real.err());
        assertTrue(!real.err().contains("cannot move the clock"), real.err());
    }

    @Test
    void aLargeBurstAtOneInstantThatEndsIsNoStall() {
        // 300 ARP broadcasts at the start, each flooded to 301 ports: 90 000 frames at 0 s, nine times the stall limit
        // here, yet no namespace handles more than about a thousand of them; the run goes on and every ping is answered.
        TopologySpec spec = TopologyFile.parse("t.yaml", PingersOnABridge.FILE, java.util.Map.of("n", "300"));
        VirtualRun.RunResult r = VirtualRun.run(spec, new VirtualRun.Options(1_500_000_000L, null, null)
                .withStallLimits(10_000, dev.usnet.core.time.VirtualScheduler.DEFAULT_TASK_LIMIT));
        assertEquals(300, r.apps().size());
        for (App a : r.apps()) {
            Pinger p = (Pinger) a;
            assertEquals(2, p.sent(), a.label());
            assertEquals(2, p.received(), a.label());
        }
    }

    @Test
    void aVirtualRunThatCannotMoveTheClockEndsWithAnErrorNamingTheAppAndTheFix() {
        TopologySpec spec = TopologyFile.parse("t.yaml", file("", "{kind: stream, server: b}"));
        long t0 = System.nanoTime();
        UsageException e = assertThrows(UsageException.class, () -> VirtualRun.run(spec,
                new VirtualRun.Options(1_000_000_000L, null, null).withStallLimits(2_000, 20_000)));
        String m = e.getMessage();
        assertTrue(m.startsWith("virtual time stalled at 0."), m);
        assertTrue(m.contains("receive backlog of netns "), m);
        // What the namespaces received meanwhile names the protocol and the devices, and from them the cause.
        assertTrue(m.matches("(?s).*since then the namespaces received \\d+ frames \\(TCP [1-9]\\d* segments, ARP 0, ICMP 0,"
                + " UDP 0; 0 broadcast or multicast.*most on (a/eth0|b/eth0|host/ha|host/hb) .*"), m);
        assertTrue(m.contains("TCP: a.stream-0 (a -> b) crosses only links with neither a netem rate nor a delay"), m);
        assertTrue(m.contains("netem: {rate: 1gbit}") && m.contains("--set usnet.cpu.model=1"), m);
        assertTrue(m.contains("t.yaml:13: namespaces.a.apps[0]: a.stream-0 (a -> b) is declared here"), m);
        assertTrue(System.nanoTime() - t0 < 30_000_000_000L, "found in seconds");
        // The same stream with a delay on a's link moves the clock: it sends its 256 KiB and the run goes on.
        VirtualRun.RunResult r = VirtualRun.run(TopologyFile.parse("t.yaml", file(", netem: {delay: 50us}",
                "{kind: stream, server: b, bytes: 256k}")), new VirtualRun.Options(100_000_000L, null, null)
                .withStallLimits(2_000, 20_000));
        assertTrue(r.summary().failed().isEmpty(), r.summary().apps().toString());
        assertEquals(256 * 1024, ((Number) r.results().apps().get(0).get("bytes")).longValue());
    }
}
