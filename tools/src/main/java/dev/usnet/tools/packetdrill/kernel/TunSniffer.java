package dev.usnet.tools.packetdrill.kernel;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.SocketCalls;
import dev.usnet.tools.packetdrill.Sniffed;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Reads every packet the kernel sends on tun0 on a thread of its own and stamps it with {@link System#nanoTime()}
 * right after the read returns, so a packet's time is when the kernel handed it to the device, not when the runner
 * got round to asking. IPv4 packets are queued for {@link #next}; anything else (IPv6 is switched off in the test
 * namespace, but a stray one would not be the script's business) is counted and dropped.
 */
final class TunSniffer implements AutoCloseable {
    /** How often the reader looks at its stop flag while no packet comes. */
    private static final int POLL_MS = 20;
    /** A TUN without offloads hands over packets of at most the MTU; 64 KiB covers any MTU a script can set. */
    private static final int BUFFER = 65536;

    private record Stamped(byte[] packet, long nanoTime) {}

    private final TunDevice tun;
    private final ScriptClock clock;
    private final LinkedBlockingQueue<Stamped> queue = new LinkedBlockingQueue<>();
    private final Thread reader;
    private volatile boolean stopping;
    private volatile String failure;
    private volatile long nonIpv4;

    TunSniffer(TunDevice tun, ScriptClock clock) {
        this.tun = tun;
        this.clock = clock;
        this.reader = Thread.ofPlatform().daemon(true).name("usnet-pd-tun0-reader").unstarted(this::readLoop);
        reader.setPriority(Thread.MAX_PRIORITY);
    }

    void start() {
        reader.start();
    }

    private void readLoop() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pfd = arena.allocate(SocketCalls.POLLFD_SIZE, 8);
            MemorySegment buf = arena.allocate(BUFFER, 8);
            pfd.set(JAVA_INT, 0, tun.fd());
            pfd.set(JAVA_SHORT, 4, SocketCalls.POLLIN);
            while (!stopping) {
                int r = SocketCalls.poll(pfd, 1, POLL_MS);
                if (r < 0 && SocketCalls.errno() != Errno.EINTR) {
                    failure = "poll on tun0 failed: " + Errno.name(SocketCalls.errno());
                    return;
                }
                if (r <= 0) {
                    continue;
                }
                // Drain: several packets may be queued on the device behind one wake-up.
                while (!stopping) {
                    long n = SocketCalls.read(tun.fd(), buf, BUFFER);
                    long at = System.nanoTime();
                    if (n < 0) {
                        int e = SocketCalls.errno();
                        if (e == Errno.EAGAIN || e == Errno.EINTR) {
                            break;
                        }
                        if (!stopping) {
                            failure = "reading tun0 failed: " + Errno.name(e);
                        }
                        return;
                    }
                    if (n == 0) {
                        break;
                    }
                    if ((buf.get(JAVA_BYTE, 0) & 0xf0) != 0x40) {
                        nonIpv4++;
                        continue;
                    }
                    queue.add(new Stamped(buf.asSlice(0, n).toArray(JAVA_BYTE), at));
                }
            }
        }
    }

    /**
     * The oldest packet not yet taken, waiting until script time {@code deadlineMicros}; null if none came by then.
     * Fails when the reader died (the message says why).
     */
    Sniffed next(long deadlineMicros) {
        while (true) {
            Stamped s = queue.poll();
            if (s == null) {
                checkAlive();
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

    private void checkAlive() {
        String f = failure;
        if (f != null) {
            throw new dev.usnet.tools.packetdrill.TargetException(f);
        }
    }

    /** Packets other than IPv4 read and dropped so far. */
    long nonIpv4Dropped() {
        return nonIpv4;
    }

    /** Stops the reader and waits for it (it looks at its flag every {@value #POLL_MS} ms). */
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
    }

    boolean isReaderAlive() {
        return reader.isAlive();
    }
}
