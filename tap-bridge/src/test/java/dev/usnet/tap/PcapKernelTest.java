package dev.usnet.tap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.pcap.PcapTap;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.RealTimeScheduler;
import io.netty.channel.IoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pcap4j.core.PcapHandle;
import org.pcap4j.core.Pcaps;

/**
 * A live NIC (a veth end inside a kernel namespace the test created) as a usnet bridge port through pcap4j,
 * bridged to a TAP into a second kernel namespace: the two kernels reach each other across usnet. The TAP's
 * capture, written by usnet, is read back with pcap4j frame by frame.
 */
class PcapKernelTest {
    private KernelNetns kns;
    private MultiThreadIoEventLoopGroup group;
    private NetStack stack;

    @BeforeEach
    void setUp() {
        KernelNetns.require(KernelNetns.available(), "needs root, /dev/net/tun and iproute2");
        KernelNetns.require(java.nio.file.Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libpcap.so.0.8"))
                || java.nio.file.Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libpcap.so.1")), "libpcap (apt-get install libpcap0.8)");
        kns = new KernelNetns();
        group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            if (stack != null) {
                onLoop(() -> {
                    stack.close();
                    return null;
                });
            }
            if (group != null) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            }
        } finally {
            // setUp stops at a missing prerequisite before it creates anything.
            if (kns != null) {
                kns.close();
            }
        }
    }

    private <T> T onLoop(Callable<T> task) throws Exception {
        return ((RealTimeScheduler) stack.scheduler()).executor().submit(task).get(10, TimeUnit.SECONDS);
    }

    @Test
    void pcapPortBridgedToATapCarriesTrafficBothWaysAndTheCaptureReadsBack(@TempDir Path tmp) throws Exception {
        KernelNetns.require(KernelNetns.has("ping"), "ping is not installed (apt-get install iputils-ping)");
        String p = kns.create("p");
        String q = kns.create("q");
        kns.exec(p, "ip", "link", "add", "pk0", "type", "veth", "peer", "name", "pk1");
        kns.exec(p, "ip", "addr", "add", "198.18.7.1/24", "dev", "pk1");
        kns.exec(p, "ip", "link", "set", "pk0", "up");
        kns.exec(p, "ip", "link", "set", "pk1", "up");

        IoEventLoop loop = group.next();
        stack = new NetStack("usnet-br", new RealTimeScheduler(loop), 3);
        PcapDevice nic = PcapDevice.open(stack, "nic0", p, "pk0", 0);
        TapDevice tap = TapDevice.open(stack, Tun.Options.inNetns(q, "utapq"), loop, 0x02_00_5e_00_01_0bL);
        Path capture = tmp.resolve("utapq.pcap");
        PcapWriter writer = new PcapWriter(capture);
        List<byte[]> seen = new ArrayList<>();
        onLoop(() -> {
            Bridge br = new Bridge("br0", 0x02_00_5e_00_01_0cL);
            stack.register(br);
            br.addPort(nic);
            br.addPort(tap);
            nic.setUp(true);
            tap.setUp(true);
            br.setUp(true);
            tap.addTap(new PcapTap(writer, PcapTap.Direction.INOUT, 0));
            tap.addTap((dev, pk, tx, now) -> {
                byte[] f = new byte[pk.length()];
                pk.buf().getBytes(pk.start(), f);
                seen.add(f);
            });
            return null;
        });
        kns.exec(q, "ip", "addr", "add", "198.18.7.2/24", "dev", "utapq");
        kns.exec(q, "ip", "link", "set", "utapq", "up");

        KernelNetns.Result r = kns.tryExec(20, p, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "1", "198.18.7.2");
        assertTrue(r.ok() && r.output().contains("3 received"), r.output());
        assertTrue(nic.captured() >= 4, "ARP request + 3 echo requests captured on the veth: " + nic.captured());
        assertTrue(nic.injected() >= 4, "ARP reply + 3 echo replies injected: " + nic.injected());
        assertEquals(0, nic.injectErrors());

        List<byte[]> frames = onLoop(() -> new ArrayList<>(seen));
        onLoop(() -> {
            writer.close();
            return null;
        });
        PcapHandle h = Pcaps.openOffline(capture.toString());
        try {
            int i = 0;
            byte[] f;
            while ((f = h.getNextRawPacket()) != null) {
                assertTrue(i < frames.size(), "more frames in the file than usnet saw");
                assertArrayEquals(frames.get(i), f, "frame " + i);
                i++;
            }
            assertEquals(frames.size(), i, "every frame usnet saw is in the file, in order");
            assertTrue(i >= 8, "requests in and replies out: " + i);
        } finally {
            h.close();
        }
    }

    /**
     * A pcap NIC that disappears (its kernel interface deleted under usnet): the capture loop ends, the device goes
     * down and takes no more frames, and the rest of the namespace goes on: a kernel behind a TAP on the same
     * bridge still pings usnet.
     */
    @Test
    void aPcapNicThatDisappearsGoesDownAndTheRestGoesOn() throws Exception {
        KernelNetns.require(KernelNetns.has("ping"), "ping is not installed (apt-get install iputils-ping)");
        String p = kns.create("pd");
        String q = kns.create("qd");
        kns.exec(p, "ip", "link", "add", "pd0", "type", "veth", "peer", "name", "pd1");
        kns.exec(p, "ip", "link", "set", "pd0", "up");
        kns.exec(p, "ip", "link", "set", "pd1", "up");
        IoEventLoop loop = group.next();
        stack = new NetStack("usnet-pd", new RealTimeScheduler(loop), 3);
        PcapDevice nic = PcapDevice.open(stack, "nic0", p, "pd0", 0);
        TapDevice tap = TapDevice.open(stack, Tun.Options.inNetns(q, "utapqd"), loop, 0x02_00_5e_00_02_0bL);
        Bridge br = new Bridge("br0", 0x02_00_5e_00_02_0cL);
        onLoop(() -> {
            stack.register(br);
            br.addPort(nic);
            br.addPort(tap);
            nic.setUp(true);
            tap.setUp(true);
            br.setUp(true);
            stack.devinet().add(br, dev.usnet.core.wire.Ipv4Addr.parse("198.18.8.1"), 24);
            return null;
        });
        kns.exec(q, "ip", "addr", "add", "198.18.8.2/24", "dev", "utapqd");
        kns.exec(q, "ip", "link", "set", "utapqd", "up");
        KernelNetns.Result before = kns.tryExec(20, q, "ping", "-n", "-c", "2", "-i", "0.2", "-W", "1", "198.18.8.1");
        assertTrue(before.ok() && before.output().contains("2 received"), before.output());

        kns.exec(p, "ip", "link", "del", "pd0");
        long end = System.nanoTime() + 5_000_000_000L;
        while (nic.isUp() && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        assertTrue(!nic.isUp(), "the NIC whose interface was deleted went down");
        long captured = nic.captured();
        KernelNetns.Result after = kns.tryExec(20, q, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "1", "198.18.8.1");
        assertTrue(after.ok() && after.output().contains("3 received"), "the rest goes on: " + after.output());
        assertEquals(captured, nic.captured(), "nothing more is taken from the gone NIC");
        assertTrue(tap.isUp() && br.isUp());
    }

}
