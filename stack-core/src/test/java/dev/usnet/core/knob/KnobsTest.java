package dev.usnet.core.knob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.CowPolicy;
import dev.usnet.core.netns.CowSysctl;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import java.util.List;
import org.junit.jupiter.api.Test;

class KnobsTest {

    @Test
    void unknownKeysAndBadValuesAreRejectedWithTheKeyNamed() {
        Knobs k = new Knobs();
        var e1 = assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.ip_forwarding", "1"));
        assertTrue(e1.getMessage().contains("net.ipv4.ip_forwarding"));
        var e2 = assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.ip_forward", "2"));
        assertTrue(e2.getMessage().contains("0..1"));
        var e3 = assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.ip_default_ttl", "abc"));
        assertTrue(e3.getMessage().contains("not an integer"));
        var e4 = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.forward.cow", "sometimes"));
        assertTrue(e4.getMessage().contains("head-copy"));
    }

    @Test
    void anUnknownKnobNamesTheNearestKnownOnesNotEveryName() {
        Knobs k = new Knobs();
        var e = assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.icmp_ratelimt", "100"));
        assertEquals("unknown knob 'net.ipv4.icmp_ratelimt' (did you mean 'net.ipv4.icmp_ratelimit'?)", e.getMessage());
        // A per-device knob is compared with the device the key names.
        e = assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.conf.eth0.proxyarp", "1"));
        assertEquals("unknown knob 'net.ipv4.conf.eth0.proxyarp' (did you mean 'net.ipv4.conf.eth0.proxy_arp'?)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.netem.eth0.dealy", "1ms"));
        assertTrue(e.getMessage().contains("'dealy' is not a link-emulation parameter (did you mean 'delay'? known: rate, burst,"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.set("frobnicate", "1"));
        assertEquals("unknown knob 'frobnicate' (no known knob has a similar name)", e.getMessage());
        assertEquals(List.of("net.ipv4.ip_forward"), NearestNames.nearest("net.ipv4.ip_forwarding", Knobs.known(), 3));
    }

    @Test
    void ipForwardSetsForwardingOnEveryDeviceAsLinuxDoes() {
        Knobs k = new Knobs();
        DevConf eth0 = k.dev("eth0");
        assertEquals(0, eth0.get(Ipv4Sysctl.FORWARDING));
        k.set("net.ipv4.ip_forward", "1");
        assertEquals(1, eth0.get(Ipv4Sysctl.FORWARDING));
        assertEquals(1, k.dev("eth1").get(Ipv4Sysctl.FORWARDING), "devices created later inherit it");
        k.set("net.ipv4.conf.eth0.forwarding", "0");
        assertEquals(0, eth0.get(Ipv4Sysctl.FORWARDING));
        assertEquals("0", k.get("net.ipv4.conf.eth0.forwarding"));
        k.set("net.ipv4.conf.all.forwarding", "0");
        assertEquals(0, k.get(Ipv4Sysctl.IP_FORWARD));
        assertEquals("0", k.get("net.ipv4.ip_forward"), "conf.all.forwarding writes ip_forward");
    }

    @Test
    void orConfAndDefaults() {
        Knobs k = new Knobs();
        DevConf eth0 = k.dev("eth0");
        assertFalse(k.effective(Ipv4Sysctl.PROXY_ARP, eth0) != 0);
        k.set("net.ipv4.conf.all.proxy_arp", "1");
        assertTrue(k.effective(Ipv4Sysctl.PROXY_ARP, eth0) != 0, "proxy_arp is on when on for all or the device");
        k.set("net.ipv4.conf.default.proxy_arp", "1");
        k.set("net.ipv4.conf.all.proxy_arp", "0");
        assertTrue(k.effective(Ipv4Sysctl.PROXY_ARP, k.dev("eth9")) != 0, "new devices take the default");
        assertFalse(k.effective(Ipv4Sysctl.PROXY_ARP, eth0) != 0);
        assertEquals("1000", k.get("net.ipv4.neigh.eth0.retrans_time_ms"));
        k.set("usnet.forward.cow", "full-copy");
        assertEquals(CowPolicy.FULL_COPY, k.get(CowSysctl.FORWARD_COW));
        assertEquals("full-copy", k.get("usnet.forward.cow"));
    }
}
