package dev.usnet.tcp.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv6Addr;

/**
 * Request/response, like netperf's TCP_RR with one transaction in flight: the client writes a request of
 * {@link Params#requestBytes()}, the server answers each complete request with {@link Params#responseBytes()},
 * and the client sends the next request once the whole response has arrived. Each transaction's latency — from
 * the request's first write to the response's last byte — goes into the client's histogram. TCP_NODELAY is on
 * at both ends unless the config says otherwise (netperf sets it for TCP_RR).
 *
 * <p>The run ends after {@link AppConfig#count()} transactions or, with {@link AppConfig#durationNanos()}, at
 * the first transaction boundary after it (the measurement then ends with that transaction). Throughput counts
 * request and response bytes; {@link AppResult#operationsPerSecond()} is netperf's transaction rate. Client and
 * server must be given the same {@link Params}.
 */
public final class RrApp {
    private RrApp() {}

    /** Request and response sizes (netperf {@code -r req,rsp}); default 1,1. */
    public record Params(int requestBytes, int responseBytes) {
        public Params {
            if (requestBytes < 1 || responseBytes < 1) {
                throw new IllegalArgumentException("request and response sizes must be positive: " + this);
            }
        }

        public static Params defaults() {
            return new Params(1, 1);
        }
    }

    public static Client client(NetStack stack, int server, AppConfig cfg, Params p) {
        return new Client(stack, server, cfg, p);
    }

    public static Server server(NetStack stack, AppConfig cfg, Params p) {
        return new Server(stack, 0, cfg, p);
    }

    /** A client in {@code stack} to IPv6 {@code server}:{@code cfg.port()} (an AF_INET6 socket). */
    public static Client client(NetStack stack, Ipv6Addr server, AppConfig cfg, Params p) {
        Client c = new Client(stack, 0, cfg, p);
        c.overIpv6(server);
        return c;
    }

    /**
     * A server in {@code stack} listening on IPv6 {@code bindAddr}:{@code cfg.port()} ({@link Ipv6Addr#ANY}: every
     * local address, IPv4 ones too unless net.ipv6.bindv6only).
     */
    public static Server server(NetStack stack, AppConfig cfg, Params p, Ipv6Addr bindAddr) {
        Server s = new Server(stack, 0, cfg, p);
        s.overIpv6(bindAddr);
        return s;
    }

    /** Sends requests, times transactions. */
    public static final class Client extends App {
        private final int request;
        private final int response;
        private int got;
        private long txStart;
        private boolean stopAtBoundary;

        Client(NetStack stack, int server, AppConfig cfg, Params p) {
            super("rr", Role.CLIENT, stack, server, cfg, true, Math.max(p.requestBytes(), 1), true);
            this.request = p.requestBytes();
            this.response = p.responseBytes();
        }

        @Override
        void onStart() {
            nextRequest();
        }

        private void nextRequest() {
            got = 0;
            txStart = now();
            send(request);
        }

        @Override
        void onReadable() {
            int n;
            while ((n = take(response - got)) > 0) {
                got += n;
                if (got == response) {
                    long t = now();
                    histogram.recordValue(t - txStart);
                    operations++;
                    if (stopAtBoundary || cfg.count() > 0 && operations >= cfg.count()) {
                        endMeasurement();
                        return;
                    }
                    nextRequest();
                }
            }
        }

        @Override
        void requestStop() {
            // Let the transaction in flight complete, so every counted transaction has its latency.
            stopAtBoundary = true;
        }
    }

    /** Answers each complete request. */
    public static final class Server extends App {
        private final int request;
        private final int response;
        private int got;

        Server(NetStack stack, int bindAddr, AppConfig cfg, Params p) {
            super("rr", Role.SERVER, stack, bindAddr, cfg, true, Math.max(p.responseBytes(), 1), false);
            this.request = p.requestBytes();
            this.response = p.responseBytes();
        }

        @Override
        void onStart() {}

        @Override
        void onReadable() {
            int n;
            while ((n = take(request - got)) > 0) {
                got += n;
                if (got == request) {
                    got = 0;
                    operations++;
                    send(response);
                }
            }
        }
    }
}
