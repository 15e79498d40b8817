package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.onlyError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.topology.file.TopologySpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Comparisons, {@code c ? a : b} and text in {@code ${...}}, and {@code when:} on namespaces and list items. */
class TopologyConditionalsTest {
    private static final String FILE = """
            params:
              mode: {default: native, doc: native or netns}
              hosts: 2
            namespaces:
              sw:
                devices:
                  - {name: br0, kind: bridge}
              h${i}:
                count: ${hosts}
                devices:
                  - name: eth0
                    kind: veth
                    addresses: ['198.18.${mode == "native" ? 1 : 2}.${i+1}/24']
                    peer: {namespace: sw, name: "p${i}", master: br0}
                  - name: br0
                    kind: bridge
                    when: ${mode == "netns"}
              r${i}:
                count: '${mode == "netns" ? hosts : 0}'
                devices:
                  - {name: lo, kind: loopback, addresses: ["198.18.3.${i+1}/32"]}
            """;

    private static List<String> names(TopologySpec spec) {
        return spec.namespaces().stream().map(TopologySpec.Ns::name).toList();
    }

    @Test
    void aTextParameterChoosesNamespacesDevicesAndValues() {
        String f = FILE;
        TopologySpec nat = TopologyFile.parse("t.yaml", f);
        assertEquals(List.of("sw", "h0", "h1"), names(nat));
        assertEquals(1, nat.namespace("h0").devices().stream().filter(d -> !d.link().name().equals("lo")).count());
        assertEquals("198.18.1.2/24", nat.namespace("h1").device("eth0").link().addresses().getFirst().text());
        TopologySpec ns = TopologyFile.parse("t.yaml", f, Map.of("mode", "netns"));
        assertEquals(List.of("sw", "h0", "h1", "r0", "r1"), names(ns));
        assertTrue(ns.namespace("h1").device("br0") != null, "when: 1 keeps the device");
        assertEquals("198.18.2.2/24", ns.namespace("h1").device("eth0").link().addresses().getFirst().text());
    }

    @Test
    void comparisonsGiveOneOrZeroAndTheConditionalPicksABranch() {
        String base = "params: {mode: netns, n: 4}\nnamespaces:\n  a:\n    knobs:\n      k: '%s'\n";
        for (String[] c : new String[][] {{"${mode == \"netns\"}", "1"}, {"${mode != \"netns\"}", "0"},
                {"${n >= 4}", "1"}, {"${n < 4}", "0"}, {"${n == 4 ? n*2 : 0}", "8"}, {"${n > 9 ? 1 : n > 3 ? 2 : 3}", "2"},
                {"${n == 4 ? \"a:b\" : \"c\"}", "a:b"}, {"${(n == 4 ? 16 : 0):02x}", "10"}}) {
            TopologySpec s = TopologyFile.parse("t.yaml", base.formatted(c[0]));
            assertEquals(c[1], s.namespace("a").knobs().getFirst().value(), c[0]);
        }
    }

    @Test
    void badConditionalsAreErrorsNamingTheLine() {
        String base = "params: {mode: netns, n: 4}\nnamespaces:\n  a:\n    knobs:\n      k: '%s'\n";
        assertEquals("t.yaml:5: namespaces.a.knobs.k: ${mode < 3}: parameter mode is \"netns\", not an integer, so it"
                + " cannot be used in arithmetic", onlyError(base.formatted("${mode < 3}")));
        assertTrue(onlyError(base.formatted("${n == 4 ? 1}")).contains("'?' without its ':'"));
        assertTrue(onlyError(base.formatted("${mode ? 1 : 0}")).contains("the condition before '?' is the text \"netns\""));
        assertTrue(onlyError(base.formatted("${mode == \"netns}")).contains("without its closing"));
        String when = "params: {mode: netns}\nnamespaces:\n  a:\n    when: ${mode}\n";
        assertEquals("t.yaml:4: namespaces.a.when: expected a condition that gives 1 or 0 (true or false), like"
                + " ${mode == \"netns\"}, got \"netns\"", onlyError(when));
    }
}
