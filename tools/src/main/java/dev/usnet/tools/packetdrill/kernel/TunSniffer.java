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

/**
 * What the kernel sends on tun0, with the time the kernel sent it. A packet socket (AF_PACKET, bound to tun0, all
 * protocols) sees each outgoing packet as the device takes it from its queue, and the kernel stamps it right then
 * (read back with SIOCGSTAMPNS). The runner's own thread reads that socket in {@link #next}: the packets wait in the
 * socket with their stamps until asked for, so neither a busy machine's scheduling delays nor the time the runner
 * spends elsewhere shift a packet's time, and a packet reaches the runner with a single wake-up (the kernel's).
 *
 * <p>The TUN fd itself is drained by a background thread (it holds the same packets, discarded), so tun0's queue
 * never fills. Only outgoing IPv4 and IPv6 packets are returned (the runner picks the version it runs over);
 * anything else (nothing is expected on a layer-3 TUN) is counted and dropped. The kernel stamps in CLOCK_REALTIME; the offset to
 * {@link System#nanoTime()} is measured once when the sniffer is made.
 */
final class TunSniffer implements AutoCloseable {
    /** The longest single wait in poll; the drain thread looks at its stop flag this often. */
    private static final int POLL_MS = 20;
    /** A TUN without offloads carries packets of at most the MTU; 64 KiB covers any MTU a script can set. */
    private static final int BUFFER = 65536;
    /** Room for every packet a script's kernel may send between two {@code >} lines (SO_RCVBUFFORCE, root). */
    private static final int RECEIVE_BUFFER = 8 << 20;
    private static final int SO_RCVBUFFORCE = 33;
    private static final int AF_PACKET = 17;
    /** ETH_P_ALL in network byte order, as sll_protocol and socket()'s protocol want it. */
    private static final int ETH_P_ALL_BE = 0x0300;
    private static final int SOCKADDR_LL_SIZE = 20;
    private static final int PACKET_OUTGOING = 4;
    private static final long SIOCGSTAMPNS = 0x8907;
    /** A stamp further than this from the reader's own clock is not a transmit stamp (then the read time is used). */
    private static final long PLAUSIBLE_NANOS = 1_000_000_000L;

    private final TunDevice tun;
    private final int packetFd;
    private final ScriptClock clock;
    private final long realtimeMinusNanoTime;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment buf = arena.allocate(BUFFER, 8);
    private final MemorySegment from = arena.allocate(SOCKADDR_LL_SIZE, 8);
    private final MemorySegment fromLen = arena.allocate(JAVA_INT);
    private final MemorySegment stamp = arena.allocate(16, 8);
    private final MemorySegment pollFd = arena.allocate(SocketCalls.POLLFD_SIZE, 8);
    private final Thread drainer;
    private volatile boolean stopping;
    private volatile String drainFailure;
    private long otherDropped;
    private long unstamped;
    private boolean closed;

    private TunSniffer(TunDevice tun, int packetFd, ScriptClock clock) {
        this.tun = tun;
        this.packetFd = packetFd;
        this.clock = clock;
        this.realtimeMinusNanoTime = realtimeOffset();
        pollFd.set(JAVA_INT, 0, packetFd);
        pollFd.set(JAVA_SHORT, 4, SocketCalls.POLLIN);
        this.drainer = Thread.ofPlatform().daemon(true).name("usnet-pd-tun0-drain").unstarted(this::drainLoop);
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
            MemorySegment size = a.allocate(JAVA_INT);
            size.set(JAVA_INT, 0, RECEIVE_BUFFER);
            // Best effort: without it the default buffer still holds a few hundred packets.
            SocketCalls.setsockopt(fd, Libc.SOL_SOCKET, SO_RCVBUFFORCE, size, 4);
            // The first SIOCGSTAMPNS switches the kernel's packet stamping on (it answers ENOENT: nothing received
            // yet); asked now, every packet of the script is stamped. (SO_TIMESTAMPNS would stamp too, but then the
            // stamp comes only as a control message, and the ioctl no longer sees it.)
            SocketCalls.ioctl(fd, SIOCGSTAMPNS, a.allocate(16, 8));
            MemorySegment sll = a.allocate(SOCKADDR_LL_SIZE, 8);
            sll.set(JAVA_SHORT, 0, (short) AF_PACKET);
            sll.set(JAVA_SHORT, 2, (short) ETH_P_ALL_BE);
            sll.set(JAVA_INT, 4, tun.ifindex());
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
        drainer.start();
    }

