package dev.usnet.tap;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tap.sys.Libc;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.IoEventLoop;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Sends frames through usnet's TAP data path — epoll loop, {@link TapDevice} read and write with the virtio-net
 * header, a bridge, an IPv4 router — before real traffic does, so that HotSpot has compiled it by then.
 *
 * <p>Why: a freshly started daemon runs its data path interpreted and then through C1 for a while. Measured on
 * the bridge example: pings at 10 ms right after start had p50 1.03 ms over the first 500 echoes and 0.22 ms only
 * after 3000 (compiled: 0.17 ms). Latency histograms recorded in those first seconds measure the JIT, not the path.
 *
 * <p>The TAPs here are {@link Tun#socketPair socket pairs}, so this needs no device and no privilege; it runs its
 * own throw-away namespaces on {@code loop} and plays both hosts from the calling thread, a few frames in flight,
 * one in four a 64 KiB TCP super-frame.
 */
public final class TapWarmUp {
    /** What a warm-up moved: frames sent, frames that arrived, frames given up on after a stall. */
    public record Result(long sent, long received, long lost, long nanos) {}

    private static final int IN_FLIGHT = 16;
    private static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    private static final long MAC_X = 0x02_00_5e_00_ff_01L;
    private static final long MAC_Y = 0x02_00_5e_00_ff_02L;
    private static final long MAC_A = 0x02_00_5e_00_ff_0aL;
    private static final long MAC_B = 0x02_00_5e_00_ff_0bL;
    // A /30 on each side of the router, inside 198.18.0.0/15; nothing of it leaves the throw-away namespaces.
    private static final int IP_X = Ipv4Addr.parse("198.19.255.2");
    private static final int IP_A = Ipv4Addr.parse("198.19.255.1");
    private static final int IP_Y = Ipv4Addr.parse("198.19.255.6");
    private static final int IP_B = Ipv4Addr.parse("198.19.255.5");
    private static final int SMALL_LEN = 98;
    private static final int GSO_LEN = 65_226;
    private static final int GSO_SIZE = 1448;

    private TapWarmUp() {}

    /** Moves about {@code frames} frames through a bridge and as many through a router, all on {@code loop}. */
    public static Result run(IoEventLoop loop, int frames) throws TunException {
        return run(loop, frames, () -> false);
    }

    /**
     * As {@link #run(IoEventLoop, int)}, but gives up as soon as {@code stop} answers true (checked before every
     * frame, also while waiting for one): a daemon told to stop during its warm-up must not finish it first.
     */
    public static Result run(IoEventLoop loop, int frames, BooleanSupplier stop) throws TunException {
        long t0 = System.nanoTime();
        long[] bridged = path(loop, frames, false, stop);
        long[] routed = stop.getAsBoolean() ? new long[3] : path(loop, frames, true, stop);
        return new Result(bridged[0] + routed[0], bridged[1] + routed[1], bridged[2] + routed[2], System.nanoTime() - t0);
    }

    /** {sent, received, lost} through one throw-away namespace with two socket-pair TAPs. */
    private static long[] path(IoEventLoop loop, int frames, boolean router, BooleanSupplier stop) throws TunException {
        NetStack stack = new NetStack(router ? "usnet-warm-up-router" : "usnet-warm-up-bridge", new RealTimeScheduler(loop), 1);
        List<Integer> peers = new ArrayList<>(2);
        try {
            Tun.SocketPair a = Tun.socketPair("warm-a");
            peers.add(a.peerFd());
            TapDevice ta = TapDevice.create(stack, a.tun(), loop, MAC_A);
            Tun.SocketPair b = Tun.socketPair("warm-b");
            peers.add(b.peerFd());
            TapDevice tb = TapDevice.create(stack, b.tun(), loop, MAC_B);
            onLoop(loop, () -> {
                if (router) {
                    stack.knobs().set("net.ipv4.ip_forward", "1");
                    stack.devinet().add(ta, IP_A, 30);
                    stack.devinet().add(tb, IP_B, 30);
                    stack.neigh().addPermanent(ta, IP_X, MAC_X);
                    stack.neigh().addPermanent(tb, IP_Y, MAC_Y);
                } else {
                    Bridge br = new Bridge("br0", MAC_A ^ 0x100);
                    stack.register(br);
                    br.addPort(ta);
                    br.addPort(tb);
                    br.setUp(true);
                }
                ta.setUp(true);
                tb.setUp(true);
                return null;
            });
            return pump(a.peerFd(), b.peerFd(), frames, router, stop);
        } finally {
            try {
                onLoop(loop, () -> {
                    stack.close();
                    return null;
                });
            } finally {
                for (int fd : peers) {
                    Libc.close(fd);
                }
            }
        }
    }

    /** Plays host X behind the first TAP and host Y behind the second, alternating directions. */
    private static long[] pump(int fdX, int fdY, int frames, boolean router, BooleanSupplier stop) {
        long sent = 0;
        long received = 0;
        long lost = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] small = {frame(arena, router, true, false), frame(arena, router, false, false)};
            MemorySegment[] big = {frame(arena, router, true, true), frame(arena, router, false, true)};
            MemorySegment rx = arena.allocate(VirtioNetHdr.LEN + GSO_LEN + 64);
            long lastProgress = System.nanoTime();
            for (int i = 0; i < frames && !stop.getAsBoolean(); i++) {
                int dir = i & 1;
                // Every fourth frame a super-frame, both ways; one at a time, because a socket pair (unlike a TAP)
                // answers a full buffer with EAGAIN, and two 64 KiB frames can fill the default one.
                boolean isBig = (i >> 1) % 4 == 3;
                MemorySegment f = isBig ? big[dir] : small[dir];
                int limit = isBig ? 1 : IN_FLIGHT;
                while (true) {
                    long got = drain(fdX, rx) + drain(fdY, rx);
                    received += got;
                    long now = System.nanoTime();
                    if (got > 0) {
                        lastProgress = now;
                    }
                    if (sent - received - lost < limit || stop.getAsBoolean()) {
                        break;
                    }
                    if (now - lastProgress > STALL_NANOS) {
                        // Frames that went missing (dropped somewhere) must not stop the warm-up: count them lost.
                        lost = sent - received;
                        lastProgress = now;
                        break;
                    }
                    Thread.onSpinWait();
                }
                if (Libc.send(dir == 0 ? fdX : fdY, f, f.byteSize(), 0) > 0) {
                    sent++;
                }
            }
            long end = System.nanoTime() + STALL_NANOS;
            while (received + lost < sent && System.nanoTime() < end && !stop.getAsBoolean()) {
                received += drain(fdX, rx) + drain(fdY, rx);
            }
            lost = sent - received;
        }
        return new long[] {sent, received, lost};
    }

    private static long drain(int fd, MemorySegment rx) {
        long n = 0;
        while (Libc.recv(fd, rx, rx.byteSize(), 0) > 0) {
            n++;
        }
        return n;
    }

    /**
     * virtio-net header + Ethernet + IPv4 (+ ICMP echo, or TCP as a GSO super-frame with a partial checksum), from
     * X to Y ({@code fromX}) or back. Through the router the frame goes to the router's MAC on its side.
     */
    private static MemorySegment frame(Arena arena, boolean router, boolean fromX, boolean gso) {
        int len = gso ? GSO_LEN : SMALL_LEN;
        byte[] bytes = new byte[VirtioNetHdr.LEN + len];
        ByteBuf b = Unpooled.wrappedBuffer(bytes);
        if (gso) {
            b.setByte(VirtioNetHdr.OFF_FLAGS, VirtioNetHdr.F_NEEDS_CSUM);
            b.setByte(VirtioNetHdr.OFF_GSO_TYPE, VirtioNetHdr.GSO_TCPV4);
            b.setShortLE(VirtioNetHdr.OFF_HDR_LEN, EthernetFrame.HEADER_LEN + 20 + 20);
            b.setShortLE(VirtioNetHdr.OFF_GSO_SIZE, GSO_SIZE);
            b.setShortLE(VirtioNetHdr.OFF_CSUM_START, EthernetFrame.HEADER_LEN + 20);
            b.setShortLE(VirtioNetHdr.OFF_CSUM_OFFSET, 16);
        }
        int e = VirtioNetHdr.LEN;
        MacAddr.set(b, e, router ? (fromX ? MAC_A : MAC_B) : (fromX ? MAC_Y : MAC_X));
        MacAddr.set(b, e + 6, fromX ? MAC_X : MAC_Y);
        b.setShort(e + 12, EthernetFrame.ETH_P_IP);
        int ip = e + EthernetFrame.HEADER_LEN;
        b.setByte(ip, 0x45);
        b.setShort(ip + 2, len - EthernetFrame.HEADER_LEN);
        b.setShort(ip + 6, 0x4000);
        b.setByte(ip + 8, 64);
        b.setByte(ip + 9, gso ? 6 : 1);
        b.setInt(ip + 12, fromX ? IP_X : IP_Y);
        b.setInt(ip + 16, fromX ? IP_Y : IP_X);
        b.setShort(ip + 10, Checksum.compute(b, ip, 20));
        int l4 = ip + 20;
        if (gso) {
            b.setShort(l4, 40000);
            b.setShort(l4 + 2, 5201);
            b.setByte(l4 + 12, 0x50);
            b.setByte(l4 + 13, 0x10);
            b.setShort(l4 + 14, 0xffff);
        } else {
            b.setByte(l4, 8);
        }
        return arena.allocateFrom(java.lang.foreign.ValueLayout.JAVA_BYTE, bytes);
    }

    private static <T> T onLoop(IoEventLoop loop, Callable<T> task) {
        try {
            return loop.submit(task).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("warm-up on " + loop + ": " + e, e);
        }
    }
}
