package dev.usnet.tcp.app;

import dev.usnet.core.stack.NetStack;

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
 */
public final class StreamApp {
    private StreamApp() {}

    /** @param writeBytes bytes per write() (netperf's send size, {@code -m}); default 64 KiB */
    public record Params(int writeBytes) {
        public Params {
            if (writeBytes < 1) {
                throw new IllegalArgumentException("write size " + writeBytes + " must be positive");
            }
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

    /** The sending end. */
    public static final class Client extends App {
        private long baselineAcked;
        private long ackedInWindow = -1;

        Client(NetStack stack, int server, AppConfig cfg, Params p) {
            super("stream", Role.CLIENT, stack, server, cfg, false, p.writeBytes(), false);
        }

        @Override
        void onStart() {
            // The SYN is not payload: count acknowledged bytes from here.
            baselineAcked = sock.info().bytesAcked();
            send(cfg.count() > 0 ? cfg.count() : Long.MAX_VALUE);
        }

        @Override
        void onSent() {
            // The byte count is written: FIN after it; the measurement ends when the sink closes too.
            sock.shutdownOutput();
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
