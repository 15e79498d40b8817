package dev.usnet.core.knob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.bridge.BridgeSysctl;
import dev.usnet.core.netns.CowSysctl;
import dev.usnet.core.ipv4.IcmpSysctl;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.neigh.NeighSysctl;
import dev.usnet.core.netem.NetemSysctl;
import dev.usnet.core.stack.CpuModelSysctl;
import dev.usnet.core.netns.NetCoreSysctl;
import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** stack-core's knobs as tables next to their users: found like any module's, per-device families declared. */
class KnobTablesTest {
    private static final List<SysctlTable> CORE_TABLES = List.of(new NetCoreSysctl(), new CpuModelSysctl(),
            new Ipv4Sysctl(), new IcmpSysctl(), new NeighSysctl(), new BridgeSysctl(), new CowSysctl(), new NetemSysctl());

    // A per-device family of the test's own: declared here, nothing else in the knob package knows it.
    static final DeviceKnob WIDGET = DeviceKnob.define("usnet.example.dev.", "widgets", 4, 0, 9,
            DeviceKnob.Combine.MAX);

    @Test
    void everyCoreTableIsFoundByServiceLoaderAndItsKnobsByName() {
        List<String> found = ServiceLoader.load(SysctlTable.class).stream().map(p -> p.type().getName()).toList();
        for (SysctlTable t : CORE_TABLES) {
            assertTrue(found.contains(t.getClass().getName()), t.getClass() + " is not registered as a service");
            for (Knob k : t.knobs()) {
                assertSame(k, Knobs.declared(k.key()), k.key());
                assertTrue(Knobs.known().contains(k.key()), k.key());
            }
            for (DeviceKnob d : t.deviceKnobs()) {
                assertTrue(Knobs.known().contains(d.pattern()), d.pattern());
                assertTrue(Knobs.deviceFamilies().contains(d.family()), d.family());
            }
            for (DeviceSpecKnob<?> d : t.deviceSpecKnobs()) {
                assertTrue(Knobs.known().contains(d.pattern()), d.pattern());
                d.params().forEach(p -> assertTrue(Knobs.known().contains(d.pattern(p)), d.pattern(p)));
                assertTrue(Knobs.deviceFamilies().contains(d.family()), d.family());
            }
        }
        assertEquals(Knob.Applies.BUILD, Knobs.applies("usnet.hz"));
        assertEquals(Knob.Applies.LIVE, Knobs.applies("net.ipv4.conf.eth0.rp_filter"));
    }

    @Test
    void perDeviceDefaultsDeclaredAgreeWithANewDevicesSettings() {
        Knobs k = new Knobs();
        DevConf fresh = new DevConf();
        for (SysctlTable t : CORE_TABLES) {
            for (DeviceKnob d : t.deviceKnobs()) {
                assertEquals(d.defaultValue(), d.get(fresh), d.pattern());
                assertEquals(Long.toString(d.defaultValue()), k.get(d.family() + "eth0." + d.name()), d.pattern());
            }
        }
    }

