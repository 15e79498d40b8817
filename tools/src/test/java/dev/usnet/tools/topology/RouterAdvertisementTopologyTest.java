package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.ipv6.Inet6Ifaddr;
import dev.usnet.core.route.Route6;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tools.topology.build.Topology;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A topology file's {@code usnet.ipv6.ra.*} knobs: a usnet router advertising, a usnet host configuring itself. */
class RouterAdvertisementTopologyTest {
    private static final String FILE = """
            version: 1
            namespaces:
              r:
                knobs:
                  net.ipv6.conf.all.forwarding: 1
                  usnet.ipv6.ra.eth0.send: 1
                  usnet.ipv6.ra.eth0.router_lifetime: 600
                devices:
                  - name: eth0
                    kind: veth
                    mac: 02:00:00:00:95:01
                    addresses: [2001:db8:95::1/64]
                    peer: {namespace: h, name: eth0, mac: 02:00:00:00:95:02}
              h:
                knobs:
                  net.ipv6.conf.all.disable_ipv6: 0
                  net.ipv6.conf.default.disable_ipv6: 0
            """;

    @Test
    void aHostGetsAnAddressAndADefaultRouteFromTheRoutersAdvertisements() {
        assertEquals(List.of(), TopologyFile.check("ra.yaml", FILE, List.of(), List.of()).warnings());
        VirtualScheduler sched = new VirtualScheduler();
        try (Topology t = TopologyBuilder.build(TopologyFile.parse("ra.yaml", FILE), n -> sched,
                TopologyBuilder.ExternalDevices.placeholders())) {
            sched.runFor(10_000_000_000L);
            NetStack h = t.stack("h");
            Ipv6Addr slaac = Ipv6Addr.parse("2001:db8:95::ff:fe00:9502");
            Inet6Ifaddr a = h.ipv6().addrconf().local(slaac.hi(), slaac.lo());
            assertNotNull(a, "SLAAC from the advertised prefix: " + h.ipv6().addrconf().list());
            assertEquals(Inet6Ifaddr.DadState.PREFERRED, a.state());
            Route6 def = h.ipv6().fib().get(Ipv6Addr.ANY, 0);
            assertNotNull(def, "a default route from the router lifetime");
            assertEquals(Ipv6Addr.parse("fe80::ff:fe00:9501"), def.gateway());
            assertTrue(t.stack("r").ipv6().ndisc().routerAdvertiser().advertising(t.device("r", "eth0")));
        }
    }
}
