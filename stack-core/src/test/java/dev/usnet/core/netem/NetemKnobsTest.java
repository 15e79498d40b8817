package dev.usnet.core.netem;

import static dev.usnet.core.netem.NetemSysctl.NETEM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.knob.Knobs;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The usnet.netem.<dev>.* knobs: units, the tc-like spec, errors that name the key and the accepted forms. */
class NetemKnobsTest {

    private static String error(Knobs k, String key, String value) {
        return assertThrows(IllegalArgumentException.class, () -> k.set(key, value)).getMessage();
    }

    @Test
    void ratesTakeTcUnitsAndAreShownInTheLargestExactOne() {
        Knobs k = new Knobs();
        String[][] cases = {
            {"10gbit", "10gbit", "10000000000"},
            {"100mbit", "100mbit", "100000000"},
            {"1000000", "1mbit", "1000000"},
            {"1.5gbit", "1500mbit", "1500000000"},
            {"125kbps", "1mbit", "1000000"},
            {"1kibit", "1024bit", "1024"},
            {"100Mbit", "100mbit", "100000000"},
            {"0", "0", "0"},
        };
        for (String[] c : cases) {
            k.set("usnet.netem.eth0.rate", c[0]);
            assertEquals(c[1], k.get("usnet.netem.eth0.rate"), c[0]);
            assertEquals(Long.parseLong(c[2]), k.get(NETEM, "eth0").rateBitsPerSecond(), c[0]);
        }
    }

    @Test
    void timesSizesAndProbabilities() {
        Knobs k = new Knobs();
        k.set("usnet.netem.eth0.delay", "50us");
        assertEquals(50_000, k.get(NETEM, "eth0").delayNanos());
        k.set("usnet.netem.eth0.delay", "1.5ms");
        assertEquals("1500us", k.get("usnet.netem.eth0.delay"));
        k.set("usnet.netem.eth0.jitter", "250ns");
        assertEquals(250, k.get(NETEM, "eth0").jitterNanos());
        k.set("usnet.netem.eth0.delay", "2s");
        assertEquals("2s", k.get("usnet.netem.eth0.delay"));
        k.set("usnet.netem.eth0.burst", "64k");
        assertEquals(65_536, k.get(NETEM, "eth0").burstBytes());
        k.set("usnet.netem.eth0.burst", "32kbit");
        assertEquals(4096, k.get(NETEM, "eth0").burstBytes());
        k.set("usnet.netem.eth0.loss", "1%");
        assertEquals(0.01, k.get(NETEM, "eth0").loss());
        k.set("usnet.netem.eth0.loss", "0.01");
        assertEquals(0.01, k.get(NETEM, "eth0").loss());
        assertEquals("1%", k.get("usnet.netem.eth0.loss"));
        k.set("usnet.netem.eth0.duplicate", "0.05%");
        assertEquals("0.05%", k.get("usnet.netem.eth0.duplicate"));
        k.set("usnet.netem.eth0.limit", "10");
        k.set("usnet.netem.eth0.seed", "0x10");
        assertEquals(16L, k.get(NETEM, "eth0").seed());
        k.set("usnet.netem.eth0.seed", "auto");
        assertNull(k.get(NETEM, "eth0").seed());
        k.set("usnet.netem.eth0.queue", "tfifo");
        k.set("usnet.netem.eth0.distribution", "normal");
        k.set("usnet.netem.eth0.overhead", "-4");
        assertEquals("burst 4096 overhead -4 delay 2s jitter 250ns distribution normal loss 1% duplicate 0.05% limit 10 queue tfifo",
                k.get("usnet.netem.eth0"));
    }

    @Test
    void aWholeSpecInTcWordsSetsEverythingAtOnceAndReplacesWhatWasThere() {
        Knobs k = new Knobs();
        k.set("usnet.netem.eth0.loss", "5%");
        k.set("usnet.netem.eth0", "rate 100mbit delay 10ms 1ms loss random 1% limit 500");
        NetemParams p = k.get(NETEM, "eth0");
        assertEquals(100_000_000, p.rateBitsPerSecond());
        assertEquals(10_000_000, p.delayNanos());
        assertEquals(1_000_000, p.jitterNanos(), "tc's positional jitter");
        assertEquals(0.01, p.loss());
        assertEquals(500, p.limit());
        assertEquals("rate 100mbit delay 10ms jitter 1ms loss 1% limit 500", k.get("usnet.netem.eth0"));
        assertEquals(Map.of("usnet.netem.eth0.rate", "100mbit", "usnet.netem.eth0.delay", "10ms", "usnet.netem.eth0.jitter", "1ms",
                "usnet.netem.eth0.loss", "1%", "usnet.netem.eth0.limit", "500"), k.explicitValues(),
                "the explicit values list each parameter in force");
        k.set("usnet.netem.eth0", "none");
        assertSame(NetemParams.NONE, k.get(NETEM, "eth0"));
        assertNull(NETEM.get(k.dev("eth0")), "no emulation at all: frames bypass it");
        assertTrue(k.explicitValues().isEmpty());
        assertEquals("none", k.get("usnet.netem.eth0"));
        assertEquals("1000", k.get("usnet.netem.eth0.limit"), "defaults are readable");
    }

