package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.errors;
import static dev.usnet.tools.topology.TopologyErrors.onlyError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tools.Usnet;
import dev.usnet.tools.run.VirtualRun;
import dev.usnet.tools.topology.RunCommandTest.Result;
import dev.usnet.tools.topology.file.TopologySpec.BridgeDev;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Ping;
import dev.usnet.tools.topology.file.TopologySpec.Ref;
import dev.usnet.tools.topology.file.TopologySpec.UdpSend;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code params:}, {@code ${...}}, {@code count:} with {@code ${i}}, {@code master:} and {@code --param}. */
class TopologyParamsTest {

    /** A bridge in host and {@code idle} containers on it, each pinging the bridge's address. */
    private static final String IDLE = """
            params:
              idle: {default: 0, doc: idle containers on the bridge}
              rate: 20
              base: {default: 10}
            namespaces:
              host:
                devices:
                  - name: br0
                    kind: bridge
                    addresses: [198.18.8.1/24]
              idle${i}:
                count: ${idle}
                devices:
                  - name: eth0
                    kind: veth
                    mac: "02:00:00:00:08:${i+base:02x}"
                    addresses: ["198.18.8.${i+base}/24"]
                    peer: {namespace: host, name: "hi${i}", master: br0}
                apps:
                  - {kind: ping, to: 198.18.8.1, interval: 0.1}
            """;

    private static List<String> names(TopologySpec spec) {
        return spec.namespaces().stream().map(Ns::name).toList();
    }

    @Test
    void countZeroMakesNoNamespaceAndTheDefaultsAreTheParams() {
        TopologySpec spec = TopologyFile.parse("t.yaml", IDLE);
        assertEquals(List.of("host"), names(spec));
        assertEquals(Map.of("idle", "0", "rate", "20", "base", "10"), spec.params());
        assertEquals(List.of("idle", "rate", "base"), List.copyOf(spec.params().keySet()));
        assertEquals("idle containers on the bridge", spec.parameters().get(0).doc());
        assertEquals(List.of(), ((BridgeDev) spec.namespace("host").device("br0")).ports());
    }

    @Test
    void countThreeRepeatsTheEntryWithItsIndexInEveryValueAndMasterMakesThePorts() {
        TopologySpec spec = TopologyFile.parse("t.yaml", IDLE, Map.of("idle", "3", "base", "20"));
        assertEquals(List.of("host", "idle0", "idle1", "idle2"), names(spec));
        assertEquals("3", spec.params().get("idle"));
        assertEquals("0", spec.parameters().get(0).defaultValue());
        Veth eth0 = (Veth) spec.namespace("idle2").device("eth0");
        assertEquals(Ipv4Addr.parse("198.18.8.22"), eth0.link().addresses().get(0).ip());
        assertEquals(MacAddr.parse("02:00:00:00:08:16"), eth0.link().mac());
        assertEquals("hi2", eth0.peer().name());
        BridgeDev br = (BridgeDev) spec.namespace("host").device("br0");
        assertEquals(List.of("hi0", "hi1", "hi2"), br.ports().stream().map(Ref::name).toList());
        // Every copy keeps the line of the text it came from.
        assertEquals(18, br.ports().get(2).where().line());
        assertEquals(12, spec.namespace("idle1").where().line());
        TopologyBuilder.check(spec);
    }

    @Test
    void substitutionWorksInWholeValuesPartsOfStringsKeysAndArithmetic() {
        TopologySpec spec = TopologyFile.parse("t.yaml", """
                params:
                  n: 4
                  rate: {default: 50, doc: packets per second}
                  who: ctr
                name: lab-${who}${n}
                seed: ${n*(n+1) - 2}
                namespaces:
                  ${who}${n}:
                    devices:
                      - name: eth${n-4}
                        kind: veth
                        addresses: ["198.18.0.${(n + 1) * 2}/24"]
                        peer: {namespace: other, name: "p${-n+5}", addresses: [198.18.0.1/24]}
                    apps:
                      - {kind: udp-send, to: 198.18.0.1, port: 5001, rate: "${rate}", size: "${n*n*n}"}
                  other: {}
                """);
        assertEquals("lab-ctr4", spec.name());
        assertEquals(18, spec.seed());
        assertEquals(List.of("ctr4", "other"), names(spec));
        Veth v = (Veth) spec.namespace("ctr4").device("eth0");
        assertEquals(Ipv4Addr.parse("198.18.0.10"), v.link().addresses().get(0).ip());
        assertEquals("p1", v.peer().name());
        UdpSend u = (UdpSend) spec.namespace("ctr4").apps().get(0);
        assertEquals(50, u.rate());
        assertEquals(64, u.size());
        TopologySpec div = TopologyFile.parse("t.yaml", "params: {n: 17}\nname: \"${n/5}-${n%5}-${-n/5}\"\nnamespaces: {x: {}}\n");
        assertEquals("3-2--3", div.name());
        // $$ is a literal $.
        TopologySpec lit = TopologyFile.parse("t.yaml", "name: a$${b}\nnamespaces: {x: {}}\n");
        assertEquals("a${b}", lit.name());
    }

