package dev.usnet.tap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tap.sys.Errno;
import io.netty.channel.IoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * usnet against real kernels through TAP devices: kernel namespaces created per test (named usnet-t-PID-...),
 * addresses from 198.18.0.0/15 only, everything deleted afterwards. Needs root, /dev/net/tun, ip, ping and nc.
 */
class TapKernelTest {
    private static final long MAC_A = 0x02_00_5e_00_00_0aL;
    private static final long MAC_B = 0x02_00_5e_00_00_0bL;
    private static final long MAC_BR = 0x02_00_5e_00_00_0cL;

    private KernelNetns kns;
    private MultiThreadIoEventLoopGroup group;
    private final List<NetStack> stacks = new ArrayList<>();

    @BeforeEach
    void setUp() {
        KernelNetns.require(KernelNetns.available(), "needs root, /dev/net/tun and iproute2");
        kns = new KernelNetns();
        group = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            for (NetStack s : stacks) {
                onLoop(s, () -> {
                    s.close();
                    return null;
                });
            }
            stacks.clear();
            if (group != null) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            }
        } finally {
            if (kns != null) {
                kns.close();
            }
        }
    }

    private NetStack stack(String name, IoEventLoop loop) {
        NetStack s = new NetStack(name, new RealTimeScheduler(loop), 7);
        stacks.add(s);
        return s;
    }

    private static <T> T onLoop(NetStack s, Callable<T> task) throws Exception {
        return ((RealTimeScheduler) s.scheduler()).executor().submit(task).get(10, TimeUnit.SECONDS);
    }

    private static void await(String what, long timeoutMillis, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    private void kernelAddr(String netns, TapDevice tap, String cidr) {
        kns.exec(netns, "ip", "addr", "add", cidr, "dev", tap.tun().name());
        kns.exec(netns, "ip", "link", "set", tap.tun().name(), "up");
    }

    private KernelNetns.Result ping(String netns, String dst, int count) {
        KernelNetns.require(KernelNetns.has("ping"), "ping is not installed (apt-get install iputils-ping)");
        return kns.tryExec(20, netns, "ping", "-n", "-c", String.valueOf(count), "-i", "0.2", "-W", "1", dst);
    }

    /** tun refuses writes with EIO while the kernel's interface is down: counted as such, not as a write error. */
    @Test
    void framesSentWhileTheKernelSideIsDownAreCountedNotLogged() throws Exception {
        String k = kns.create("kd");
        IoEventLoop loop = group.next();
        NetStack s = stack("usnet-kd", loop);
        TapDevice tap = TapDevice.open(s, Tun.Options.inNetns(k, "utapd"), loop, MAC_A);
        Callable<Void> sendOne = () -> {
            Packet p = Packet.allocate(Buffers.HEADROOM, 60);
            p.buf().writeZero(60);
            p.buf().setBytes(p.start(), new byte[] {-1, -1, -1, -1, -1, -1, 2, 0, 0x5e, 0, 0, 0x0a, 0x08, 0x06});
            tap.transmit(p);
            return null;
        };
        onLoop(s, () -> {
            tap.setUp(true);
            return null;
        });
        onLoop(s, sendOne);
        TapStats st = tap.tapStats();
        assertEquals(1, st.txKernelDown, st.toString());
        assertEquals(0, st.writeErrors + st.txFrames, st.toString());
        kns.exec(k, "ip", "link", "set", "utapd", "up");
        onLoop(s, sendOne);
        assertEquals(1, st.txFrames, "written once the kernel side is up: " + st);
        assertEquals(1, st.txKernelDown);
    }

    /**
     * The TAP fd returning errors: tun refuses a frame shorter than an Ethernet header with EINVAL. Each refusal
     * is counted as a write error with its errno (logged once), the frame is freed, and the device stays up and
     * writes the next good frame; the kernel side sees it.
     */
    @Test
    void writesTheKernelRefusesAreCountedWithTheirErrnoAndTheDeviceGoesOn() throws Exception {
        String k = kns.create("ke");
        IoEventLoop loop = group.next();
        NetStack s = stack("usnet-ke", loop);
        TapDevice tap = TapDevice.open(s, Tun.Options.inNetns(k, "utape"), loop, MAC_A);
        kns.exec(k, "ip", "link", "set", "utape", "up");
        onLoop(s, () -> {
            tap.setUp(true);
            return null;
        });
        Callable<Void> sendRunt = () -> {
            Packet p = Packet.allocate(Buffers.HEADROOM, 10);
            p.buf().writeZero(10);
            tap.transmit(p);
            return null;
        };
        Callable<Void> sendGood = () -> {
            Packet p = Packet.allocate(Buffers.HEADROOM, 60);
            p.buf().writeZero(60);
            p.buf().setBytes(p.start(), new byte[] {-1, -1, -1, -1, -1, -1, 2, 0, 0x5e, 0, 0, 0x0a, 0x08, 0x06});
            tap.transmit(p);
            return null;
        };
        for (int i = 0; i < 3; i++) {
            onLoop(s, sendRunt);
        }
        TapStats st = tap.tapStats();
        assertEquals(3, st.writeErrors, st.toString());
        assertEquals(Errno.EINVAL, st.lastWriteErrno, st.toString());
        assertEquals(0, st.txFrames, st.toString());
        assertTrue(tap.isUp() && tap.goneReason() == null, "a refused write does not take the device down");
        long kernelRx = Long.parseLong(kns.exec(k, "cat", "/sys/class/net/utape/statistics/rx_packets").trim());
        onLoop(s, sendGood);
        assertEquals(1, st.txFrames, "the next good frame is written: " + st);
        await("the kernel side to receive the good frame", 5000, () -> Long.parseLong(
                kns.exec(k, "cat", "/sys/class/net/utape/statistics/rx_packets").trim()) == kernelRx + 1);
    }

    /** (a) The kernel in namespace K pings usnet's address on a TAP born in K: usnet answers ARP and echo. */
    @Test
    void kernelPingsUsnetThroughATapBornInItsNamespace() throws Exception {
        String k = kns.create("k");
        IoEventLoop loop = group.next();
        NetStack s = stack("usnet-a", loop);
        // The namespace and the TAP share one loop: writes happen inline, no hand-over.
        TapDevice tap = TapDevice.open(s, Tun.Options.inNetns(k, "utap0"), loop, MAC_A);
        onLoop(s, () -> {
            s.devinet().add(tap, Ipv4Addr.parse("198.18.5.2"), 24);
            tap.setUp(true);
            return null;
        });
        assertEquals("utap0", tap.tun().name());
        assertTrue(kns.exec(k, "ip", "link", "show", "utap0").contains("utap0"), "the TAP lives in K");
        kernelAddr(k, tap, "198.18.5.1/24");

        KernelNetns.Result r = ping(k, "198.18.5.2", 3);
        assertTrue(r.ok() && r.output().contains("3 received"), r.output());
        TapStats st = tap.tapStats();
        assertTrue(st.rxFrames >= 4, "ARP request + 3 echo requests read: " + st);
        assertTrue(st.txFrames >= 4, "ARP reply + 3 echo replies written: " + st);
        assertTrue(tap.stats().rxPackets >= 4 && tap.stats().txPackets >= 4, "device counters");
        assertEquals(0, st.readErrors + st.writeErrors + st.writeEagain, st.toString());
        assertTrue(kns.exec(k, "ip", "neigh", "show", "198.18.5.2").contains("02:00:5e:00:00:0a"),
                "the kernel resolved usnet's MAC over ARP");

        onLoop(s, () -> {
            tap.delete();
            return null;
        });
        assertTrue(!tap.tun().isOpen(), "deleting the device closes the fd");
        await("the kernel to remove utap0 with its last fd", 5000,
                () -> !KernelNetns.run(5, "ip", "-n", k, "link", "show", "utap0").ok());
    }

    /** (b) Namespaces A and B, a TAP in each, both ports of one usnet bridge: A pings B. */
    @Test
    void twoKernelNamespacesPingAcrossAUsnetBridge() throws Exception {
        String a = kns.create("a");
        String b = kns.create("b");
        IoEventLoop nsLoop = group.next();
        IoEventLoop tapLoop = group.next();
        assertNotSame(nsLoop, tapLoop);
        NetStack s = stack("usnet-b", nsLoop);
        // TAPs on another loop than the namespace: writes go through the hand-over queue.
        TapDevice ta = TapDevice.open(s, Tun.Options.inNetns(a, "utapA"), tapLoop, MAC_A);
        TapDevice tb = TapDevice.open(s, Tun.Options.inNetns(b, "utapB"), tapLoop, MAC_B);
        bridge(s, ta, tb, null);
        kernelAddr(a, ta, "198.18.6.1/24");
        kernelAddr(b, tb, "198.18.6.2/24");

        KernelNetns.Result r = ping(a, "198.18.6.2", 3);
        assertTrue(r.ok() && r.output().contains("3 received"), r.output());
        assertTrue(ta.tapStats().rxFrames >= 4 && tb.tapStats().txFrames >= 4, "A->B: " + ta.tapStats() + " / " + tb.tapStats());
        assertTrue(tb.tapStats().rxFrames >= 4 && ta.tapStats().txFrames >= 4, "B->A: " + tb.tapStats() + " / " + ta.tapStats());
        assertEquals(0, ta.tapStats().txQueueDrops.get() + tb.tapStats().txQueueDrops.get());

        // A plain TAP cannot take a GSO super-frame (usnet has no software segmentation yet): refused, counted.
        long drops = s.drops().get(DropReason.PKT_TOO_BIG);
        onLoop(s, () -> {
            Packet p = Packet.allocate(Buffers.HEADROOM, 4000);
            p.buf().writeZero(4000);
            p.setGso(Packet.GSO_TCPV4, 1448);
            tb.transmit(p);
            return null;
        });
        assertEquals(1, tb.tapStats().txGsoDropped.get());
        assertEquals(drops + 1, s.drops().get(DropReason.PKT_TOO_BIG));
    }

    private static Bridge bridge(NetStack s, TapDevice ta, TapDevice tb, String brAddr) throws Exception {
        Bridge br = new Bridge("br0", MAC_BR);
        s.register(br);
        onLoop(s, () -> {
            br.addPort(ta);
            br.addPort(tb);
            ta.setUp(true);
            tb.setUp(true);
            br.setUp(true);
            if (brAddr != null) {
                s.devinet().add(br, Ipv4Addr.parse(brAddr), 24);
            }
            return null;
        });
        return br;
    }

    /**
     * (c) Deleting namespace B while A pings across the bridge: usnet logs "device gone" once, marks B's TAP down,
     * and keeps serving A. B's TAP is born privately and moved into B, so B's deletion really removes it (a TAP
     * born inside B by setns would keep B alive through its fd).
     */
    @Test
    void deletingANamespaceLeavesTheRestRunning() throws Exception {
        String a = kns.create("a");
        String b = kns.create("b");
        IoEventLoop nsLoop = group.next();
        IoEventLoop tapLoop = group.next();
        NetStack s = stack("usnet-c", nsLoop);
        TapDevice ta = TapDevice.open(s, Tun.Options.movedInto(a, "utapA"), tapLoop, MAC_A);
        TapDevice tb = TapDevice.open(s, Tun.Options.movedInto(b, "utapB"), tapLoop, MAC_B);
        assertTrue(kns.exec(b, "ip", "link", "show", "utapB").contains("utapB"), "moved into B");
        bridge(s, ta, tb, "198.18.6.3");
        kernelAddr(a, ta, "198.18.6.1/24");
        kernelAddr(b, tb, "198.18.6.2/24");

        KernelNetns.require(KernelNetns.has("ping"), "ping is not installed");
        Path out = Files.createTempFile("usnet-ping", ".out");
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream origErr = System.err;
        try {
            kns.start(a, out, "ping", "-n", "-i", "0.05", "-c", "200", "-W", "1", "198.18.6.2");
            await("pings to reach B", 5000, () -> tb.tapStats().txFrames >= 5 && tb.tapStats().rxFrames >= 5);
            System.setErr(new PrintStream(new Tee(origErr, log), true, StandardCharsets.UTF_8));
            long before = tb.tapStats().txFrames;
            assertTrue(kns.delete(b).ok(), "ip netns del B");
            await("usnet to notice B's TAP is gone", 5000, tb::isGone);
            assertTrue(tb.goneReason().contains("EBADFD") || tb.goneReason().contains("EPOLLERR"), tb.goneReason());
            assertEquals(1, tb.tapStats().gone);
            assertTrue(!tb.isUp() && !tb.hasCarrier(), "B's TAP is down");
            assertTrue(!tb.tun().isOpen(), "the fd of a gone TAP is closed");
            assertTrue(tb.tapStats().txFrames >= before);

            // A's TAP and the event loops carry on: A pings usnet's bridge address.
            KernelNetns.Result r = ping(a, "198.18.6.3", 3);
            assertTrue(r.ok() && r.output().contains("3 received"), r.output());
            assertEquals(0, ta.tapStats().readErrors + ta.tapStats().writeErrors);
            assertEquals(0, ta.tapStats().gone);
        } finally {
            System.setErr(origErr);
            Files.deleteIfExists(out);
        }
        String logged = log.toString(StandardCharsets.UTF_8);
        assertTrue(logged.contains("tap utapB: device gone ("), "logged: " + logged);
        assertEquals(1, logged.split("device gone", -1).length - 1, "logged once: " + logged);
    }

    /**
     * (e) With IFF_VNET_HDR and offloads on both TAPs, a TCP transfer from A to B passes the bridge as 64 KiB
     * GSO super-frames, unsegmented.
     */
    @Test
    void tcpTransferPassesTheBridgeAsGsoSuperFrames() throws Exception {
        KernelNetns.require(KernelNetns.has("nc"), "nc is not installed (apt-get install netcat-openbsd)");
        String a = kns.create("a");
        String b = kns.create("b");
        IoEventLoop loop = group.next();
        NetStack s = stack("usnet-e", loop);
        TapDevice ta = TapDevice.open(s, Tun.Options.inNetns(a, "utapA").withVnetHdr(true), loop, MAC_A);
        TapDevice tb = TapDevice.open(s, Tun.Options.inNetns(b, "utapB").withVnetHdr(true), loop, MAC_B);
        assertTrue(ta.gsoOffload() && ta.txChecksumOffload());
        bridge(s, ta, tb, null);
        kernelAddr(a, ta, "198.18.6.1/24");
        kernelAddr(b, tb, "198.18.6.2/24");

        Path got = Files.createTempFile("usnet-nc", ".out");
        try {
            Process server = kns.start(b, got, "sh", "-c", "timeout 15 nc -l -p 5001 | wc -c");
            await("nc to listen in B", 5000,
                    () -> kns.tryExec(5, b, "ss", "-ltnH", "sport = :5001").output().contains("5001"));
            long t0 = System.nanoTime();
            KernelNetns.Result c = kns.tryExec(20, a, "sh", "-c", "head -c 20000000 /dev/zero | nc -q 1 198.18.6.2 5001");
            assertTrue(c.ok(), "nc client: " + c.output());
            assertTrue(server.waitFor(15, TimeUnit.SECONDS), "nc server finished");
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals("20000000", Files.readString(got).trim(), "bytes received in B");
            TapStats sa = ta.tapStats();
            TapStats sb = tb.tapStats();
            System.out.println("20 MB A->B in " + ms + " ms; tap A " + sa + "; tap B " + sb);
            assertTrue(sa.rxGsoFrames > 0 && sa.rxMaxGsoSize > 0, "A's kernel handed over GSO frames: " + sa);
            assertTrue(sa.rxMaxFrame > 1514, "super-frames larger than the MTU: " + sa);
            assertTrue(sb.txGsoFrames > 0, "GSO frames went out to B unsegmented: " + sb);
            assertEquals(0, sa.readErrors + sa.writeErrors + sb.readErrors + sb.writeErrors, sa + " / " + sb);
        } finally {
            Files.deleteIfExists(got);
        }
    }

    /** Copies everything written to two streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream a;
        private final OutputStream b;

        Tee(OutputStream a, OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public void write(int x) throws IOException {
            a.write(x);
            b.write(x);
        }

        @Override
        public void write(byte[] buf, int off, int len) throws IOException {
            a.write(buf, off, len);
            b.write(buf, off, len);
        }

        @Override
        public void flush() throws IOException {
            a.flush();
            b.flush();
        }
    }

    /**
     * TUNSETIFF with IFF_TUN_EXCL: a persistent TAP of the name (ip tuntap add) is not adopted, and another kind of
     * link of the name is refused with the same clear EBUSY; both are left exactly as they were.
     */
    @Test
    void anExistingLinkOfTheNameIsRefusedAndLeftAsItWas() {
        String ns = "usnet-sf-" + ProcessHandle.current().pid() + "-ex";
        try {
            assertTrue(KernelNetns.run(10, "ip", "netns", "add", ns).ok());
            assertTrue(KernelNetns.run(10, "ip", "-n", ns, "tuntap", "add", "usnet-sf-pt0", "mode", "tap").ok());
            assertTrue(KernelNetns.run(10, "ip", "-n", ns, "addr", "add", "198.18.60.2/24", "dev", "usnet-sf-pt0").ok());
            assertTrue(KernelNetns.run(10, "ip", "-n", ns, "link", "add", "usnet-sf-v0", "type", "veth", "peer", "name",
                    "usnet-sf-v1").ok());
            String before = KernelNetns.run(10, "ip", "-n", ns, "-d", "addr", "show").output();
            for (String name : List.of("usnet-sf-pt0", "usnet-sf-v0")) {
                TunException e = assertThrows(TunException.class, () -> Tun.open(Tun.Options.inNetns(ns, name)));
                assertTrue(e.getMessage().contains("EBUSY") && e.getMessage().contains(name + " already exists"), e.getMessage());
            }
            assertEquals(before, KernelNetns.run(10, "ip", "-n", ns, "-d", "addr", "show").output());
        } finally {
            KernelNetns.run(10, "ip", "netns", "del", ns);
        }
    }
}