    @Test
    void formatAndParseRoundTripEveryParameter() {
        NetemParams p = NetemParams.NONE.withRate(2_500_000_001L).withBurst(15_000).withOverhead(24).withDelay(1_234_567)
                .withJitter(89_000).withDistribution(NetemParams.Distribution.NORMAL).withLoss(0.001).withDuplicate(0.125)
                .withReorder(0.33).withGap(5).withLimit(77).withSeed(-3L).withQueue(NetemParams.Queue.TFIFO);
        String spec = p.format();
        assertEquals("rate 2500000001bit burst 15000 overhead 24 delay 1234567ns jitter 89us distribution normal loss 0.1%"
                + " duplicate 12.5% reorder 33% gap 5 limit 77 seed -3 queue tfifo", spec);
        assertEquals(p, NetemParams.parse(spec));
        NetemParams q = NetemParams.NONE;
        for (String param : NetemParams.PARAMS) {
            q = q.with(param, p.get(param));
        }
        assertEquals(p, q, "each parameter's text reads back as itself");
        assertEquals(NetemParams.NONE, NetemParams.parse(NetemParams.NONE.format()));
        assertEquals(NetemParams.NONE, NetemParams.parse(""));
    }

    @Test
    void badValuesNameTheKeyAndWhatItTakes() {
        Knobs k = new Knobs();
        String e = error(k, "usnet.netem.eth0.rate", "fast");
        assertTrue(e.startsWith("usnet.netem.eth0.rate: 'fast' is not a rate"), e);
        assertTrue(e.contains("100mbit") && e.contains("10gbit"), e);
        e = error(k, "usnet.netem.eth0.rate", "10gbs");
        assertTrue(e.contains("unknown unit 'gbs'"), e);
        e = error(k, "usnet.netem.eth0.delay", "10");
        assertTrue(e.startsWith("usnet.netem.eth0.delay: '10' needs a unit"), e);
        assertTrue(e.contains("50us"), e);
        e = error(k, "usnet.netem.eth0.delay", "-1ms");
        assertTrue(e.contains("is not a time"), e);
        e = error(k, "usnet.netem.eth0.loss", "5");
        assertTrue(e.contains("did you mean 5%?"), e);
        e = error(k, "usnet.netem.eth0.loss", "150%");
        assertTrue(e.contains("0%..100%"), e);
        e = error(k, "usnet.netem.eth0.loss", "often");
        assertTrue(e.contains("1%") && e.contains("0.01"), e);
        e = error(k, "usnet.netem.eth0.limit", "-1");
        assertTrue(e.startsWith("usnet.netem.eth0.limit: -1 is out of range 0.."), e);
        e = error(k, "usnet.netem.eth0.gap", "0");
        assertTrue(e.contains("out of range 1.."), e);
        e = error(k, "usnet.netem.eth0.queue", "lifo");
        assertTrue(e.contains("fifo or tfifo"), e);
        e = error(k, "usnet.netem.eth0.distribution", "pareto");
        assertTrue(e.contains("uniform or normal"), e);
        e = error(k, "usnet.netem.eth0.rat", "1mbit");
        assertTrue(e.contains("'rat' is not a link-emulation parameter") && e.contains("rate, burst"), e);
        e = error(k, "usnet.netem.all.loss", "1%");
        assertTrue(e.contains("per device"), e);
        e = error(k, "usnet.netem.eth0", "delay");
        assertTrue(e.startsWith("usnet.netem.eth0: 'delay' needs a value"), e);
        e = error(k, "usnet.netem.eth0", "delay 10ms 1ms 25%");
        assertTrue(e.contains("'25%' is not a link-emulation parameter") && e.contains("correlations"), e);
        e = error(k, "usnet.netem.eth0", "loss 1% loss 2%");
        assertTrue(e.contains("given twice"), e);
        e = error(k, "usnet.netem.", "1");
        assertTrue(e.contains("usnet.netem.<dev>"), e);
        assertSame(NetemParams.NONE, k.get(NETEM, "eth0"), "nothing was applied by a failed set");
    }

    @Test
    void vlanLikeDeviceNamesWork() {
        Knobs k = new Knobs();
        k.set("usnet.netem.eth0.100.delay", "1ms");
        k.set("usnet.netem.eth0.200", "delay 2ms");
        assertEquals(1_000_000, k.get(NETEM, "eth0.100").delayNanos());
        assertEquals(2_000_000, k.get(NETEM, "eth0.200").delayNanos());
        assertEquals("eth0.100", Knobs.deviceOf("usnet.netem.eth0.100.delay"));
        assertEquals("eth0.200", Knobs.deviceOf("usnet.netem.eth0.200"));
        assertTrue(Knobs.isDeviceSpec("usnet.netem.eth0.200"));
        assertNull(Knobs.deviceOf("usnet.netem.all.delay"), "link emulation has no all");
        assertNull(Knobs.deviceOf("usnet.netem.eth0.dealy"), "not a parameter, not a device number");
        assertNull(Knobs.deviceOf("net.ipv4.ip_forward"));
        assertFalse(Knobs.isDeviceSpec("net.ipv4.conf.eth0.forwarding"));
    }

    @Test
    void knobsListAndForgetThem() {
        assertTrue(Knobs.known().contains("usnet.netem.<dev>.rate"));
        assertTrue(Knobs.known().contains("usnet.netem.<dev>"));
        Knobs k = new Knobs();
        long v = k.version();
        k.set("usnet.netem.eth0.delay", "1ms");
        assertTrue(k.version() > v);
        k.set(NETEM, "eth1", NetemParams.NONE.withLoss(0.5));
        assertEquals("50%", k.get("usnet.netem.eth1.loss"));
        k.forgetDevice("eth0");
        assertSame(NetemParams.NONE, k.get(NETEM, "eth0"), "a device that left takes its settings with it");
        assertEquals(Map.of("usnet.netem.eth1.loss", "50%"), k.explicitValues());
    }
}
