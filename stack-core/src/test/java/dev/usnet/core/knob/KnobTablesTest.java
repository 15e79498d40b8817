package dev.usnet.core.knob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.bridge.BridgeSysctl;
import dev.usnet.core.ipv4.CowSysctl;
import dev.usnet.core.ipv4.IcmpSysctl;
import dev.usnet.core.ipv4.Ipv4Sysctl;
import dev.usnet.core.neigh.NeighSysctl;
import dev.usnet.core.stack.CpuModelSysctl;
import dev.usnet.core.netns.NetCoreSysctl;
import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** stack-core's knobs as tables next to their users: found like any module's, per-device families declared. */
class KnobTablesTest {
    private static final List<SysctlTable> CORE_TABLES = List.of(new NetCoreSysctl(), new CpuModelSysctl(),
            new Ipv4Sysctl(), new IcmpSysctl(), new NeighSysctl(), new BridgeSysctl(), new CowSysctl());

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