    @Test
    void anUndefinedNameIsAnErrorAtItsLineAndKeyAlsoInAnEntryWithCountZero() {
        String e = onlyError(IDLE.replace("198.18.8.${i+base}/24", "198.18.8.${i+bse}/24"));
        assertEquals("t.yaml:17: namespaces.idle0.devices[0].addresses[0]: ${i+bse}: undefined parameter bse"
                + " (declared under params: idle, rate, base)", e);
        e = onlyError("namespaces:\n  a:\n    devices:\n      - {name: \"e${i}\", kind: loopback}\n");
        assertTrue(e.startsWith("t.yaml:4: namespaces.a.devices[0].name: ${i}: undefined parameter i (${i} is the index"), e);
    }

    @Test
    void badExpressionsAndArithmeticOverAWordAreErrors() {
        String base = "params: {w: 10ms, n: 2}\nnamespaces:\n  a:\n    knobs:\n      k: \"%s\"\n";
        assertEquals("t.yaml:5: namespaces.a.knobs.k: ${w+1}: parameter w is \"10ms\", not an integer, so it cannot be"
                + " used in arithmetic", onlyError(base.formatted("${w+1}")));
        assertTrue(onlyError(base.formatted("${n+}")).startsWith("t.yaml:5: namespaces.a.knobs.k: ${n+}: ends where"));
        assertTrue(onlyError(base.formatted("${(n}")).contains("'(' without its ')'"));
        assertTrue(onlyError(base.formatted("${n&2}")).contains("unexpected '&'"));
        assertTrue(onlyError(base.formatted("${n/(n-2)}")).contains("division by zero"));
        assertTrue(onlyError(base.formatted("${n")).contains("'${' without its '}'"));
        assertTrue(onlyError(base.formatted("${n:q}")).contains("format 'q'"));
        assertTrue(onlyError(base.formatted("${9999999999*9999999999}")).contains("overflows"));
    }

    @Test
    void badDeclarationsAndCountsAreErrors() {
        assertTrue(onlyError("params: {i: 3}\nnamespaces: {a: {}}\n").startsWith("t.yaml:1: params.i: 'i' is the index"));
        assertTrue(onlyError("params: {2x: 3}\nnamespaces: {a: {}}\n").startsWith("t.yaml:1: params.2x: invalid parameter name"));
        assertTrue(onlyError("params:\n  n: {doc: x}\nnamespaces: {a: {}}\n").startsWith("t.yaml:2: params.n.default: missing"));
        assertEquals("t.yaml:3: namespaces.a${i}.count: expected a count 0..100000 (how many namespaces this entry makes),"
                + " got \"-1\"", onlyError("params: {n: -1}\nnamespaces:\n  a${i}: {count: \"${n}\"}\n"));
        assertTrue(onlyError("namespaces:\n  a: {count: 2}\n")
                .startsWith("t.yaml:2: namespaces.a: a namespace entry with count: needs ${i} in its name"));
        // Two copies with the same name are the duplicate the reader reports anyway.
        assertTrue(errors("namespaces:\n  a${i*0}: {count: 2}\n").get(0).contains("duplicate key"));
    }

    @Test
    void masterMustNameABridgeOfItsNamespaceAndNotRepeatPorts() {
        String both = IDLE.replace("addresses: [198.18.8.1/24]", "addresses: [198.18.8.1/24]\n        ports: [hi0]");
        assertEquals("t.yaml:19: namespaces.idle0.devices[0].peer.master: hi0 is already a port of br0 (its ports: at line"
                + " 11); give it either master: or a place in ports:, not both", onlyError(both.replace("default: 0", "default: 1")));
        assertEquals("t.yaml:18: namespaces.idle0.devices[0].peer.master: no device br1 in namespace host; master: names a"
                + " bridge in the namespace of this veth end",
                onlyError(IDLE.replace("master: br0", "master: br1").replace("default: 0", "default: 1")));
        String two = IDLE.replace("default: 0", "default: 2").replace("master: br0", "master: hi0");
        // Both copies of the template have the error: said once, with how many more.
        assertEquals(List.of("t.yaml:18: namespaces.idle0.devices[0].peer.master: hi0 is a veth, not a bridge (and 1 more"
                + " like it from line 18, the last at namespaces.idle1.devices[0].peer.master)"), errors(two));
        assertTrue(onlyError(IDLE.replace("kind: bridge", "kind: bridge\n        master: br0"))
                .contains("'master' applies to kind veth, not bridge"));
    }

