package dev.usnet.tools.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.cli.UsageException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The netfilter parts of scenario.json: the DUT's nftables ruleset and the pending marker. */
class ScenarioNetfilterTest {

    private static Scenario load(Path dir, String json) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("scenario.json"), json);
        return Scenario.load(dir);
    }

    @Test
    void rulesetAndPendingAreRead(@TempDir Path tmp) throws IOException {
        Scenario sc = load(tmp, """
                {"device": "router", "pending": "netfilter", "ports": [{"name": "r1", "mac": "02:00:00:00:00:01"}],
                 "router": {"nftables": "table ip t {\\n}\\n",
                            "sysctl": {"net.netfilter.nf_conntrack_tcp_loose": 0}}}
                """);
        assertEquals("table ip t {\n}\n", sc.nftables());
        assertEquals("netfilter", sc.pending());
        assertEquals("0", sc.router().sysctl().get("net.netfilter.nf_conntrack_tcp_loose"));
    }

    @Test
    void absentMeansNull(@TempDir Path tmp) throws IOException {
        Scenario sc = load(tmp, """
                {"device": "bridge", "ports": [{"name": "p1", "mac": "02:00:00:00:00:01"}],
                 "bridge": {"mac": "02:00:00:00:00:fe"}}
                """);
        assertNull(sc.nftables());
        assertNull(sc.pending());
    }

    @Test
    void aBridgeRulesetIsInItsBridgeSection(@TempDir Path tmp) throws IOException {
        Scenario sc = load(tmp, """
                {"device": "bridge", "ports": [{"name": "p1", "mac": "02:00:00:00:00:01"}],
                 "bridge": {"mac": "02:00:00:00:00:fe", "nftables": "table ip f {\\n}\\n"},
                 "router": {"nftables": "not this one"}}
                """);
        assertEquals("table ip f {\n}\n", sc.nftables());
    }

    @Test
    void aRulesetThatIsNotTextIsNamed(@TempDir Path tmp) throws IOException {
        UsageException e = assertThrows(UsageException.class, () -> load(tmp, """
                {"device": "router", "ports": [{"name": "r1", "mac": "02:00:00:00:00:01"}],
                 "router": {"nftables": ["table ip t {}"]}}
                """));
        assertTrue(e.getMessage().contains("'router.nftables'") && e.getMessage().contains("array"), e.getMessage());
        e = assertThrows(UsageException.class, () -> load(tmp, """
                {"device": "router", "pending": "", "ports": [{"name": "r1", "mac": "02:00:00:00:00:01"}]}
                """));
        assertTrue(e.getMessage().contains("'pending'"), e.getMessage());
    }

    @Test
    void theShippedNetfilterFixturesReplayAndCarryTheirRuleset() {
        for (String name : new String[] {"nat-masquerade", "nat-dnat-hairpin", "nat-related-icmp",
                "ct-stateful-forward", "ct-table-full"}) {
            Scenario sc = Scenario.load(LinuxConformanceTest.fixturesDir().resolve(name));
            assertNull(sc.pending(), name);
            assertTrue(sc.nftables() != null && sc.nftables().startsWith("table ip "), name);
            assertTrue(Files.isRegularFile(LinuxConformanceTest.fixturesDir().resolve(name).resolve("linux/nft-list-ruleset.txt")), name);
        }
    }
}