    /** Reads and discards what waits on the TUN fd (the packet socket has it already). */
    private void drainLoop() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pfd = a.allocate(SocketCalls.POLLFD_SIZE, 8);
            MemorySegment scratch = a.allocate(BUFFER, 8);
            pfd.set(JAVA_INT, 0, tun.fd());
            pfd.set(JAVA_SHORT, 4, SocketCalls.POLLIN);
            while (!stopping) {
                int r = SocketCalls.poll(pfd, 1, POLL_MS);
                if (r < 0 && SocketCalls.errno() != Errno.EINTR) {
                    drainFailure = "poll on tun0 failed: " + Errno.name(SocketCalls.errno());
                    return;
                }
                while (r > 0 && !stopping) {
                    long n = SocketCalls.read(tun.fd(), scratch, BUFFER);
                    if (n > 0) {
                        continue;
                    }
                    int e = SocketCalls.errno();
                    if (n < 0 && e != Errno.EAGAIN && e != Errno.EINTR && !stopping) {
                        drainFailure = "reading tun0 failed: " + Errno.name(e);
                        return;
                    }
                    break;
                }
            }
        }
    }

    /**
     * The oldest packet the kernel sent that was not yet taken, waiting until script time {@code deadlineMicros}
     * for one; null if none came by then (checked at least once, even when the deadline has passed).
     */
    synchronized Sniffed next(long deadlineMicros) {
        if (closed) {
            throw new IllegalStateException("the sniffer is closed");
        }
        while (true) {
            Sniffed s = receiveOne();
            if (s != null) {
                return s;
            }
            String f = drainFailure;
            if (f != null) {
                throw new TargetException(f);
            }
            long wait = clock.nanosUntil(deadlineMicros);
            if (wait <= 0) {
                return null;
            }
            int ms = (int) Math.min(POLL_MS, (wait + 999_999) / 1_000_000);
            if (SocketCalls.poll(pollFd, 1, ms) < 0 && SocketCalls.errno() != Errno.EINTR) {
                throw new TargetException("poll on the packet socket of tun0 failed: " + Errno.name(SocketCalls.errno()));
            }
        }
    }

    /** One outgoing IP packet waiting on the packet socket, stamped; null when none waits. */
    private Sniffed receiveOne() {
        while (true) {
            fromLen.set(JAVA_INT, 0, SOCKADDR_LL_SIZE);
            long n = SocketCalls.recvfrom(packetFd, buf, BUFFER, 0, from, fromLen);
            if (n < 0) {
                int e = SocketCalls.errno();
                if (e == Errno.EAGAIN || e == Errno.EINTR) {
                    return null;
                }
                throw new TargetException("reading the packet socket on tun0 failed: " + Errno.name(e));
            }
            long readAt = System.nanoTime();
            if ((from.get(JAVA_BYTE, 10) & 0xff) != PACKET_OUTGOING) {
                continue; // the packets the runner injected, seen arriving
            }
            int version = n == 0 ? 0 : buf.get(JAVA_BYTE, 0) & 0xf0;
            if (version != 0x40 && version != 0x60) {
                otherDropped++;
                continue;
            }
            long at = readAt;
            if (SocketCalls.ioctl(packetFd, SIOCGSTAMPNS, stamp) == 0) {
                long stamped = stamp.get(JAVA_LONG, 0) * 1_000_000_000L + stamp.get(JAVA_LONG, 8)
                        - realtimeMinusNanoTime;
                if (Math.abs(readAt - stamped) < PLAUSIBLE_NANOS) {
                    at = stamped;
                } else {
                    unstamped++;
                }
            } else {
                unstamped++;
            }
            return new Sniffed(buf.asSlice(0, n).toArray(JAVA_BYTE), clock.toMicros(at));
        }
    }

    /** Outgoing packets other than IPv4 and IPv6 seen and dropped so far. */
    synchronized long otherDropped() {
        return otherDropped;
    }

    /** Packets whose kernel stamp was missing or implausible, timed by their read instead. */
    synchronized long unstamped() {
        return unstamped;
    }

    /** Stops the drain thread (it looks at its flag every {@value #POLL_MS} ms), closes the packet socket. */
    @Override
    public void close() {
        stopping = true;
        if (drainer.isAlive() && drainer != Thread.currentThread()) {
            try {
                drainer.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        synchronized (this) {
            if (!closed) {
                closed = true;
                SocketCalls.close(packetFd);
                arena.close();
            }
        }
    }
}
