package dev.usnet.tap;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.channel.IoEventLoop;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

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
        long t0 = System.nanoTime();
        long[] bridged = path(loop, frames, false);
        long[] routed = path(loop, frames, true);
        return new Result(bridged[0] + routed[0], bridged[1] + routed[1], bridged[2] + routed[2], System.nanoTime() - t0);
    }

    /** {sent, received, lost} through one throw-away namespace with two socket-pair TAPs. */
    private static long[] path(IoEventLoop loop, int frames, boolean router) throws TunException {
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
            return pump(a.peerFd(), b.peerFd(), frames, router);
        } finally {
            try {
                onLoop(loop, () -> {
                    stack.close();
                    return null;
                });
            } finally {
                for (int fd : peers) {
                    Tun.Native.close(fd);
                }
            }
        }
    }

    /** Plays host X behind the first TAP and host Y behind the second, alternating directions. */
    private static long[] pump(int fdX, int fdY, int frames, boolean router) {
        long sent = 0;
        long received = 0;
        long lost = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] small = {frame(arena, router, true, false), frame(arena, router, false, false)};
            MemorySegment[] big = {frame(arena, router, true, true), frame(arena, router, false, true)};
            MemorySegment rx = arena.allocate(VirtioNetHdr.LEN + GSO_LEN + 64);
            long lastProgress = System.nanoTime();
            for (int i = 0; i < frames; i++) {
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
                    if (sent - received - lost < limit) {
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
                if (Tun.Native.send(dir == 0 ? fdX : fdY, f, f.byteSize()) > 0) {
                    sent++;
                }
            }
            long end = System.nanoTime() + STALL_NANOS;
            while (received + lost < sent && System.nanoTime() < end) {
                received += drain(fdX, rx) + drain(fdY, rx);
            }
            lost = sent - received;
        }
        return new long[] {sent, received, lost};
    }

    private static long drain(int fd, MemorySegment rx) {
        long n = 0;
        while (Tun.Native.recv(fd, rx, rx.byteSize()) > 0) {
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
        ByteBuffer b = ByteBuffer.allocate(VirtioNetHdr.LEN + len).order(ByteOrder.BIG_ENDIAN);
        if (gso) {
            b.put(0, (byte) VirtioNetHdr.F_NEEDS_CSUM);
            b.put(1, (byte) VirtioNetHdr.GSO_TCPV4);
            b.putShort(2, Short.reverseBytes((short) (14 + 20 + 20)));
            b.putShort(4, Short.reverseBytes((short) GSO_SIZE));
            b.putShort(6, Short.reverseBytes((short) (14 + 20)));
            b.putShort(8, Short.reverseBytes((short) 16));
        }
        int e = VirtioNetHdr.LEN;
        long dst = router ? (fromX ? MAC_A : MAC_B) : (fromX ? MAC_Y : MAC_X);
        long src = fromX ? MAC_X : MAC_Y;
        putMac(b, e, dst);
        putMac(b, e + 6, src);
        b.putShort(e + 12, (short) 0x0800);
        int ip = e + 14;
        b.put(ip, (byte) 0x45);
        b.putShort(ip + 2, (short) (len - 14));
        b.putShort(ip + 6, (short) 0x4000);
        b.put(ip + 8, (byte) 64);
        b.put(ip + 9, (byte) (gso ? 6 : 1));
        b.putInt(ip + 12, fromX ? IP_X : IP_Y);
        b.putInt(ip + 16, fromX ? IP_Y : IP_X);
        b.putShort(ip + 10, (short) ipChecksum(b, ip));
        int l4 = ip + 20;
        if (gso) {
            b.putShort(l4, (short) 40000);
            b.putShort(l4 + 2, (short) 5201);
            b.put(l4 + 12, (byte) 0x50);
            b.put(l4 + 13, (byte) 0x10);
            b.putShort(l4 + 14, (short) 0xffff);
        } else {
            b.put(l4, (byte) 8);
        }
        MemorySegment m = arena.allocate(b.capacity());
        m.copyFrom(MemorySegment.ofArray(b.array()));
        return m;
    }

    private static void putMac(ByteBuffer b, int at, long mac) {
        for (int i = 0; i < 6; i++) {
            b.put(at + i, (byte) (mac >>> (40 - 8 * i)));
        }
    }

    private static int ipChecksum(ByteBuffer b, int at) {
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += b.getShort(at + i) & 0xffff;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return ~sum & 0xffff;
    }

    private static <T> T onLoop(IoEventLoop loop, Callable<T> task) {
        try {
            return loop.submit(task).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("warm-up on " + loop + ": " + e, e);
        }
    }
}
