package dev.usnet.tools.topology;

import static dev.usnet.tools.topology.TopologyErrors.errors;
import static dev.usnet.tools.topology.TopologyErrors.onlyError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Link emulation in topology files ({@code netem:} on a device or peer, usnet.netem knobs) and {@code usnet run --set}. */
class NetemTopologyTest {

    private static final String FILE = """
            namespaces:
              host:
                knobs:
                  usnet.netem.hb1.limit: 100
                devices:
                  - name: br0
                    kind: bridge
                    ports: [hb1, hb2]
                    addresses: [198.18.0.1/24]
              ctr1:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.11/24]
                    netem:
                      rate: 100mbit
                      delay: 1ms
                      loss: 1%
                    peer:
                      namespace: host
                      name: hb1
                      netem: {delay: 2ms, jitter: 100us, queue: tfifo}
              ctr2:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.12/24]
                    netem: "delay 5ms limit 50"
                    peer: {namespace: host, name: hb2, netem: {delay: 10ms}}
            """;


    private static Topology buildVirtual(TopologySpec spec, VirtualScheduler vs) {
        return TopologyBuilder.build(spec, n -> vs, TopologyBuilder.ExternalDevices.placeholders());
    }

    @Test
    void netemOnDevicesAndPeersBuildsIntoTheirSettings() {
        TopologySpec spec = TopologyFile.parse("t.yaml", FILE);
        TopologySpec.Veth v = (TopologySpec.Veth) spec.namespace("ctr1").device("eth0");
        assertEquals(List.of("usnet.netem.eth0.rate", "usnet.netem.eth0.delay", "usnet.netem.eth0.loss"),
                v.link().netem().stream().map(TopologySpec.Knob::key).toList());
        assertEquals(16, v.link().netem().get(0).where().line());
        VirtualScheduler vs = new VirtualScheduler();
        try (Topology t = buildVirtual(spec, vs)) {
            assertEquals(NetemParams.parse("rate 100mbit delay 1ms loss 1%"), t.device("ctr1", "eth0").netemParams());
            assertEquals(NetemParams.parse("delay 2ms jitter 100us limit 100 queue tfifo"), t.device("host", "hb1").netemParams(),
                    "the peer's netem:, then the namespace's knob on top");
            assertEquals("delay 5ms limit 50", t.stack("ctr2").knobs().get("usnet.netem.eth0"));
            assertEquals("10ms", t.stack("host").knobs().get("usnet.netem.hb2.delay"));
            assertEquals(NetemParams.NONE, t.device("host", "br0").netemParams());
            // Round trip: what the built namespaces report reads back as the same settings.
            for (String ns : List.of("host", "ctr1", "ctr2")) {
                NetStack s = t.stack(ns);
                for (var d : s.devices()) {
                    String text = s.knobs().get("usnet.netem." + d.name());
                    assertEquals(d.netemParams(), NetemParams.parse(text), ns + "/" + d.name());
                }
            }
        }
    }

    @Test
    void aBridgePortDelaysWhatTheBridgeSendsOutOfIt() {
        VirtualScheduler vs = new VirtualScheduler();
        TopologySpec spec = TopologyFile.parse("t.yaml", FILE.replace("loss: 1%", "loss: 0"));
        try (Topology t = buildVirtual(spec, vs)) {
            NetStack c1 = t.stack("ctr1");
            NetStack c2 = t.stack("ctr2");
            List<Long> arrived = new ArrayList<>();
            c2.udp().bind(0, 9000).setReceiver((sock, src, port, buf, off, len) -> arrived.add(vs.nanoTime()));
            var tx = c1.udp().bind(0, 0);
            int dst = Ipv4Addr.parse("198.18.0.12");
            var data = Unpooled.wrappedBuffer(new byte[100]);
            // The first datagram waits for ARP; the second finds the neighbour resolved.
            tx.sendTo(dst, 9000, data, 0, 100);
            vs.runFor(1_000_000_000L);
            assertEquals(1, arrived.size());
            long sent = vs.nanoTime();
            tx.sendTo(dst, 9000, data, 0, 100);
            vs.runFor(1_000_000_000L);
            assertEquals(2, arrived.size());
            // ctr1 eth0: 142 bytes at 100 Mbit/s + 1 ms; host hb1 (toward ctr1) is not on the way;
            // host hb2, the bridge port toward ctr2: 10 ms.
            long wire = (14 + 20 + 8 + 100) * 8 * 10;
            assertEquals(wire + 1_000_000 + 10_000_000, arrived.get(1) - sent);
        }
    }

