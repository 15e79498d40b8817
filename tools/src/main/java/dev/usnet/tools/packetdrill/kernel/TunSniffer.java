package dev.usnet.tools.packetdrill.kernel;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SocketCalls;
import dev.usnet.tools.packetdrill.Sniffed;
import dev.usnet.tools.packetdrill.TargetException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Instant;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * What the kernel sends on tun0, with the time the kernel sent it. A packet socket (AF_PACKET, bound to tun0, all
 * protocols) sees each outgoing packet as the device takes it from its queue, and the kernel stamps it right then
 * (read back with SIOCGSTAMPNS): a packet's time does not depend on when the reader thread got the CPU, which on a
 * busy machine can be many milliseconds later. The reader thread also drains the TUN fd itself, so tun0's queue
 * never fills (what it reads there is the same packets, and is discarded).
 *
 * <p>Only outgoing IPv4 packets are queued for {@link #next}; anything else (IPv6 is switched off in the test
 * namespace, so nothing is expected) is counted and dropped. The kernel stamps in CLOCK_REALTIME; the offset to
 * {@link System#nanoTime()} is measured once when the sniffer is made.
 */
final class TunSniffer implements AutoCloseable {
    /** How often the reader looks at its stop flag while no packet comes. */
    private static final int POLL_MS = 20;
    /** A TUN without offloads carries packets of at most the MTU; 64 KiB covers any MTU a script can set. */
    private static final int BUFFER = 65536;
    private static final int AF_PACKET = 17;
    /** ETH_P_ALL in network byte order, as sll_protocol and socket()'s protocol want it. */
    private static final int ETH_P_ALL_BE = 0x0300;
    private static final int SOCKADDR_LL_SIZE = 20;
    private static final int PACKET_OUTGOING = 4;
    private static final long SIOCGSTAMPNS = 0x8907;
    /** A stamp further than this from the reader's own clock is not a transmit stamp (then the read time is used). */
    private static final long PLAUSIBLE_NANOS = 1_000_000_000L;

    private record Stamped(byte[] packet, long nanoTime) {}

    private final TunDevice tun;
    private final int packetFd;
    private final ScriptClock clock;
    private final long realtimeMinusNanoTime;
    private final LinkedBlockingQueue<Stamped> queue = new LinkedBlockingQueue<>();
    private final Thread reader;
    private volatile boolean stopping;
    private volatile String failure;
    private volatile long otherDropped;
    private volatile long implausibleStamps;

    private TunSniffer(TunDevice tun, int packetFd, ScriptClock clock) {
        this.tun = tun;
        this.packetFd = packetFd;
        this.clock = clock;
        this.realtimeMinusNanoTime = realtimeOffset();
        this.reader = Thread.ofPlatform().daemon(true).name("usnet-pd-tun0-reader").unstarted(this::readLoop);
    }

    /**
     * Opens the packet socket on tun0; must run on a thread inside the test namespace (the socket, and the ifindex
     * it binds to, belong to the namespace of the thread that makes it).
     */
    static TunSniffer createHere(TunDevice tun, ScriptClock clock) {
        int fd = SocketCalls.socket(AF_PACKET, SocketCalls.SOCK_DGRAM | Libc.SOCK_CLOEXEC | Libc.SOCK_NONBLOCK,
                ETH_P_ALL_BE);
        if (fd < 0) {
            throw new TargetException("socket(AF_PACKET) for sniffing tun0 failed: " + Errno.name(SocketCalls.errno())
                    + (SocketCalls.errno() == Errno.EPERM ? " (needs CAP_NET_RAW: run as root (sudo))" : ""));
        }
        boolean ok = false;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment sll = a.allocate(SOCKADDR_LL_SIZE, 8);
            sll.set(JAVA_SHORT, 0, (short) AF_PACKET);
            sll.set(JAVA_SHORT, 2, (short) ETH_P_ALL_BE);
            sll.set(JAVA_INT, 4, tun.ifindex());
            // The first SIOCGSTAMPNS switches the kernel's packet stamping on (it answers ENOENT: nothing received
            // yet); asked now, every packet of the script is stamped. (SO_TIMESTAMPNS would stamp too, but then the
            // stamp comes only as a control message, and the ioctl no longer sees it.)
            SocketCalls.ioctl(fd, SIOCGSTAMPNS, a.allocate(16, 8));
            if (SocketCalls.bind(fd, sll, SOCKADDR_LL_SIZE) < 0) {
                throw new TargetException("binding the packet socket to tun0 failed: " + Errno.name(SocketCalls.errno()));
            }
            ok = true;
            return new TunSniffer(tun, fd, clock);
        } finally {
            if (!ok) {
                SocketCalls.close(fd);
            }
        }
    }

    /** CLOCK_REALTIME minus CLOCK_MONOTONIC (nanoTime), from the tightest of a few bracketed readings. */
    private static long realtimeOffset() {
        long best = Long.MAX_VALUE;
        long offset = 0;
        for (int i = 0; i < 16; i++) {
            long t0 = System.nanoTime();
            Instant now = Instant.now();
            long t1 = System.nanoTime();
            if (t1 - t0 < best) {
                best = t1 - t0;
                offset = now.getEpochSecond() * 1_000_000_000L + now.getNano() - (t0 + (t1 - t0) / 2);
            }
        }
        return offset;
    }

    void start() {
        reader.start();
    }

    private void readLoop() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pfds = arena.allocate(2L * SocketCalls.POLLFD_SIZE, 8);
            MemorySegment buf = arena.allocate(BUFFER, 8);
            MemorySegment from = arena.allocate(SOCKADDR_LL_SIZE, 8);
            MemorySegment fromLen = arena.allocate(JAVA_INT);
            MemorySegment stamp = arena.allocate(16, 8);
            pfds.set(JAVA_INT, 0, packetFd);
            pfds.set(JAVA_SHORT, 4, SocketCalls.POLLIN);
            pfds.set(JAVA_INT, SocketCalls.POLLFD_SIZE, tun.fd());
            pfds.set(JAVA_SHORT, SocketCalls.POLLFD_SIZE + 4, SocketCalls.POLLIN);
            while (!stopping) {
                int r = SocketCalls.poll(pfds, 2, POLL_MS);
                if (r < 0 && SocketCalls.errno() != Errno.EINTR) {
                    failure = "poll on tun0 failed: " + Errno.name(SocketCalls.errno());
                    return;
                }
                if (r <= 0) {
                    continue;
                }
                if (!drainPacketSocket(buf, from, fromLen, stamp) || !drainTun(buf)) {
                    return;
                }
            }
        }
    }

    /** Queues every packet waiting on the packet socket with the kernel's stamp; false when the socket failed. */
    private boolean drainPacketSocket(MemorySegment buf, MemorySegment from, MemorySegment fromLen,
                                      MemorySegment stamp) {
        while (!stopping) {
            fromLen.set(JAVA_INT, 0, SOCKADDR_LL_SIZE);
            long n = SocketCalls.recvfrom(packetFd, buf, BUFFER, 0, from, fromLen);
            if (n < 0) {
                int e = SocketCalls.errno();
                if (e == Errno.EAGAIN || e == Errno.EINTR) {
                    return true;
                }
                if (!stopping) {
                    failure = "reading the packet socket on tun0 failed: " + Errno.name(e);
                }
                return false;
            }
            long readAt = System.nanoTime();
            int pkttype = from.get(JAVA_BYTE, 10) & 0xff;
            if (pkttype != PACKET_OUTGOING) {
                continue; // the packets the runner injected, seen arriving
            }
            long at = readAt;
            if (SocketCalls.ioctl(packetFd, SIOCGSTAMPNS, stamp) == 0) {
                long realtime = stamp.get(JAVA_LONG, 0) * 1_000_000_000L + stamp.get(JAVA_LONG, 8);
                long stamped = realtime - realtimeMinusNanoTime;
                if (Math.abs(readAt - stamped) < PLAUSIBLE_NANOS) {
                    at = stamped;
                } else {
                    implausibleStamps++;
                }
            } else {
                implausibleStamps++;
            }
            if (n == 0 || (buf.get(JAVA_BYTE, 0) & 0xf0) != 0x40) {
                otherDropped++;
                continue;
            }
            queue.add(new Stamped(buf.asSlice(0, n).toArray(JAVA_BYTE), at));
        }
        return true;
    }

    /** Reads and discards what waits on the TUN fd (the packet socket has it already); false when it failed. */
    private boolean drainTun(MemorySegment buf) {
        while (!stopping) {
            long n = SocketCalls.read(tun.fd(), buf, BUFFER);
            if (n > 0) {
                continue;
            }
            int e = SocketCalls.errno();
            if (n == 0 || e == Errno.EAGAIN || e == Errno.EINTR) {
                return true;
            }
            if (!stopping) {
                failure = "reading tun0 failed: " + Errno.name(e);
            }
            return false;
        }
        return true;
    }

    /**
     * The oldest packet not yet taken, waiting until script time {@code deadlineMicros}; null if none came by then.
     * Fails when the reader died (the message says why).
     */
    Sniffed next(long deadlineMicros) {
        while (true) {
            Stamped s = queue.poll();
            if (s == null) {
                String f = failure;
                if (f != null) {
                    throw new TargetException(f);
                }
                long wait = clock.nanosUntil(deadlineMicros);
                if (wait <= 0) {
                    return null;
                }
                try {
                    s = queue.poll(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(POLL_MS)), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return null;
                }
                if (s == null) {
                    continue;
                }
            }
            return new Sniffed(s.packet(), clock.toMicros(s.nanoTime()));
        }
    }

    /** Outgoing packets other than IPv4 seen and dropped so far. */
    long otherDropped() {
        return otherDropped;
    }

    /** Packets whose kernel stamp was missing or implausible, timed by the reader's read instead. */
    long unstamped() {
        return implausibleStamps;
    }

    /** Stops the reader (it looks at its flag every {@value #POLL_MS} ms), then closes the packet socket. */
    @Override
    public void close() {
        stopping = true;
        if (reader.isAlive() && reader != Thread.currentThread()) {
            try {
                reader.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        SocketCalls.close(packetFd);
    }
}
