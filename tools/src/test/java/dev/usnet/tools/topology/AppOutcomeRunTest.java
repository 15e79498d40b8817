package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.DropReason;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.run.RunCommand;
import dev.usnet.tools.topology.RunCommandTest.Result;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet run}'s exit: every app's outcome on its line, exit 1 when one failed (0 with
 * --allow-app-failures), the drop table with an explanation per reason that occurred, and device counters that
 * match the traffic. In-JVM namespaces only.
 */
class AppOutcomeRunTest {

    /** a 198.18.0.1 and b 198.18.0.2 on one veth pair; apps follow under a's {@code apps:}. */
    private static final String PAIR = """
            namespaces:
              b: {}
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    peer: {namespace: b, name: eth0, mac: 02:00:00:00:00:02, addresses: [198.18.0.2/24]}
                apps:
            """;

    private static Result run(Path tmp, String yaml, String... args) throws IOException {
        Path f = tmp.resolve("t.yaml");
        Files.writeString(f, yaml);
        String[] all = new String[args.length + 6];
        all[0] = "run";
        all[1] = "--warm-up-frames";
        all[2] = "0";
        all[3] = "--out";
        all[4] = tmp.resolve("out").toString();
        System.arraycopy(args, 0, all, 5, args.length);
        all[all.length - 1] = f.toString();
        return RunCommandTest.run(all);
    }

    @Test
    void aGoodRunIsOkEverywhereExitsZeroAndCountsEveryEchoOnBothDevices(@TempDir Path tmp) throws IOException {
        Result r = run(tmp, PAIR + """
                      - {kind: ping, to: 198.18.0.2, interval: 0.05}
                """, "--duration", "1");
        assertEquals(0, r.code(), r.out() + r.err());
        assertEquals("", r.err());
        Matcher m = Pattern.compile("usnet: a: ping 198\\.18\\.0\\.2: (\\d+) sent, (\\d+) received(?:, (\\d+) unanswered at"
                + " the end \\([^)]*\\))?, 0% loss, rtt .*; ok\n").matcher(r.out());
        assertTrue(m.find(), r.out());
        long sent = Long.parseLong(m.group(1));
        long received = Long.parseLong(m.group(2));
        long late = m.group(3) == null ? 0 : Long.parseLong(m.group(3));
        // Every echo is answered except, at most, the one sent just before the stop: ping stops as an interrupted
        // ping does, and on a loaded machine (RTT p99 of a few ms here) that last reply can still be on its way; it
        // is counted apart, not as loss.
        assertTrue(sent >= 10 && received >= sent - 1 && received + late == sent, r.out());
        assertFalse(r.out().contains("failed"), r.out());
        assertTrue(r.out().contains("usnet: drops: none\n"), r.out());
        // No TAP, pcap or kernel namespace: the run needed no privilege, so giving them up is not news.
        assertFalse(r.out().contains("capabilit"), r.out());
        // Each echo is a 98-byte frame (14 Ethernet, 20 IP, 8 ICMP, 56 payload); besides them only ARP's two.
        long[] a = device(r.out(), "a/eth0");
        long[] b = device(r.out(), "b/eth0");
        assertTrue(a[TX_PACKETS] >= sent && a[TX_PACKETS] <= sent + 2, r.out());
        assertTrue(a[RX_PACKETS] >= received && a[RX_PACKETS] <= received + 2, r.out());
        assertTrue(a[TX_BYTES] >= 98 * sent && a[TX_BYTES] <= 98 * sent + 2 * 60, r.out());
        assertEquals(a[TX_PACKETS], b[RX_PACKETS], "a veth pair loses nothing: " + r.out());
        assertEquals(a[TX_BYTES], b[RX_BYTES], r.out());
        assertEquals(b[TX_PACKETS], a[RX_PACKETS], r.out());
        assertEquals(0, a[RX_DROPPED] + a[TX_DROPPED] + b[RX_DROPPED] + b[TX_DROPPED], r.out());
    }

    /**
     * Every frame a sends is lost (its neighbour is static, so the loss is the SYNs'); one SYN retry: the
     * connect gives up 3 s in (SYN, retry after the 1 s initial RTO, 2 s backed off).
     */
    private static final String UNREACHABLE = """
            namespaces:
              b: {}
              a:
                knobs:
                  net.ipv4.tcp_syn_retries: 1
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    netem: {loss: 100%}
                    peer: {namespace: b, name: eth0, mac: 02:00:00:00:00:02, addresses: [198.18.0.2/24]}
                neighbours:
                  - 198.18.0.2 lladdr 02:00:00:00:00:02 dev eth0
                apps:
                  - {kind: stream, server: b, bytes: 1m}
            """;

