package dev.usnet.tcp.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.time.Timeout;

/**
 * Bulk transfer, like netperf's TCP_STREAM: the client writes from one preallocated buffer as fast as the
 * send buffer (so cwnd and the peer's window) allows, for {@link AppConfig#count()} bytes or
 * {@link AppConfig#durationNanos()}; the server is a sink that discards what arrives (or reads it, with
 * {@link AppConfig#readBytes()}) and closes at the end of stream.
 *
 * <p>Throughput, client: with a byte count, all bytes over the time from the handshake to the server's FIN
 * (the sink has everything and closed, as netperf's elapsed time ends); with a duration, the bytes the peer
 * acknowledged within it (tcpi_bytes_acked), so data still in the send buffer at the end does not count.
 * Server: bytes received from accept to the end of stream. TCP_NODELAY is off unless the config sets it.
 *
 * <p>With {@link Params#intervalNanos()} the client is application-limited instead: one write of
 * {@code writeBytes} every interval (skipped while the previous one is not all in TCP yet), as a paced source
 * such as a video stream or {@code usnet demo}'s streams writes.
 */
public final class StreamApp {
    private StreamApp() {}

    /**
     * @param writeBytes bytes per write() (netperf's send size, {@code -m}); default 64 KiB
     * @param intervalNanos 0: write as fast as TCP takes it; above 0: one write every interval
     */
    public record Params(int writeBytes, long intervalNanos) {
        public Params {
            if (writeBytes < 1) {
                throw new IllegalArgumentException("write size " + writeBytes + " must be positive");
            }
            if (intervalNanos < 0) {
                throw new IllegalArgumentException("write interval " + intervalNanos + " ns must not be negative");
            }
        }

        /** A bulk stream: writes as fast as TCP takes it. */
        public Params(int writeBytes) {
            this(writeBytes, 0);
        }

        public static Params defaults() {
            return new Params(64 * 1024);
        }
    }

    /** A sender in {@code stack} to {@code server}:{@code cfg.port()}. */
    public static Client client(NetStack stack, int server, AppConfig cfg, Params p) {
        return new Client(stack, server, cfg, p);
    }

    public static Client client(NetStack stack, int server, AppConfig cfg) {
        return client(stack, server, cfg, Params.defaults());
    }

    /** A sink in {@code stack} listening on {@code cfg.port()} of every local address. */
    public static Server server(NetStack stack, AppConfig cfg) {
        return new Server(stack, 0, cfg);
    }

    /** A sender in {@code stack} to IPv6 {@code server}:{@code cfg.port()} (an AF_INET6 socket). */
    public static Client client(NetStack stack, Ipv6Addr server, AppConfig cfg, Params p) {
        Client c = new Client(stack, 0, cfg, p);
        c.overIpv6(server);
        return c;
    }

    /**
     * A sink in {@code stack} listening on IPv6 {@code bindAddr}:{@code cfg.port()} ({@link Ipv6Addr#ANY}: every
     * local address, IPv4 ones too unless net.ipv6.bindv6only).
     */
    public static Server server(NetStack stack, AppConfig cfg, Ipv6Addr bindAddr) {
        Server s = new Server(stack, 0, cfg);
        s.overIpv6(bindAddr);
        return s;
    }

    /** The sending end. */
    public static final class Client extends App {
        private final long intervalNanos;
        private final int writeBytes;
        private final Runnable paceTask = timed(this::pace);
        private Timeout paceTimer;
        /** Paced: bytes handed to {@link #send} so far. */
        private long handed;
        private long baselineAcked;
        private long ackedInWindow = -1;

        Client(NetStack stack, int server, AppConfig cfg, Params p) {
            super("stream", Role.CLIENT, stack, server, cfg, false, p.writeBytes(), false);
            this.intervalNanos = p.intervalNanos();
            this.writeBytes = p.writeBytes();
        }

        @Override
        void onStart() {
            // The SYN is not payload: count acknowledged bytes from here.
            baselineAcked = sock.info().bytesAcked();
            if (intervalNanos > 0) {
                pace();
            } else {
                send(cfg.count() > 0 ? cfg.count() : Long.MAX_VALUE);
            }
        }

        /** One write every interval; none while the last one is not all in TCP (the send buffer is full). */
        private void pace() {
            paceTimer = null;
            if (!running()) {
                return;
            }
            long limit = cfg.count() > 0 ? cfg.count() : Long.MAX_VALUE;
            if (owed() == 0 && handed < limit) {
                long n = Math.min(writeBytes, limit - handed);
                handed += n;
                send(n);
            }
            if (running() && handed < limit) {
                paceTimer = sched.schedule(paceTask, intervalNanos);
            }
        }

        @Override
        void onSent() {
            // The byte count is written: FIN after it; the measurement ends when the sink closes too.
            if (intervalNanos == 0 || cfg.count() > 0 && handed >= cfg.count()) {
                sock.shutdownOutput();
            }
        }

        @Override
        void onEnd() {
            if (paceTimer != null) {
                paceTimer.cancel();
                paceTimer = null;
            }
        }

        @Override
        void onReadable() {
            while (take(Integer.MAX_VALUE) > 0) {
                // A sink does not answer; whatever comes is dropped.
            }
        }

        @Override
        void requestStop() {
            ackedInWindow = sock.info().bytesAcked() - baselineAcked;
            endMeasurement();
        }

        @Override
        long throughputBytes() {
            if (ackedInWindow >= 0) {
                return ackedInWindow;
            }
            // Ended by the byte count (or the peer): what was written and acknowledged (the FIN takes a
            // sequence number too, hence the min).
            return endInfo() == null ? 0 : Math.min(bytesSent, endInfo().bytesAcked() - baselineAcked);
        }
    }

    /** The sink. */
    public static final class Server extends App {
        Server(NetStack stack, int bindAddr, AppConfig cfg) {
            super("stream", Role.SERVER, stack, bindAddr, cfg, false, 1, false);
        }

        @Override
        void onStart() {}

        @Override
        void onReadable() {
            while (take(Integer.MAX_VALUE) > 0) {
                // discard
            }
        }
    }
}
