package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.nftables.Nftables;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code nftables:} in a namespace: the ruleset is applied when the namespace is built; its errors name the file's line. */
class NftablesTopologyTest {
    private static final String FILE = """
            version: 1
            namespaces:
              r:
                knobs: {net.ipv4.ip_forward: 1}
                devices:
                  - {name: eth0, kind: veth, addresses: [198.18.0.1/24], peer: {namespace: a, name: eth0, addresses: [198.18.0.2/24]}}
                nftables: |
                  table ip filter {
                      chain forward {
                          type filter hook forward priority filter; policy drop;
                          RULE
                      }
                  }
              a: {}
            """;

    private static Topology build(String yaml) {
        TopologySpec spec = TopologyFile.parse("t.yaml", yaml);
        return TopologyBuilder.build(spec, n -> new VirtualScheduler(), TopologyBuilder.ExternalDevices.placeholders());
    }

    @Test
    void theRulesetIsInPlaceWhenTheNamespaceIsBuilt() {
        try (Topology t = build(FILE.replace("RULE", "iif eth0 ct state established,related accept"))) {
            NetStack r = t.stack("r");
            assertEquals("""
                    table ip filter {
                    	chain forward {
                    		type filter hook forward priority filter; policy drop;
                    		iif "eth0" ct state established,related accept
                    	}
                    }
                    """, Nftables.of(r.ipv4()).listRuleset(false));
            assertArrayEquals(new int[] {0}, r.ipv4().netfilter().hooks().priorities(NfHook.FORWARD));
            assertEquals("", Nftables.of(t.stack("a").ipv4()).listRuleset(false));
        }
    }

    @Test
    void aRulesetErrorNamesTheFileLineAndTheRulesetPlace() {
        TopologyException e = assertThrows(TopologyException.class,
                () -> TopologyFile.check("t.yaml", FILE.replace("RULE", "udp dport 53 acept"), List.of(), List.of()));
        assertEquals(List.of("t.yaml:11: namespaces.r.nftables: ruleset line 4, column 22: expected a match or statement"
                + " (iifname, oifname, iif, oif, ip, meta, tcp, udp, icmp, ct, counter, accept, drop, reject, jump, goto,"
                + " return, snat, dnat, masquerade) after \"udp dport 53\", found \"acept\""), e.errors());
        e = assertThrows(TopologyException.class,
                () -> TopologyFile.check("t.yaml", FILE.replace("RULE", "iif eth9 accept"), List.of(), List.of()));
        assertEquals(List.of("t.yaml:11: namespaces.r.nftables: ruleset line 4, column 13: interface \"eth9\" does not"
                + " exist (iif and oif take a device that exists; iifname and oifname take any name)"), e.errors());
    }

    @Test
    void aOneLineRulesetCountsFromItsOwnLineAndAFoldedBlockIsRefused() {
        String oneLine = """
                version: 1
                namespaces:
                  r:
                    nftables: "add table ip t ; add chain ip t c ; add rule ip t c tcp dport 80 reject with tcp rst"
                """;
        TopologyException e = assertThrows(TopologyException.class,
                () -> TopologyFile.check("t.yaml", oneLine, List.of(), List.of()));
        assertEquals(List.of("t.yaml:4: namespaces.r.nftables: ruleset line 1, column 82: expected \"reset\" after"
                + " \"tcp dport 80 reject with tcp\", found \"rst\""), e.errors());
        e = assertThrows(TopologyException.class, () -> TopologyFile.check("t.yaml",
                "version: 1\nnamespaces:\n  r:\n    nftables: >\n      add table ip t\n", List.of(), List.of()));
        assertEquals(List.of("t.yaml:4: namespaces.r.nftables: a folded block (>) joins the rules into one line: write"
                + " the ruleset as a literal block (|)"), e.errors());
    }
}
