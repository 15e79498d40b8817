package dev.usnet.core.ipv6;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.ipv6.Inet6Ifaddr.DadState;
import dev.usnet.core.ipv6.Inet6Ifaddr.Origin;
import dev.usnet.core.route.Fib6;
import dev.usnet.core.route.Route6;
import dev.usnet.core.wire.Ipv6Addr;
import java.util.List;
import org.junit.jupiter.api.Test;

class AddrconfTest {
    private final Fib6 fib = new Fib6();
    private final Addrconf ac = new Addrconf(fib);
    private final Device a = new Loopback();
    private final Device b = new Loopback();

    private static Ipv6Addr ip(String s) {
        return Ipv6Addr.parse(s);
    }

    private Inet6Ifaddr add(Device dev, String addr, int len) {
        return ac.add(dev, ip(addr), len, Origin.STATIC, false, false);
    }

    private Ipv6Addr source(Device dev, String dst) {
        Inet6Ifaddr s = ac.selectSource(dev, ip(dst).hi(), ip(dst).lo());
        return s == null ? null : s.address();
    }

    @Test
    void anAddressMakesItsPrefixRouteAndIsFoundAsLocal() {
        Inet6Ifaddr x = add(a, "2001:db8:1::1", 64);
        assertSame(x, ac.local(ip("2001:db8:1::1").hi(), ip("2001:db8:1::1").lo()));
        assertNull(ac.local(ip("2001:db8:1::2").hi(), ip("2001:db8:1::2").lo()));
        Route6 r = fib.lookup(ip("2001:db8:1::99").hi(), ip("2001:db8:1::99").lo());
        assertEquals("2001:db8:1::/64 dev lo proto kernel metric 256", r.toString());
        add(a, "2001:db8:1::2", 64);
        assertEquals(1, fib.size(), "one prefix route for two addresses in it");
        ac.remove(a, ip("2001:db8:1::1"));
        assertEquals(1, fib.size(), "kept while another address of the device lies in the prefix");
        ac.remove(a, ip("2001:db8:1::2"));
        assertEquals(0, fib.size());
        assertEquals("2001:db8:1::1/64 scope global dev lo", x.toString());
    }

    @Test
    void refusesWhatLinuxRefuses() {
        add(a, "2001:db8::1", 64);
        assertEquals("2001:db8::1 already on lo (RTNETLINK: File exists)",
                assertThrows(IllegalArgumentException.class, () -> add(a, "2001:db8::1", 64)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> add(a, "ff02::1", 64));
        assertThrows(IllegalArgumentException.class, () -> add(a, "::", 64));
        assertThrows(IllegalArgumentException.class, () -> add(a, "2001:db8::2", 129));
    }

    @Test
    void linkUpMakesTheEui64LinkLocalAddressOnceAndLoopbackGetsColonColonOne() {
        Inet6Ifaddr ll = ac.linkUp(a, false, 0x0200_0000_c001L, false);
        assertEquals("fe80::ff:fe00:c001/64 scope link dev lo", ll.toString());
        assertEquals(Origin.LINK_LOCAL, ll.origin());
        assertNull(ac.linkUp(a, false, 0x0200_0000_c001L, false), "a second up makes no second address");
        assertNull(ac.linkUp(b, false, 0, false), "no MAC, no EUI-64 address");
        Inet6Ifaddr lo = ac.linkUp(b, true, 0, true);
        assertEquals("::1/128 scope host nodad dev lo", lo.toString());
        assertTrue(lo.preferred(), "the loopback address skips duplicate address detection");
        assertSame(ll, ac.linkLocal(a));
    }

    @Test
    void tentativeAddressesAreNotLocalUntilDetectionPasses() {
        Inet6Ifaddr t = ac.add(a, ip("2001:db8::7"), 64, Origin.STATIC, false, true);
        assertEquals(DadState.TENTATIVE, t.state());
        assertEquals("2001:db8::7/64 scope global tentative dev lo", t.toString());
        assertFalse(ac.isLocal(t.address().hi(), t.address().lo()));
        assertSame(t, ac.local(t.address().hi(), t.address().lo()), "still found, for detection to see it");
        assertNull(source(a, "2001:db8::9"), "never a source while tentative");
        ac.dadSucceeded(t);
        assertTrue(ac.isLocal(t.address().hi(), t.address().lo()));
        Inet6Ifaddr n = ac.add(a, ip("2001:db8::8"), 64, Origin.STATIC, true, true);
        assertEquals(DadState.PREFERRED, n.state(), "nodad");
        Inet6Ifaddr f = ac.add(b, ip("2001:db8:9::1"), 64, Origin.STATIC, false, true);
        ac.dadFailed(f);
        ac.dadSucceeded(f);
        assertEquals("2001:db8:9::1/64 scope global tentative dadfailed dev lo", f.toString());
    }

    @Test
    void sourceSelectionFollowsScopeDeviceAndLongestPrefix() {
        ac.linkUp(a, false, 0x0200_0000_000aL, false);
        ac.linkUp(b, false, 0x0200_0000_000bL, false);
        add(a, "2001:db8:a::1", 64);
        add(b, "2001:db8:b::1", 64);
        add(b, "fd00:b::1", 64);
        assertEquals(ip("fe80::ff:fe00:a"), source(a, "fe80::1"), "link-local destination: the device's link-local");
        assertEquals(ip("fe80::ff:fe00:b"), source(b, "ff02::1"), "link-scope multicast: link-local");
        assertEquals(ip("2001:db8:a::1"), source(a, "2001:db8:77::1"), "global: the outgoing device's global");
        assertEquals(ip("fd00:b::1"), source(b, "fd00:b:0:1::1"), "longest common prefix among the device's");
        assertEquals(ip("2001:db8:b::1"), source(a, "2001:db8:b::1"), "the destination itself when it is ours");
        Fib6 f2 = new Fib6();
        Addrconf only = new Addrconf(f2);
        only.linkUp(a, false, 0x0200_0000_000aL, false);
        assertEquals(ip("fe80::ff:fe00:a"), only.selectSource(a, ip("2001:db8::1").hi(), ip("2001:db8::1").lo()).address(),
                "a link-local source is better than none for a global destination");
    }

    @Test
    void manyAddressesStayFoundAndFlushTakesADevicesAll() {
        for (int i = 0; i < 2000; i++) {
            add(i % 2 == 0 ? a : b, "2001:db8:" + Integer.toHexString(i) + "::1", 64);
        }
        for (int i = 0; i < 2000; i++) {
            Ipv6Addr x = ip("2001:db8:" + Integer.toHexString(i) + "::1");
            assertTrue(ac.isLocal(x.hi(), x.lo()), x.toString());
            assertFalse(ac.isLocal(x.hi(), x.lo() + 1));
        }
        ac.flush(a);
        assertEquals(1000, ac.list().size());
        assertEquals(1000, fib.size());
        assertFalse(ac.isLocal(ip("2001:db8:0::1").hi(), ip("2001:db8:0::1").lo()));
        assertTrue(ac.isLocal(ip("2001:db8:1::1").hi(), ip("2001:db8:1::1").lo()));
        assertEquals(List.of(), ac.list(a));
    }
}
