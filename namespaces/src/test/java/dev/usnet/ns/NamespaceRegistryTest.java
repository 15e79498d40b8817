package dev.usnet.ns;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class NamespaceRegistryTest {
    private final VirtualScheduler sched = new VirtualScheduler();
    private final NamespaceRegistry reg = new NamespaceRegistry(n -> sched, 7);

    @AfterEach
    void tearDown() {
        reg.close();
        sched.runFor(1);
    }

    @Test
    void aHubWithHundredsOfPeersGivesEachItsOwnNsidAndReusesTheLowestFreedOne() {
        NetNamespace hub = reg.create("hub");
        List<NetNamespace> peers = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            peers.add(reg.create("p" + i));
            assertEquals(i, hub.nsidOf(peers.get(i)));
        }
        assertEquals(peers.get(200), hub.byNsid(200));
        reg.delete("p150");
        assertNull(hub.byNsid(150));
        assertEquals(150, hub.nsidOf(reg.create("q")), "the lowest free id, also above the small-Integer cache");
        assertEquals(300, hub.nsidOf(reg.create("r")));
    }

    @Test
    void nsidsAreAssignedOnFirstUseLowestFreeAndLocalToTheAssigner() {
        NetNamespace a = reg.create("a");
        NetNamespace b = reg.create("b");
        NetNamespace c = reg.create("c");
        assertTrue(a.peekNsid(b).isEmpty());
        assertEquals(0, a.nsidOf(c));
        assertEquals(1, a.nsidOf(b));
        assertEquals(1, a.nsidOf(b), "stable once assigned");
        assertTrue(b.peekNsid(a).isEmpty(), "assigning in a gives b nothing");
        assertEquals(0, b.nsidOf(a));
        assertEquals(c, a.byNsid(0));
        assertThrows(IllegalArgumentException.class, () -> a.setNsid(b, 0));
        reg.delete("c");
        assertNull(a.byNsid(0), "a forgets the id of a deleted namespace");
        assertEquals(0, a.nsidOf(reg.create("d")), "and reuses it");
    }

    @Test
    void vethAcrossNamespacesAssignsNsidsOnBothSides() {
        NetNamespace a = reg.create("a");
        NetNamespace b = reg.create("b");
        reg.createVeth(a, "veth-a", b, "veth-b");
        assertTrue(a.peekNsid(b).isPresent());
        assertTrue(b.peekNsid(a).isPresent());
        List<LinkInfo> links = reg.links(a, a);
        LinkInfo v = links.stream().filter(l -> l.name().equals("veth-a")).findFirst().orElseThrow();
        assertEquals(a.peekNsid(b).getAsInt(), v.linkNetnsid());
        assertEquals(b.stack().requireDevice("veth-b").ifindex(), v.peerIfindex());
    }

    @Test
    void queryByNsidEqualsEnterThenQuery() {
        NetNamespace host = reg.create("host");
        NetNamespace ctr = reg.create("ctr");
        VethEnd[] v = reg.createVeth(host, "veth0", ctr, "eth0");
        ctr.stack().devinet().add(v[1], Ipv4Addr.parse("198.18.7.2"), 24);
        v[1].setUp(true);
        int nsid = host.nsidOf(ctr);
        List<AddrInfo> byNsid = reg.addressesByNsid(host, nsid);
        List<AddrInfo> entered = NamespaceRegistry.addresses(ctr);
        assertEquals(entered, byNsid);
        assertTrue(byNsid.stream().anyMatch(x -> x.cidr().equals("198.18.7.2/24") && x.dev().equals("eth0")));
        List<LinkInfo> links = reg.linksByNsid(host, nsid);
        assertEquals(List.of("lo", "eth0"), links.stream().map(LinkInfo::name).toList());
        assertEquals(host.nsidOf(host), links.get(1).linkNetnsid(),
                "the peer's namespace is named by the asker's own nsid for it");
        var e = assertThrows(IllegalArgumentException.class, () -> reg.addressesByNsid(host, 42));
        assertTrue(e.getMessage().contains("nsid 42"));
    }

    @Test
    void movingADeviceFlushesItsAddressesAndRoutesAndGivesItANewIfindex() {
        NetNamespace a = reg.create("a");
        NetNamespace b = reg.create("b");
        NetNamespace c = reg.create("c");
        VethEnd[] v = reg.createVeth(a, "veth0", b, "veth1");
        a.stack().devinet().add(v[0], Ipv4Addr.parse("198.18.9.1"), 24);
        v[0].setUp(true);
        assertTrue(a.stack().routes().lookup(Ipv4Addr.parse("198.18.9.5")) != null);
        reg.createVeth(c, "x0", c, "x1");
        reg.moveDevice(v[0], c);
        assertNull(a.stack().device("veth0"));
        assertEquals(v[0], c.stack().device("veth0"));
        assertEquals(4, v[0].ifindex(), "lo=1, x0=2, x1=3 in c");
        assertTrue(a.stack().devinet().list().stream().noneMatch(x -> x.dev() == v[0]));
        assertTrue(c.stack().devinet().list(v[0]).isEmpty(), "addresses do not travel");
        assertNull(a.stack().routes().lookup(Ipv4Addr.parse("198.18.9.5")));
        assertFalse(v[0].isUp(), "a moved device arrives down");
        assertTrue(c.peekNsid(b).isPresent());
        reg.createVeth(a, "x0", a, "y0");
        var e = assertThrows(IllegalArgumentException.class, () -> reg.moveDevice(c.stack().requireDevice("x0"), a));
        assertTrue(e.getMessage().contains("already exists"));
    }

    @Test
    void deletingANamespaceDestroysItsDevicesAndTheirVethPeers() {
        NetNamespace a = reg.create("a");
        NetNamespace b = reg.create("b");
        reg.createVeth(a, "veth0", b, "veth1");
        assertTrue(b.stack().device("veth1") != null);
        reg.delete("a");
        assertNull(b.stack().device("veth1"), "the peer goes with it");
        assertFalse(a.isAlive());
        assertThrows(IllegalArgumentException.class, () -> reg.get("a"));
        assertThrows(IllegalArgumentException.class, () -> reg.create("b"));
    }
}
