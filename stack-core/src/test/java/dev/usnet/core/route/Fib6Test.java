package dev.usnet.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.wire.Ipv6Addr;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Fib6Test {
    private static Route6 r(String prefix, int len, Device dev) {
        return new Route6(Ipv6Addr.parse(prefix), len, RouteType.UNICAST, null, dev, Route6.METRIC_USER, false);
    }

    private static Route6 lookup(Fib6 t, String dst) {
        Ipv6Addr a = Ipv6Addr.parse(dst);
        return t.lookup(a.hi(), a.lo());
    }

    @Test
    void longestPrefixWinsAcrossBothHalves() {
        Fib6 t = new Fib6();
        assertNull(lookup(t, "2001:db8::1"));
        Route6 def = r("::", 0, null);
        Route6 net = r("2001:db8::", 32, null);
        Route6 sub = r("2001:db8:1::", 64, null);
        Route6 deep = r("2001:db8:1::ab00:0", 120, null);
        Route6 host = r("2001:db8:1::ab00:7", 128, null);
        for (Route6 x : List.of(def, net, sub, deep, host)) {
            t.add(x);
        }
        assertSame(def, lookup(t, "fd00::1"));
        assertSame(net, lookup(t, "2001:db8:2::1"));
        assertSame(sub, lookup(t, "2001:db8:1::1"));
        assertSame(deep, lookup(t, "2001:db8:1::ab00:6"));
        assertSame(host, lookup(t, "2001:db8:1::ab00:7"));
        assertSame(sub, lookup(t, "2001:db8:1::ab01:7"));
        assertEquals("2001:db8:1::ab00:0/120", deep.prefix() + "/" + deep.prefixLen(), "the prefix is stored masked");
        t.remove(Ipv6Addr.parse("2001:db8:1::ab00:7"), 128);
        assertSame(deep, lookup(t, "2001:db8:1::ab00:7"));
        assertEquals(4, t.size());
    }

    @Test
    void fastLookupAgreesWithTheScanOnRandomTables() {
        Random rnd = new Random(6);
        Fib6 t = new Fib6();
        List<Ipv6Addr> probes = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            long hi = 0x2001_0db8_0000_0000L | (rnd.nextLong() & 0xffff_ffffL);
            long lo = rnd.nextInt(4) == 0 ? rnd.nextLong() : 0;
            int len = new int[] {32, 40, 48, 56, 64, 96, 112, 127, 128}[rnd.nextInt(9)];
            t.add(new Route6(new Ipv6Addr(hi, lo), len, RouteType.UNICAST, null, null, Route6.METRIC_USER, false));
            probes.add(new Ipv6Addr(hi, lo));
            probes.add(new Ipv6Addr(hi ^ (1L << rnd.nextInt(32)), lo ^ rnd.nextLong()));
            if (i % 500 == 0) {
                check(t, probes);
            }
        }
        check(t, probes);
    }

    private static void check(Fib6 t, List<Ipv6Addr> probes) {
        for (Ipv6Addr p : probes) {
            assertSame(t.lookupSlow(p.hi(), p.lo()), t.lookup(p.hi(), p.lo()), p.toString());
        }
    }

    @Test
    void routesOfOnePrefixStandSideBySideLowestMetricFirst() {
        Fib6 t = new Fib6();
        Device a = new Loopback();
        Device b = new Loopback();
        Route6 low = new Route6(Ipv6Addr.parse("2001:db8::"), 64, RouteType.UNICAST, null, a, 256, true);
        Route6 high = new Route6(Ipv6Addr.parse("2001:db8::"), 64, RouteType.UNICAST, Ipv6Addr.parse("fe80::1"), b, 1024, false);
        t.add(high);
        t.add(low);
        assertSame(low, lookup(t, "2001:db8::5"));
        Ipv6Addr d = Ipv6Addr.parse("2001:db8::5");
        assertSame(high, t.lookup(d.hi(), d.lo(), b), "a lookup bound to a device takes that device's route");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> t.addNew(new Route6(Ipv6Addr.parse("2001:db8::"), 64, RouteType.UNICAST, null, b, 1024, false)));
        assertEquals("route 2001:db8::/64 exists (RTNETLINK: File exists)", e.getMessage());
        Route6 over = new Route6(Ipv6Addr.parse("2001:db8::"), 64, RouteType.UNICAST, null, b, 256, false);
        assertSame(low, t.replace(over));
        assertSame(over, lookup(t, "2001:db8::5"));
        assertEquals(0, t.removeDevice(a), "the replaced route no longer counts as the device's");
        assertEquals(2, t.size());
    }

    @Test
    void everyDeviceHasItsOwnLinkLocalRoute() {
        Fib6 t = new Fib6();
        Device a = new Loopback();
        Device b = new Loopback();
        Route6 ra = new Route6(Ipv6Addr.parse("fe80::"), 64, RouteType.UNICAST, null, a, 256, true);
        Route6 rb = new Route6(Ipv6Addr.parse("fe80::"), 64, RouteType.UNICAST, null, b, 256, true);
        t.add(ra);
        t.add(rb);
        Ipv6Addr d = Ipv6Addr.parse("fe80::99");
        assertSame(ra, t.lookup(d.hi(), d.lo(), a));
        assertSame(rb, t.lookup(d.hi(), d.lo(), b));
        t.removeConnected(Ipv6Addr.parse("fe80::"), 64, a);
        assertNull(t.lookup(d.hi(), d.lo(), a));
        assertSame(rb, t.lookup(d.hi(), d.lo(), b));
    }

    @Test
    void aDeviceTakesItsRoutesWithItAndTheListenerHearsEachChange() {
        Fib6 t = new Fib6();
        List<String> heard = new ArrayList<>();
        t.setListener((r, added) -> heard.add((added ? "+" : "-") + r.prefix() + "/" + r.prefixLen()));
        Device a = new Loopback();
        Device b = new Loopback();
        t.add(r("2001:db8:1::", 64, a));
        t.add(r("2001:db8:1::", 48, a));
        t.add(r("2001:db8:2::", 64, b));
        t.add(new Route6(Ipv6Addr.parse("2001:db8:9::"), 64, RouteType.BLACKHOLE, null, null, 1024, false));
        assertEquals(2, t.removeDevice(a));
        assertNull(lookup(t, "2001:db8:1::1"));
        assertEquals(b, lookup(t, "2001:db8:2::1").dev());
        assertEquals(RouteType.BLACKHOLE, lookup(t, "2001:db8:9::1").type());
        assertEquals(List.of("+2001:db8:1::/64", "+2001:db8:1::/48", "+2001:db8:2::/64", "+2001:db8:9::/64",
                "-2001:db8:1::/64", "-2001:db8:1::/48"), heard);
        assertEquals(List.of("2001:db8:2::/64 dev lo metric 1024", "blackhole 2001:db8:9::/64 metric 1024"),
                t.list().stream().map(Route6::toString).toList());
    }

    @Test
    void listsLongestPrefixFirstAsIpShowsThem() {
        Fib6 t = new Fib6();
        Device lo = new Loopback();
        t.add(new Route6(Ipv6Addr.ANY, 0, RouteType.UNICAST, Ipv6Addr.parse("2001:db8::1"), lo, 1024, false));
        t.add(new Route6(Ipv6Addr.parse("2001:db8::"), 64, RouteType.UNICAST, null, lo, 256, true));
        assertEquals(List.of("2001:db8::/64 dev lo proto kernel metric 256", "default via 2001:db8::1 dev lo metric 1024"),
                t.list().stream().map(Route6::toString).toList());
        assertThrows(IllegalArgumentException.class, () -> r("::", 129, null));
    }
}
