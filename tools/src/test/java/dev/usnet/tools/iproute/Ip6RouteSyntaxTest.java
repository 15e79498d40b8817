package dev.usnet.tools.iproute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv6Addr;
import org.junit.jupiter.api.Test;

/** {@code ip -6 route} syntax: which routes are IPv6, and what Linux makes of them. */
class Ip6RouteSyntaxTest {
    @Test
    void theFamilyIsTheRoutesOwn() {
        assertTrue(Ip6RouteSyntax.isIpv6("2001:db8::/64 dev eth0"));
        assertTrue(Ip6RouteSyntax.isIpv6("unreachable 2001:db8::/64"));
        assertTrue(Ip6RouteSyntax.isIpv6("default via fe80::1 dev eth0"));
        assertTrue(Ip6RouteSyntax.isIpv6("::/0 dev eth0"));
        assertFalse(Ip6RouteSyntax.isIpv6("default dev eth0"), "as ip route without -6");
        assertFalse(Ip6RouteSyntax.isIpv6("default via 198.18.0.1"));
        assertFalse(Ip6RouteSyntax.isIpv6("198.18.3.0/24 via 2001:db8::1"), "an IPv4 route with the wrong gateway");
        assertFalse(Ip6RouteSyntax.isIpv6("blackhole"));
    }

    @Test
    void prefixesAreAddressesWithoutHostBits() {
        assertEquals(new Ip6RouteSyntax.Prefix(Ipv6Addr.ANY, 0), Ip6RouteSyntax.prefix("default", "t"));
        assertEquals(new Ip6RouteSyntax.Prefix(Ipv6Addr.parse("2001:db8::5"), 128), Ip6RouteSyntax.prefix("2001:db8::5", "t"));
        assertEquals("route 't': 2001:db8::5/64 has host bits set (the prefix is 2001:db8::/64; Linux would cut it there"
                + " without a word)", assertThrows(IllegalArgumentException.class,
                () -> Ip6RouteSyntax.prefix("2001:db8::5/64", "t")).getMessage());
        assertEquals("route 't': prefix length '129' is not 0..128", assertThrows(IllegalArgumentException.class,
                () -> Ip6RouteSyntax.prefix("2001:db8::/129", "t")).getMessage());
    }

    @Test
    void metricsTypesAndWhatIsNotModelled() {
        NetStack s = new NetStack("t", new VirtualScheduler(), 1);
        try {
            Route6 r = Ip6RouteSyntax.parse("2001:db8::/64 dev lo metric 0", s);
            assertEquals(Route6.METRIC_USER, r.metric(), "metric 0 is the user default, as Linux has it");
            assertNull(r.gateway());
            Route6 b = Ip6RouteSyntax.parse("blackhole 2001:db8:1::/48 metric 9", s);
            assertEquals(RouteType.BLACKHOLE, b.type());
            assertEquals("lo", b.dev().name());
            assertEquals(9, b.metric());
            assertTrue(assertThrows(IllegalArgumentException.class, () -> Ip6RouteSyntax.parse(
                    "2001:db8::/64 dev lo pref high", s)).getMessage().contains("'pref high' is not modelled"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> Ip6RouteSyntax.parse(
                    "2001:db8::/64 dev lo src 2001:db8::1", s)).getMessage().contains("'src' is not supported for IPv6"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> Ip6RouteSyntax.parse(
                    "unreachable 2001:db8::/64 via fe80::1", s)).getMessage().contains("an unreachable route has no gateway"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> Ip6RouteSyntax.parse(
                    "2001:db8::/64 via ff02::1 dev lo", s)).getMessage().contains("is not a unicast address of a neighbour"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> Ip6RouteSyntax.parse(
                    "2001:db8::/64", s)).getMessage().contains("needs 'dev DEV' or 'via GW'"));
        } finally {
            s.close();
        }
    }
}