    @Test
    void aNewPerDeviceFamilyIsRecognisedFromItsDeclarationAlone() {
        Knobs k = new Knobs();
        assertEquals("4", k.get("usnet.example.dev.eth0.widgets"));
        k.set("usnet.example.dev.eth0.widgets", "7");
        assertEquals(7, k.dev("eth0").get(WIDGET));
        assertEquals(4, k.dev("eth1").get(WIDGET), "another device keeps the default");
        assertEquals("7", k.explicitValues().get("usnet.example.dev.eth0.widgets"));
        k.set("usnet.example.dev.all.widgets", "8");
        assertEquals(8, k.effective(WIDGET, k.dev("eth0")), "MAX combines all with the device");
        var e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.example.dev.eth0.widgets", "10"));
        assertEquals("usnet.example.dev.eth0.widgets: 10 is out of range 0..9", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.example.dev.eth0.widget", "1"));
        assertEquals("unknown knob 'usnet.example.dev.eth0.widget' (did you mean 'usnet.example.dev.eth0.widgets'?)",
                e.getMessage());
        assertEquals("eth0", Knobs.deviceOf("usnet.example.dev.eth0.widgets"));
        k.forgetDevice("eth0");
        assertNull(k.explicitValues().get("usnet.example.dev.eth0.widgets"), "a device's keys leave with it");
    }

    // A per-device spec family of the test's own: a pair "a/b" with parameters a and b, none being "0/0".
    record Pair(long a, long b) {}

    static final DeviceSpecKnob<Pair> PAIR = DeviceSpecKnob.define("usnet.example.pair.", "example pair",
            "pair parameter", new DeviceSpecKnob.Syntax<>() {
                @Override
                public Pair none() {
                    return new Pair(0, 0);
                }

                @Override
                public boolean isNone(Pair v) {
                    return v.a() == 0 && v.b() == 0;
                }

                @Override
                public Pair parse(String text) {
                    String[] ab = text.split("/");
                    if (ab.length != 2) {
                        throw new IllegalArgumentException("'" + text + "' is not A/B");
                    }
                    return new Pair(Long.parseLong(ab[0]), Long.parseLong(ab[1]));
                }

                @Override
                public String format(Pair v) {
                    return v.a() + "/" + v.b();
                }

                @Override
                public List<String> params() {
                    return List.of("a", "b");
                }

                @Override
                public String get(Pair v, String param) {
                    return Long.toString(param.equals("a") ? v.a() : v.b());
                }

                @Override
                public Pair with(Pair v, String param, String text) {
                    long n = Long.parseLong(text);
                    return param.equals("a") ? new Pair(n, v.b()) : new Pair(v.a(), n);
                }
            });

    @Test
    void aNewPerDeviceSpecFamilyIsRecognisedFromItsDeclarationAlone() {
        Knobs k = new Knobs();
        assertEquals("0/0", k.get("usnet.example.pair.eth0"));
        k.set("usnet.example.pair.eth0.b", "5");
        assertEquals(new Pair(0, 5), PAIR.get(k.dev("eth0")), "the packet path's read");
        assertEquals(java.util.Map.of("usnet.example.pair.eth0.b", "5"), k.explicitValues());
        k.set("usnet.example.pair.eth0", "2/3");
        assertEquals("2/3", k.get("usnet.example.pair.eth0"));
        assertEquals("2", k.get("usnet.example.pair.eth0.a"));
        assertEquals(java.util.Map.of("usnet.example.pair.eth0.a", "2", "usnet.example.pair.eth0.b", "3"),
                k.explicitValues(), "a whole spec lists each parameter in force");
        k.set(PAIR, "eth1", new Pair(7, 0));
        assertEquals(new Pair(7, 0), k.get(PAIR, "eth1"));
        k.set("usnet.example.pair.eth0", "0/0");
        assertNull(PAIR.get(k.dev("eth0")), "none stores nothing");
        assertEquals(new Pair(0, 0), k.get(PAIR, "eth0"));
        var e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.example.pair.eth0.c", "1"));
        assertEquals("unknown knob 'usnet.example.pair.eth0.c': 'c' is not a pair parameter (did you mean 'a'? known: a, b)",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.example.pair.default", "1/1"));
        assertEquals("usnet.example.pair.default: example pair is set per device, not for 'default'", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.example.pair.eth0", "1"));
        assertEquals("usnet.example.pair.eth0: '1' is not A/B", e.getMessage());
        assertEquals("eth0.7", Knobs.deviceOf("usnet.example.pair.eth0.7.a"));
        assertTrue(Knobs.isPerDevice("usnet.example.pair.eth0") && Knobs.isDeviceSpec("usnet.example.pair.eth0"));
        assertTrue(Knobs.deviceFamilies().contains("usnet.example.pair."));
        assertTrue(Knobs.known().containsAll(List.of("usnet.example.pair.<dev>", "usnet.example.pair.<dev>.b")));
        k.forgetDevice("eth1");
        assertNull(k.explicitValues().get("usnet.example.pair.eth1.a"), "a device's spec leaves with it");
    }

    @Test
    void familiesMayNotOverlapWhateverTheirKind() {
        var e = assertThrows(IllegalStateException.class, () -> DeviceKnob.define("usnet.netem.x.", "y", 0, 0, 1,
                DeviceKnob.Combine.DEVICE));
        assertTrue(e.getMessage().contains("usnet.netem."), e.getMessage());
        e = assertThrows(IllegalStateException.class, () -> DeviceSpecKnob.define("net.ipv4.", "x", "x parameter",
                NetemSysctl.NETEM.syntax()));
        assertTrue(e.getMessage().contains("overlaps"), e.getMessage());
        e = assertThrows(IllegalStateException.class, () -> LongKnob.define("usnet.netem.eth0", 0, 0, 1, "shadows"));
        assertTrue(e.getMessage().contains("usnet.netem.eth0"), e.getMessage());
    }

    @Test
    void registryQueriesForTools() {
        assertTrue(Knobs.isPerDevice("net.ipv4.conf.eth0.no_such_knob"), "the family's to refuse, by name");
        assertTrue(Knobs.isPerDevice("net.ipv4.neigh.eth0.retrans_time_ms"));
        assertFalse(Knobs.isPerDevice("net.ipv4.tcp_sack"));
        assertFalse(Knobs.isDeviceSpec("net.ipv4.conf.eth0.forwarding"));
        assertEquals("net.ipv4.conf.p1.proxy_arp", Knobs.deviceKey(Ipv4Sysctl.CONF, "p1", "proxy_arp"));
        var e = assertThrows(IllegalArgumentException.class, () -> Knobs.deviceKey(Ipv4Sysctl.CONF, "p1", "proxyarp"));
        assertEquals("unknown knob 'net.ipv4.conf.p1.proxyarp' (did you mean 'net.ipv4.conf.p1.proxy_arp'?)",
                e.getMessage());
        assertTrue(Knobs.anyDeclaredUnder("net.ipv4."));
        assertTrue(Knobs.anyDeclaredUnder("usnet.netem.eth0"), "within a family");
        assertTrue(Knobs.anyDeclaredUnder("net.ipv6."), "the IPv6 family declares its knobs");
        assertFalse(Knobs.anyDeclaredUnder("net.mpls."), "nothing declared there");
    }

    @Test
    void aNeighbourTableIsDeclarableUnderAnotherFamilyWithTheSameNamesAndDefaults() {
        NeighSysctl.Table t = NeighSysctl.Table.declare("usnet.example.neigh.");
        NeighSysctl.Table v4 = NeighSysctl.IPV4;
        assertEquals("usnet.example.neigh.", t.family());
        assertEquals(v4.deviceKnobs().size(), t.deviceKnobs().size());
        for (int i = 0; i < t.deviceKnobs().size(); i++) {
            DeviceKnob a = v4.deviceKnobs().get(i);
            DeviceKnob b = t.deviceKnobs().get(i);
            assertEquals(a.name(), b.name());
            assertEquals(a.defaultValue(), b.defaultValue(), b.pattern());
            assertEquals(a.min(), b.min(), b.pattern());
            assertEquals(a.max(), b.max(), b.pattern());
        }
        assertSame(t.gcThresh3, Knobs.declared("usnet.example.neigh.default.gc_thresh3"));
        Knobs k = new Knobs();
        k.set("usnet.example.neigh.eth0.ucast_solicit", "7");
        assertEquals(7, k.dev("eth0").get(t.ucastSolicit));
        assertEquals(3, k.dev("eth0").get(NeighSysctl.UCAST_SOLICIT), "IPv4's table keeps its own value");
        assertEquals("eth0", Knobs.deviceOf("usnet.example.neigh.eth0.ucast_solicit"));
        assertSame(NeighSysctl.IPV4.ucastSolicit, NeighSysctl.UCAST_SOLICIT);
    }

    @Test
    void aNamespaceWideKnobMayNotShadowAPerDeviceOne() {
        var e = assertThrows(IllegalStateException.class,
                () -> LongKnob.define("net.ipv4.conf.eth0.forwarding", 0, 0, 1, "shadows conf.<dev>.forwarding"));
        assertTrue(e.getMessage().contains("net.ipv4.conf.eth0.forwarding"), e.getMessage());
        // A name under a family that no device knob has is free (gc_thresh1 is namespace-wide in Linux too).
        assertSame(NeighSysctl.GC_THRESH1, Knobs.declared("net.ipv4.neigh.default.gc_thresh1"));
        assertNull(Knobs.deviceOf("usnet.hz"));
    }

    @Test
    void combiningWithAllFollowsLinuxsOrAndMaxConf() {
        Knobs k = new Knobs();
        DevConf eth0 = k.dev("eth0");
        k.set("net.ipv4.conf.all.rp_filter", "2");
        k.set("net.ipv4.conf.eth0.rp_filter", "1");
        assertEquals(2, k.effective(Ipv4Sysctl.RP_FILTER, eth0), "rp_filter: the larger (IN_DEV_MAXCONF)");
        k.set("net.ipv4.conf.eth0.send_redirects", "0");
        assertEquals(1, k.effective(Ipv4Sysctl.SEND_REDIRECTS, eth0), "send_redirects: all's still on (ORCONF)");
        k.set("net.ipv4.conf.all.send_redirects", "0");
        assertEquals(0, k.effective(Ipv4Sysctl.SEND_REDIRECTS, eth0));
        k.set("net.ipv4.conf.all.arp_accept", "1");
        assertEquals(0, k.effective(Ipv4Sysctl.ARP_ACCEPT, eth0), "arp_accept: the device's own");
    }

    @Test
    void aSetIsReadByDeclarationAtOnce() {
        Knobs k = new Knobs();
        assertEquals(0, k.get(IcmpSysctl.ECHO_IGNORE_ALL));
        k.set("net.ipv4.icmp_echo_ignore_all", "1");
        assertEquals(1, k.get(IcmpSysctl.ECHO_IGNORE_ALL));
        k.set("usnet.cpu.machine", "box-1");
        assertEquals("box-1", k.get(CpuModelSysctl.MACHINE));
        var e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.cpu.machine", "a b"));
        assertTrue(e.getMessage().startsWith("usnet.cpu.machine: 'a b' is not a machine name"), e.getMessage());
        assertEquals("box-1", k.get("usnet.cpu.machine"));
    }
}