    @Test
    void badNetemValuesNameTheirLineAndKey() {
        String e = onlyError(FILE.replace("rate: 100mbit", "rate: fast"));
        assertTrue(e.startsWith("t.yaml:16: namespaces.ctr1.devices[0].netem.rate: 'fast' is not a rate (expected bits per second"),
                e);
        e = onlyError(FILE.replace("delay: 1ms", "dely: 1ms"));
        assertTrue(e.startsWith("t.yaml:17: namespaces.ctr1.devices[0].netem.dely: unknown key (did you mean 'delay'?)"), e);
        e = onlyError(FILE.replace("loss: 1%", "loss: 5"));
        assertTrue(e.startsWith("t.yaml:18: namespaces.ctr1.devices[0].netem.loss: '5' is not a probability") && e.contains("5%?"), e);
        e = onlyError(FILE.replace("\"delay 5ms limit 50\"", "\"delay 5ms limit\""));
        assertEquals("t.yaml:28: namespaces.ctr2.devices[0].netem: 'limit' needs a value", e);
        e = onlyError(FILE.replace("netem: {delay: 2ms, jitter: 100us, queue: tfifo}", "netem: {queue: lifo}"));
        assertTrue(e.startsWith("t.yaml:22: namespaces.ctr1.devices[0].peer.netem.queue: 'lifo' is not a queue order"), e);
        e = onlyError(FILE.replace("usnet.netem.hb1.limit: 100", "usnet.netem.hb9.limit: 100"));
        assertTrue(e.startsWith("t.yaml:4: namespaces.host.knobs.usnet.netem.hb9.limit: knob names device hb9, which namespace"
                + " host does not have"), e);
        e = onlyError(FILE.replace("usnet.netem.hb1.limit: 100", "usnet.netem.hb1.limit: many"));
        assertTrue(e.startsWith("t.yaml:4: namespaces.host.knobs.usnet.netem.hb1.limit: usnet.netem.hb1.limit: 'many' is not an integer"),
                e);
        e = onlyError(FILE.replace("usnet.netem.hb1.limit: 100", "usnet.netem.hb1.limt: 100"));
        assertTrue(e.contains("'limt' is not a link-emulation parameter"), e);
    }

    @Test
    void knobsFromTheCommandLineApplyAfterTheFilesOwn() {
        TopologySpec spec = TopologyFile.parse("t.yaml", FILE)
                .withKnobs(List.of("host:usnet.netem.hb1.limit=7", "usnet.netem.eth0.delay=3ms"));
        VirtualScheduler vs = new VirtualScheduler();
        try (Topology t = buildVirtual(spec, vs)) {
            assertEquals(7, t.device("host", "hb1").netemParams().limit());
            assertEquals(3_000_000, t.device("ctr1", "eth0").netemParams().delayNanos(), "every namespace with no NS: prefix");
            assertEquals(3_000_000, t.device("ctr2", "eth0").netemParams().delayNanos());
            assertEquals(3_000_000, t.stack("host").knobs().get(dev.usnet.core.netem.NetemSysctl.NETEM, "eth0").delayNanos(), "a device that may come later");
        }
        var u = assertThrows(UsageException.class, () -> TopologyFile.parse("t.yaml", FILE).withKnobs(List.of("nosuch:a=1")));
        assertTrue(u.getMessage().contains("no namespace 'nosuch'"), u.getMessage());
        u = assertThrows(UsageException.class, () -> TopologyFile.parse("t.yaml", FILE).withKnobs(List.of("justakey")));
        assertTrue(u.getMessage().contains("[NS:]KEY=VALUE"), u.getMessage());
        u = assertThrows(UsageException.class, () -> TopologyFile.parse("t.yaml", FILE).withKnobs(List.of("host:usnet.netem.hb9.delay=1ms")));
        assertTrue(u.getMessage().contains("no device 'hb9' in namespace host"), u.getMessage());
        var e = assertThrows(TopologyException.class,
                () -> TopologyBuilder.check(TopologyFile.parse("t.yaml", FILE).withKnobs(List.of("host:usnet.netem.hb1.delay=10"))));
        assertEquals(List.of("--set host:usnet.netem.hb1.delay=10: usnet.netem.hb1.delay: '10' needs a unit (expected a time with its"
                + " unit like 100ns, 50us, 1.5ms, 2s (ns, us, ms, s); or 0)"), e.errors());
    }

    @Test
    void usnetRunSetsNetemFromTheCommandLineAndReportsItsCounters(@TempDir Path tmp) throws IOException {
        Path f = tmp.resolve("t.yaml");
        Files.writeString(f, Files.readString(RunCommandTest.examples().resolve("in-jvm-containers.yaml")));
        var r = RunCommandTest.run("run", "--check", "--set", "host:usnet.netem.hb2.delay=fast", f.toString());
        assertEquals(dev.usnet.tools.Usnet.EXIT_USAGE, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("--set host:usnet.netem.hb2.delay=fast: usnet.netem.hb2.delay: 'fast' is not a time"), r.err());
        r = RunCommandTest.run("run", "--duration", "1", "--out", tmp.resolve("out").toString(), "--set",
                "host:usnet.netem.hb2.delay=20ms", f.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        Matcher m = Pattern.compile("ping 198\\.18\\.0\\.12: \\d+ sent, (\\d+) received,"
                + "(?: \\d+ unanswered at the end \\([^)]*\\),)? \\d+% loss, rtt p50 ([0-9.]+) us").matcher(r.out());
        assertTrue(m.find(), r.out());
        assertTrue(Long.parseLong(m.group(1)) > 0, r.out());
        assertTrue(Double.parseDouble(m.group(2)) >= 20_000, "the bridge port toward ctr2 adds 20 ms: " + r.out());
        m = Pattern.compile("usnet: netem host/hb2 \\(delay 20ms\\): sent (\\d+) frames").matcher(r.out());
        assertTrue(m.find() && Long.parseLong(m.group(1)) > 0, r.out());
    }
}