    @Test
    void anUnknownParamOverrideListsTheDeclaredOnes() {
        TopologyException e = assertThrows(TopologyException.class,
                () -> TopologyFile.parse("t.yaml", IDLE, Map.of("idel", "3")));
        assertEquals(List.of("--param idel=3: no parameter idel in t.yaml (declared: idle, rate, base)"), e.errors());
    }

    @Test
    void tenThousandRepeatedNamespacesReadAndCheck() {
        TopologySpec spec = TopologyFile.parse("t.yaml", """
                params: {idle: 10000}
                namespaces:
                  host:
                    devices:
                      - {name: br0, kind: bridge, addresses: [198.18.0.1/15]}
                  idle${i}:
                    count: ${idle}
                    devices:
                      - name: eth0
                        kind: veth
                        addresses: ["198.18.${i/250 + 8}.${i%250 + 2}/15"]
                        peer: {namespace: host, name: "hi${i}", master: br0}
                """);
        assertEquals(10_001, spec.namespaces().size());
        assertEquals(10_000, ((BridgeDev) spec.namespace("host").device("br0")).ports().size());
        Veth last = (Veth) spec.namespace("idle9999").device("eth0");
        assertEquals(Ipv4Addr.parse("198.18.47.251"), last.link().addresses().get(0).ip());
    }

    @Test
    void pingsFromRepeatedContainersReachTheBridgeAndTheResultsNameTheParams(@TempDir Path tmp) throws Exception {
        Path f = tmp.resolve("idle.yaml");
        Files.writeString(f, IDLE);
        TopologySpec spec = TopologyFile.read(f, Map.of("idle", "3"));
        VirtualRun.RunResult r = VirtualRun.run(spec, new VirtualRun.Options(1_000_000_000L, 1L, tmp.resolve("out")));
        var apps = r.results().apps();
        assertEquals(3, apps.size(), apps.toString());
        for (int i = 0; i < 3; i++) {
            assertEquals("idle" + i + ".ping-0", apps.get(i).get("name"));
            assertEquals("ok", apps.get(i).get("outcome"), apps.get(i).toString());
            assertTrue(((Number) apps.get(i).get("ops")).longValue() >= 9, apps.get(i).toString());
        }
        String json = r.results().toJson();
        assertTrue(json.contains("\"params\" : {\n    \"idle\" : \"3\",\n    \"rate\" : \"20\",\n    \"base\" : \"10\"\n  },"),
                json);
    }

    @Test
    void runTakesParamOverridesAndCheckListsTheParams(@TempDir Path tmp) throws Exception {
        Path f = tmp.resolve("idle.yaml");
        Files.writeString(f, IDLE);
        Result r = RunCommandTest.run("run", "--check", "--param", "idle=2", f.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains(": ok (3 namespaces, 5 devices"), r.out());
        assertTrue(r.out().contains("  param idle=2 (default 0): idle containers on the bridge\n"), r.out());
        assertTrue(r.out().contains("  param rate=20 (default)\n"), r.out());
        Result bad = RunCommandTest.run("run", "--check", "--param", "nope=2", f.toString());
        assertEquals(Usnet.EXIT_USAGE, bad.code());
        assertTrue(bad.err().contains("usnet: --param nope=2: no parameter nope in " + f + " (declared: idle, rate, base)"),
                bad.err());
        Path out = tmp.resolve("out");
        Result v = RunCommandTest.run("run", "--clock", "virtual", "--duration", "1", "--param", "idle=1", "--out",
                out.toString(), "--results", out.resolve("r.json").toString(), f.toString());
        assertEquals(0, v.code(), v.out() + v.err());
        var doc = new com.fasterxml.jackson.databind.ObjectMapper().readTree(out.resolve("r.json").toFile());
        assertEquals("1", doc.path("params").path("idle").asText());
        assertEquals("ok", doc.path("apps").get(0).path("outcome").asText());
    }

    @Test
    void aPingToAContainerGoesOutThroughItsPortAndBack(@TempDir Path tmp) {
        // The other direction: the host pings a repeated container through the bridge.
        String hostPings = IDLE.replace("    apps:\n      - {kind: ping, to: 198.18.8.1, interval: 0.1}\n", "")
                .replace("  idle${i}:", "    apps:\n      - {kind: ping, to: 198.18.8.11, interval: 0.1}\n  idle${i}:");
        TopologySpec spec = TopologyFile.parse("t.yaml", hostPings, Map.of("idle", "2"));
        List<?> apps = spec.namespace("host").apps();
        assertEquals(1, apps.size());
        assertEquals(Ipv4Addr.parse("198.18.8.11"), ((Ping) apps.get(0)).to());
        VirtualRun.RunResult r = VirtualRun.run(spec, new VirtualRun.Options(1_000_000_000L, 1L, tmp));
        assertEquals("ok", r.results().apps().get(0).get("outcome"), r.results().apps().toString());
    }
}
