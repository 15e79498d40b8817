package dev.usnet.core.event;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.Device;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.neigh.NudState;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a namespace tells its listener, as {@code ip monitor} and {@code bridge monitor fdb} would print it. */
class NetListenerTest {
    private static final long A = 0x0200_0000_0a01L;

    /** Records every notification as a line. */
    static final class Recorder implements NetListener {
        final List<String> seen = new ArrayList<>();

        @Override
        public void linkChanged(Device dev) {
            seen.add("link " + dev.name() + " up=" + dev.isUp() + " carrier=" + dev.hasCarrier());
        }

        @Override
        public void fdbLearned(Bridge bridge, long mac, Device port) {
            seen.add("learn " + MacAddr.format(mac) + " " + port.name());
        }

        @Override
        public void fdbMoved(Bridge bridge, long mac, Device from, Device to) {
            seen.add("move " + MacAddr.format(mac) + " " + from.name() + "->" + to.name());
        }

        @Override
        public void fdbAged(Bridge bridge, long mac, Device port) {
            seen.add("age " + MacAddr.format(mac) + " " + port.name());
        }

        @Override
        public void neighChanged(Neighbour n, NudState from) {
            seen.add("neigh " + Ipv4Addr.format(n.ip()) + " " + from + "->" + n.state());
        }

        @Override
        public void neighDeleted(Neighbour n) {
            seen.add("neigh del " + Ipv4Addr.format(n.ip()));
        }

        @Override
        public void routeChanged(Route r, boolean added) {
            seen.add((added ? "route add " : "route del ") + r);
        }
    }

    @Test
    void aBridgeTellsLearnMoveAndAgeAndForgetsAPortThatGoesDown() {
        try (TestNet net = new TestNet()) {
            NetStack host = net.ns("host");
            Bridge br = new Bridge("br0", 0x0200_0000_00feL);
            host.register(br);
            br.setUp(true);
            br.setAgeingNanos(10_000_000_000L);
            TestNet.Wire p1 = net.wire(host, "p1", 0x0200_0000_1001L);
            TestNet.Wire p2 = net.wire(host, "p2", 0x0200_0000_1002L);
            br.addPort(p1.dutEnd);
            br.addPort(p2.dutEnd);
            Recorder r = new Recorder();
            host.setListener(r);
            p1.send(Frames.raw(A, MacAddr.BROADCAST, 0x0800, 60));
            net.settle();
            p1.send(Frames.raw(A, MacAddr.BROADCAST, 0x0800, 60));
            net.settle();
            p2.send(Frames.raw(A, MacAddr.BROADCAST, 0x0800, 60));
            net.settle();
            assertEquals(List.of("learn 02:00:00:00:0a:01 p1", "move 02:00:00:00:0a:01 p1->p2"), r.seen);
            assertEquals(1, br.fdb().learnedCount());
            assertEquals(3, br.fdb().localCount());
            r.seen.clear();
            net.sched.runFor(30_000_000_000L);
            assertEquals(List.of("age 02:00:00:00:0a:01 p2"), r.seen);
            assertEquals(0, br.fdb().learnedCount());
            p2.send(Frames.raw(A, MacAddr.BROADCAST, 0x0800, 60));
            net.settle();
            r.seen.clear();
            p2.dutEnd.setUp(false);
            assertEquals(0, br.fdb().learnedCount(), "what was learned behind a port that went down is forgotten");
            assertEquals(List.of("link p2 up=false carrier=false"), r.seen);
            host.setListener(null);
            p1.send(Frames.raw(0x0200_0000_0a02L, MacAddr.BROADCAST, 0x0800, 60));
            net.settle();
            assertEquals(1, r.seen.size(), "a removed listener hears nothing");
        }
    }

    @Test
    void neighbourStatesRoutesAndCarrierAreTold() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            var pair = net.link(a, "eth0", "198.18.0.1/24", b, "eth0", "198.18.0.2/24");
            Recorder ra = new Recorder();
            Recorder rb = new Recorder();
            a.setListener(ra);
            b.setListener(rb);
            var sock = a.udp().bind(0, 0);
            io.netty.buffer.ByteBuf d = io.netty.buffer.Unpooled.buffer(10).writeZero(10);
            try {
                sock.sendTo(Ipv4Addr.parse("198.18.0.2"), 9, d, 0, 10);
            } finally {
                d.release();
                sock.close();
            }
            net.settle();
            assertTrue(ra.seen.contains("neigh 198.18.0.2 NONE->INCOMPLETE"), ra.seen.toString());
            assertTrue(ra.seen.contains("neigh 198.18.0.2 INCOMPLETE->REACHABLE"), ra.seen.toString());
            assertTrue(rb.seen.contains("neigh 198.18.0.1 NONE->STALE"), rb.seen.toString());
            assertEquals(1, a.neigh().count(NudState.REACHABLE));
            assertEquals(0, a.neigh().count(NudState.INCOMPLETE));
            ra.seen.clear();
            assertEquals(1, a.neigh().flush(null));
            assertEquals(List.of("neigh del 198.18.0.2"), ra.seen);
            assertEquals(0, a.neigh().count(NudState.REACHABLE));
            ra.seen.clear();
            a.routes().addNew(new Route(Ipv4Addr.parse("198.18.9.0"), 24, RouteType.UNICAST, Ipv4Addr.parse("198.18.0.2"),
                    pair[0], 0, 0, false));
            a.routes().remove(Ipv4Addr.parse("198.18.9.0"), 24);
            assertEquals(List.of("route add 198.18.9.0/24 via 198.18.0.2 dev eth0", "route del 198.18.9.0/24 via 198.18.0.2 dev eth0"),
                    ra.seen);
            rb.seen.clear();
            pair[0].setUp(false);
            assertEquals(List.of("link eth0 up=true carrier=false"), rb.seen, "b's end lost carrier with a's");
            a.setListener(null);
            assertNull(a.listener());
        }
    }
}