    @Test
    void aTcpAppWhoseSynsAreNeverAnsweredFailsTheRunWithTheReason(@TempDir Path tmp) throws IOException {
        Result r = run(tmp, UNREACHABLE, "--duration", "3.8");
        assertEquals(RunCommand.EXIT_APPS_FAILED, r.code(), r.out() + r.err());
        String reason = "never connected: SYN retries exhausted (net.ipv4.tcp_syn_retries), ETIMEDOUT";
        assertTrue(Pattern.compile("usnet: a: stream client \\S+->198\\.18\\.0\\.2:5001: .*; FAILED: " + Pattern.quote(reason) + "\n")
                .matcher(r.out()).find(), r.out());
        assertTrue(r.out().contains("usnet: b: stream server 0.0.0.0:5001->-: ")
                && r.out().contains("; FAILED: no connection: the client never reached 0.0.0.0:5001\n"), r.out());
        assertTrue(r.err().contains("usnet: 1 of 1 app failed: a: stream to 198.18.0.2:5001 (server in b): " + reason + "\n"),
                r.err());
        // The two SYNs, lost by link emulation: in the drop table with what the reason means.
        assertEquals(2, drops(r.out(), "a", DropReason.NETEM_LOSS), r.out());
        assertTrue(r.out().contains("usnet: drop reasons:\nusnet:   NETEM_LOSS  " + DropReason.NETEM_LOSS.description() + "\n"),
                r.out());
        long[] a = device(r.out(), "a/eth0");
        assertEquals(2, a[TX_DROPPED], r.out());
        assertEquals(0, a[TX_PACKETS], r.out());
        assertEquals(0, device(r.out(), "b/eth0")[RX_PACKETS], r.out());
    }

    @Test
    void allowAppFailuresKeepsExitZeroAndStillSaysWhatFailed(@TempDir Path tmp) throws IOException {
        Result r = run(tmp, UNREACHABLE, "--duration", "1", "--allow-app-failures");
        assertEquals(0, r.code(), r.out() + r.err());
        String reason = "never connected: still connecting (SYN unanswered) when stopped";
        assertTrue(r.out().contains("; FAILED: " + reason + "\n"), r.out());
        assertTrue(r.out().contains("usnet: 1 of 1 app failed (--allow-app-failures: exit 0): a: stream to 198.18.0.2:5001"
                + " (server in b): " + reason + "\n"), r.out());
        assertEquals("", r.err());
    }

    @Test
    void aPingThatIsNeverAnsweredFailsAndTheRouterShowsWhy(@TempDir Path tmp) throws IOException {
        // b forwards but has no route to 198.18.9.0/24: every echo ends at b.
        String yaml = """
                namespaces:
                  b:
                    knobs: {net.ipv4.ip_forward: 1}
                  a:
                    devices:
                      - name: eth0
                        kind: veth
                        addresses: [198.18.0.1/24]
                        peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24]}
                    routes:
                      - default via 198.18.0.2
                    apps:
                      - {kind: ping, to: 198.18.9.9, interval: 0.05}
                      - {kind: ping, to: 198.18.0.2, interval: 0.05}
                """;
        Result r = run(tmp, yaml, "--duration", "1");
        assertEquals(RunCommand.EXIT_APPS_FAILED, r.code(), r.out() + r.err());
        Matcher m = Pattern.compile("usnet: a: ping 198\\.18\\.9\\.9: (\\d+) sent, 0 received, 100% loss; FAILED: no replies: 0 of"
                + " (\\d+) echoes answered\n").matcher(r.out());
        assertTrue(m.find(), r.out());
        long sent = Long.parseLong(m.group(1));
        assertEquals(sent, Long.parseLong(m.group(2)));
        assertTrue(Pattern.compile("usnet: a: ping 198\\.18\\.0\\.2: \\d+ sent, \\d+ received, .*; ok\n").matcher(r.out()).find(),
                r.out());
        assertTrue(r.err().contains("usnet: 1 of 2 apps failed: a: ping 198.18.9.9: no replies: 0 of " + sent
                + " echoes answered\n"), r.err());
        // Stopping the ping may leave its last echo on the way.
        long noRoute = drops(r.out(), "b", DropReason.IP_NOROUTE);
        assertTrue(noRoute >= sent - 1 && noRoute <= sent, noRoute + " of " + sent + ": " + r.out());
        assertTrue(r.out().contains("usnet:   IP_NOROUTE  " + DropReason.IP_NOROUTE.description() + "\n"), r.out());
    }

