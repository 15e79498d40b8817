package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.route.Route;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Packet;
import org.junit.jupiter.api.Test;

/**
 * TCP over IPv4's family operations (the sizes an IPv4 header imposes on segments) and where a namespace's TCP
 * lives: in IPv4's protocol table under protocol 6, which is also what closes it with the namespace.
 */
class TcpIpv4OpsTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void tcpIsTheIpv4ProtocolTableEntryForProtocolSix() {
        try (TestNet net = new TestNet()) {
            NetStack ns = net.ns("a");
            assertNull(Tcp.installedIn(ns));
            assertNull(ns.ipInput().protocol(Ipv4Packet.PROTO_TCP));
            Tcp tcp = Tcp.install(ns);
            assertSame(tcp, ns.ipInput().protocol(Ipv4Packet.PROTO_TCP));
            assertSame(tcp, Tcp.installedIn(ns));
            assertSame(tcp, Tcp.of(ns));
            assertSame(tcp, Tcp.install(ns), "a second install keeps the first");
            assertNull(Tcp.installedIn(net.ns("b")), "each namespace has its own table");
        }
    }

    @Test
    void theMssFromAnMtuLeavesRoomForTwentyBytesOfIpv4AndTwentyOfTcp() {
        try (TestNet net = new TestNet()) {
            TcpAfOps af = Tcp.install(net.ns("a")).ipv4();
            assertEquals(20, af.netHeaderLen());
            assertEquals(1460, af.mtuToMss(1500));
            assertEquals(536, af.mtuToMss(576));
            assertEquals(1500, af.mssToMtu(1460));
            assertEquals(9000, af.mssToMtu(af.mtuToMss(9000)));
        }
    }

    @Test
    void theAdvertisedMssFollowsTheOutgoingDevicesMtu() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            var veth = net.link(a, "veth0", "198.18.0.1/24", b, "veth0", "198.18.0.2/24");
            TcpIpv4Ops af = Tcp.install(a).ipv4();
            Route rt = af.routeConnect(TcpPair.SERVER);
            assertNotNull(rt);
            assertSame(veth[0], rt.dev());
            assertEquals(1460, af.advMss(rt));
            veth[0].setMtu(9000);
            assertEquals(8960, af.advMss(rt));
            // A local destination goes through loopback, whose 65535-byte MTU is IPv4's largest datagram.
            Route local = af.routeConnect(TcpPair.CLIENT);
            assertSame(a.loopback(), local.dev());
            assertEquals(65_495, af.advMss(local));
            assertEquals(TcpPair.CLIENT, af.sourceFor(rt, TcpPair.SERVER));
            assertNull(af.routeConnect(dev.usnet.core.wire.Ipv4Addr.parse("198.19.0.1")), "no route: unreachable");
        }
    }

    @Test
    void closingTheNamespaceAbortsItsConnectionsThroughTheProtocolTable() {
        TcpSock c;
        Tcp clientTcp;
        try (TcpPair pair = new TcpPair(3)) {
            clientTcp = pair.clientTcp;
            pair.serverTcp.listen(0, 5001, 16, child -> {});
            c = clientTcp.connect(TcpPair.SERVER, 5001, new TcpSock.Callbacks() {});
            assertTrue(pair.until(() -> c.state() == TcpState.ESTABLISHED, SECOND));
            assertEquals(1, clientTcp.sockets().size());
        }
        // The pair's close closes both namespaces; nothing but the namespace's close touched the connection.
        assertEquals(TcpState.CLOSED, c.state());
        assertTrue(clientTcp.sockets().isEmpty());
    }
}
