package dev.usnet.tools.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.ipv4.Ipv4;
import dev.usnet.core.nftables.Nftables;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.tools.cli.UsageException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Beyond the frames: after a netfilter fixture's replay the DUT's ruleset (with its counters) lists as Linux's
 * {@code nft list ruleset} did, and its connection tracking table as {@code conntrack -L} did — but for the
 * remaining-time column, which the recorder read in wall-clock seconds some time after the run.
 */
class NetfilterFixtureStateTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"nat-masquerade", "nat-dnat-hairpin", "nat-related-icmp", "ct-stateful-forward",
            "ct-table-full"})
    void rulesetCountersAndConntrackTableEndAsLinuxsDid(String name) throws IOException {
        Path fixture = LinuxConformanceTest.fixturesDir().resolve(name);
        Scenario sc = Scenario.load(fixture);
        Ipv4 ipv4;
        try (DeviceUnderTest dut = new DeviceUnderTest(sc, Replayer.DEFAULT_SEED)) {
            ipv4 = dut.dut().ipv4();
            record Input(String port, PcapRecord rec) {}
            List<Input> inputs = new ArrayList<>();
            for (var e : Replayer.readPorts(fixture, "in", sc).entrySet()) {
                for (PcapRecord r : e.getValue()) {
                    inputs.add(new Input(e.getKey(), r));
                }
            }
            // A stable sort keeps equal timestamps in port-then-file order, as the replay does.
            inputs.sort(Comparator.comparingLong(i -> i.rec().timestampNanos()));
            long t0 = inputs.get(0).rec().timestampNanos();
            long last = 0;
            for (Input in : inputs) {
                long at = in.rec().timestampNanos() - t0;
                dut.inject(in.port(), in.rec().data(), at);
                last = Math.max(last, at);
            }
            dut.runUntil(last + (long) ((sc.trailingAdvanceS() + sc.settleS()) * 1e9));

            String nft = Files.readString(fixture.resolve("linux/nft-list-ruleset.txt"), StandardCharsets.UTF_8);
            assertEquals(nft, Nftables.of(dut.dut().ipv4()).listRuleset(false), name + ": nft list ruleset");

            List<String> linux = Files.readAllLines(fixture.resolve("linux/conntrack-L.txt"), StandardCharsets.UTF_8)
                    .stream().filter(l -> !l.isBlank()).map(NetfilterFixtureStateTest::withoutTimeLeft).sorted().toList();
            long now = dut.dut().now();
            List<String> usnet = new ArrayList<>();
            ConntrackCore.of(dut.dut().ipv4()).table().forEach(e -> usnet.add(withoutTimeLeft(e.describe(now))));
            assertEquals(linux, usnet.stream().sorted().toList(), name + ": conntrack -L");
        }
        assertNull(Nftables.existing(ipv4), "the DUT's ruleset leaves with it");
    }

    /** A conntrack -L line with its third column (seconds left) replaced by "T". */
    private static String withoutTimeLeft(String line) {
        String[] f = line.trim().split("\\s+", 4);
        assertTrue(f.length == 4 && f[2].chars().allMatch(Character::isDigit), line);
        return f[0] + " " + f[1] + " T " + f[3];
    }

    @Test
    void aRulesetOutsideTheSubsetIsNamedWithTheFixtureAndSection(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("bad");
        Files.createDirectories(f);
        Files.writeString(f.resolve("scenario.json"), """
                {"name": "bad", "device": "router", "ports": [{"name": "r1", "mac": "02:00:00:00:00:01"}],
                 "router": {"nftables": "table ip t {\\n  chain c { ip ttl 3 drop }\\n}\\n"}}
                """);
        UsageException e = assertThrows(UsageException.class,
                () -> new DeviceUnderTest(Scenario.load(f), Replayer.DEFAULT_SEED).close());
        assertEquals("bad: router.nftables: line 2, column 16: ip ttl is not supported by usnet", e.getMessage());
    }
}