    @Test
    void sendersWithoutARouteAreRefusedBeforeAnythingRunsNamingEachApp(@TempDir Path tmp) throws IOException {
        // A file whose senders no route reaches is judged at check time now, so the run never starts; at run time
        // the same sends would fail with ENETUNREACH, which the apps' outcomes report.
        Result r = run(tmp, PAIR + """
                      - {kind: ping, to: 198.18.9.9, interval: 0.1}
                      - {kind: udp-send, to: 198.18.9.9, port: 9}
                      - {kind: udp-sink, port: 9}
                """, "--duration", "0.5");
        assertEquals(2, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("apps[0].to: ping app: namespace a has no route to 198.18.9.9"), r.err());
        assertTrue(r.err().contains("apps[1].to: udp-send app: namespace a has no route to 198.18.9.9"), r.err());
        assertFalse(r.out().contains("usnet: ready"), r.out());
    }

    @Test
    void aRouteThatGoesAwayWhileRunningLeavesNothingToSendAndTheOutcomesSayWhy() {
        // The check passes (the connected route reaches b); the route then vanishes before the apps start, as
        // a live route change would remove it, so every send fails as sendto does on Linux: ENETUNREACH.
        TopologySpec spec = TopologyFile.parse("t.yaml", PAIR + """
                      - {kind: ping, to: 198.18.0.2, interval: 0.1}
                      - {kind: udp-send, to: 198.18.0.2, port: 9}
                """);
        dev.usnet.core.time.VirtualScheduler vs = new dev.usnet.core.time.VirtualScheduler();
        try (Topology t = TopologyBuilder.build(spec, n -> vs, TopologyBuilder.ExternalDevices.placeholders())) {
            var a = t.stack("a");
            assertTrue(a.routes().remove(dev.usnet.core.wire.Ipv4Addr.parse("198.18.0.0"), 24));
            Apps apps = Apps.of(t);
            apps.start();
            vs.runFor(500_000_000L);
            apps.stop();
            vs.runFor(100_000_000L);
            String ping = apps.list().get(0).summary();
            String udp = apps.list().get(1).summary();
            assertTrue(Pattern.compile("ping 198\\.18\\.0\\.2: (\\d+) sent, 0 received, 100% loss, \\1 without a route")
                    .matcher(ping).find(), ping);
            assertTrue(Pattern.compile("udp-send 198\\.18\\.0\\.2:9: (\\d+) sent, \\1 of them without a route").matcher(udp).find(),
                    udp);
            assertEquals("FAILED: no route to 198.18.0.2 (ENETUNREACH): no echo request left",
                    apps.list().get(0).outcome().format());
            assertEquals("FAILED: no route to 198.18.0.2 (ENETUNREACH): no datagram left", apps.list().get(1).outcome().format());
            // No packet was built, so none was dropped and none left a/eth0.
            assertTrue(a.drops().snapshot().values().stream().allMatch(v -> v == 0), a.drops().snapshot().toString());
            assertEquals(0, t.device("a", "eth0").stats().txPackets);
        }
    }

    private static final int RX_BYTES = 0;
    private static final int RX_PACKETS = 1;
    private static final int RX_DROPPED = 3;
    private static final int TX_BYTES = 4;
    private static final int TX_PACKETS = 5;
    private static final int TX_DROPPED = 7;

    /** The device table's row of {@code name}: rx bytes, packets, errors, dropped, then the same for tx. */
    private static long[] device(String out, String name) {
        Matcher m = Pattern.compile("usnet:   " + Pattern.quote(name) + " +(\\d+) +(\\d+) +(\\d+) +(\\d+) +(\\d+) +(\\d+) +(\\d+)"
                + " +(\\d+)\n").matcher(out);
        assertTrue(m.find(), "no device row for " + name + ": " + out);
        long[] v = new long[8];
        for (int i = 0; i < 8; i++) {
            v[i] = Long.parseLong(m.group(i + 1));
        }
        return v;
    }

    /** The drop table's count for {@code ns} and {@code reason}, or 0 when it has no such row. */
    private static long drops(String out, String ns, DropReason reason) {
        Matcher m = Pattern.compile("usnet:   " + Pattern.quote(ns) + " +" + reason.name() + " +(\\d+)\n").matcher(out);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }
}
