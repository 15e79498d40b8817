package dev.usnet.core.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.usnet.core.wire.Ipv4Addr;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Fib4Test {

    private static Route r(String prefix, int len) {
        return new Route(Ipv4Addr.parse(prefix), len, RouteType.UNICAST, 0, null, 0, 0, false);
    }

    @Test
    void longestPrefixWinsAndEdgesOfTheAddressSpaceWork() {
        Fib4 t = new Fib4();
        assertNull(t.lookup(Ipv4Addr.parse("1.2.3.4")));
        Route def = r("0.0.0.0", 0);
        Route net = r("198.18.0.0", 15);
        Route sub = r("198.19.2.0", 24);
        Route host = r("198.19.2.7", 32);
        Route top = r("255.255.255.255", 32);
        t.add(def);
        t.add(net);
        t.add(sub);
        t.add(host);
        t.add(top);
        assertSame(def, t.lookup(Ipv4Addr.parse("10.0.0.1")));
        assertSame(net, t.lookup(Ipv4Addr.parse("198.18.200.1")));
        assertSame(sub, t.lookup(Ipv4Addr.parse("198.19.2.6")));
        assertSame(host, t.lookup(Ipv4Addr.parse("198.19.2.7")));
        assertSame(sub, t.lookup(Ipv4Addr.parse("198.19.2.8")));
        assertSame(net, t.lookup(Ipv4Addr.parse("198.19.3.0")));
        assertSame(def, t.lookup(Ipv4Addr.parse("0.0.0.0")));
        assertSame(top, t.lookup(-1));
        assertSame(def, t.lookup(Ipv4Addr.parse("255.255.255.254")));
        t.remove(Ipv4Addr.parse("198.19.2.7"), 32);
        assertSame(sub, t.lookup(Ipv4Addr.parse("198.19.2.7")));
        t.remove(0, 0);
        assertNull(t.lookup(Ipv4Addr.parse("10.0.0.1")));
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
    void fastLookupMatchesBruteForceOnRandomTables(long seed) {
        Random rnd = new Random(seed);
        int n = 1 + rnd.nextInt(seed % 2 == 0 ? 20 : 2000);
        Fib4 t = new Fib4();
        int[] bases = new int[n];
        for (int i = 0; i < n; i++) {
            int len = rnd.nextInt(33);
            // Cluster prefixes so that they nest and overlap often.
            int a = rnd.nextBoolean() ? rnd.nextInt() : (0xc612_0000 | rnd.nextInt(1 << 16));
            bases[i] = a;
            t.add(new Route(a, len, RouteType.UNICAST, 0, null, 0, 0, false));
        }
        for (int k = 0; k < 300; k++) {
            int probe = rnd.nextInt(3) == 0 ? bases[rnd.nextInt(n)] ^ rnd.nextInt(256) : rnd.nextInt();
            Route fast = t.lookup(probe);
            Route slow = t.lookupSlow(probe);
            if (slow == null) {
                assertNull(fast, "probe " + Ipv4Addr.format(probe));
            } else {
                assertEquals(slow.prefixLen(), fast.prefixLen(), "probe " + Ipv4Addr.format(probe));
                assertEquals(slow.prefix(), fast.prefix(), "probe " + Ipv4Addr.format(probe));
            }
        }
    }

    @Test
    void indexedLookupOfAHundredThousandPrefixesMatchesBruteForce() {
        Random rnd = new Random(100_000);
        Fib4 t = new Fib4();
        for (int i = 0; i < 100_000; i++) {
            t.add(new Route(rnd.nextInt(), 8 + rnd.nextInt(25), RouteType.UNICAST, 0, null, 0, 0, false));
        }
        t.add(new Route(0, 0, RouteType.UNICAST, 0, null, 0, 0, false));
        for (int k = 0; k < 3000; k++) {
            int probe = rnd.nextInt();
            Route slow = t.lookupSlow(probe);
            Route fast = t.lookup(probe);
            assertEquals(slow.prefixLen(), fast.prefixLen(), Ipv4Addr.format(probe));
            assertEquals(slow.prefix(), fast.prefix(), Ipv4Addr.format(probe));
        }
    }

    @Test
    void addNewRefusesAnExistingPrefix() {
        Fib4 t = new Fib4();
        t.addNew(r("198.18.0.0", 24));
        var e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> t.addNew(r("198.18.0.0", 24)));
        assertEquals(true, e.getMessage().contains("exists"));
    }

    /**
     * removeDevice takes exactly the routes whose device is the one going away, whatever moved them there or away
     * since (replace, a better metric, remove, removeConnected): checked against a plain map of the same operations.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void removeDeviceTakesExactlyThatDevicesRoutesAfterAnyHistory(long seed) {
        Random rnd = new Random(seed);
        dev.usnet.core.device.Device[] devs = {
            new dev.usnet.core.device.Loopback(), new dev.usnet.core.device.Loopback(), new dev.usnet.core.device.Loopback()};
        Fib4 t = new Fib4();
        java.util.Map<String, Route> model = new java.util.HashMap<>();
        for (int step = 0; step < 3000; step++) {
            int prefix = 0xc612_0000 | (rnd.nextInt(64) << 2);
            int len = 30;
            String k = prefix + "/" + len;
            dev.usnet.core.device.Device d = devs[rnd.nextInt(devs.length)];
            Route r = new Route(prefix, len, RouteType.UNICAST, 0, d, prefix, rnd.nextInt(3), rnd.nextBoolean());
            switch (rnd.nextInt(6)) {
                case 0 -> {
                    Route old = model.get(k);
                    t.add(r);
                    if (old == null || r.metric() <= old.metric() || old.dev() == r.dev()) {
                        model.put(k, r);
                    }
                }
                case 1 -> {
                    t.replace(r);
                    model.put(k, r);
                }
                case 2 -> assertEquals(model.remove(k) != null, t.remove(prefix, len));
                case 3 -> {
                    Route old = model.get(k);
                    t.removeConnected(prefix, len, d);
                    if (old != null && old.connected() && old.dev() == d) {
                        model.remove(k);
                    }
                }
                default -> {
                    if (rnd.nextInt(20) == 0) {
                        long expected = model.values().stream().filter(x -> x.dev() == d).count();
                        model.values().removeIf(x -> x.dev() == d);
                        assertEquals(expected, t.removeDevice(d), "routes removed with the device");
                    }
                }
            }
            assertEquals(model.size(), t.size());
        }
        for (Route r : model.values()) {
            assertSame(r, t.get(r.prefix(), r.prefixLen()));
            assertSame(r, t.lookup(r.prefix() + 1));
        }
        for (dev.usnet.core.device.Device d : devs) {
            long expected = model.values().stream().filter(x -> x.dev() == d).count();
            assertEquals(expected, t.removeDevice(d));
        }
        assertEquals(0, t.size());
        assertNull(t.lookup(0xc612_0001));
    }
}
