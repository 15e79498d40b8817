package dev.usnet.tcp;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.SplittableRandom;

/**
 * Two namespaces joined by a veth pair in virtual time — client 198.18.0.1, server 198.18.0.2 — with TCP
 * installed and an impairment on each receiving end, plus a bulk sender and a hashing sink.
 */
public final class TcpPair implements AutoCloseable {
    public static final int CLIENT = Ipv4Addr.parse("198.18.0.1");
    public static final int SERVER = Ipv4Addr.parse("198.18.0.2");

    public final TestNet net = new TestNet();
    public final NetStack client = net.ns("client");
    public final NetStack server = net.ns("server");
    public final VethEnd[] veth;
    public final Tcp clientTcp;
    public final Tcp serverTcp;
    public final Impairment toServer;
    public final Impairment toClient;

    public TcpPair(long seed) {
        this(seed, false);
    }

    TcpPair(long seed, boolean gso) {
        veth = net.link(client, "veth0", "198.18.0.1/24", server, "veth0", "198.18.0.2/24");
        if (gso) {
            for (VethEnd v : veth) {
                v.setGsoOffload(true);
                v.setTxChecksumOffload(true);
            }
        }
        clientTcp = Tcp.install(client);
        serverTcp = Tcp.install(server);
        toServer = Impairment.on(server, veth[1], seed * 31 + 1);
        toClient = Impairment.on(client, veth[0], seed * 31 + 2);
        toServer.delayNanos = 50_000;
        toClient.delayNanos = 50_000;
    }

    /** Sets a knob in both namespaces. */
    public TcpPair set(String key, String value) {
        client.knobs().set(key, value);
        server.knobs().set(key, value);
        return this;
    }

    /** Both directions: a {@code rateBps} bottleneck (0: none) and {@code oneWayNanos} of delay. */
    public TcpPair link(long rateBps, long oneWayNanos) {
        for (Impairment im : new Impairment[] {toServer, toClient}) {
            im.rateBps = rateBps;
            im.delayNanos = oneWayNanos;
        }
        return this;
    }

    public long now() {
        return net.sched.nanoTime();
    }

    /** Runs virtual time until {@code done} holds, for at most {@code limitNanos}; returns whether it holds. */
    public boolean until(java.util.function.BooleanSupplier done, long limitNanos) {
        runUntil(done, limitNanos);
        return done.getAsBoolean();
    }

    static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    /** Writes all of {@code data} as the window allows, then half-closes (shutdown SHUT_WR). */
    static class BulkSender implements TcpSock.Callbacks {
        final ByteBuf data;
        final int chunk;
        int offset;
        boolean connected;
        TcpError closedWith;

        BulkSender(byte[] bytes, int chunk) {
            this.data = Unpooled.wrappedBuffer(bytes);
            this.chunk = chunk;
        }

        @Override
        public void connected(TcpSock s) {
            connected = true;
            pump(s);
        }

        @Override
        public void writable(TcpSock s) {
            pump(s);
        }

        @Override
        public void readable(TcpSock s) {
            ByteBuf sink = Unpooled.buffer(4096);
            while (s.read(sink, 4096) > 0) {
                sink.clear();
            }
        }

        void pump(TcpSock s) {
            while (offset < data.capacity()) {
                int n = s.write(data, offset, Math.min(chunk, data.capacity() - offset));
                if (n <= 0) {
                    return;
                }
                offset += n;
            }
            s.shutdownOutput();
        }

        @Override
        public void closed(TcpSock s, TcpError error) {
            closedWith = error;
        }
    }

    /** Reads everything, hashing it, and closes at end of stream. */
    static class HashingSink implements TcpSock.Callbacks {
        final MessageDigest md;
        final ByteBuf buf = Unpooled.buffer(65536);
        long bytes;
        boolean eof;
        TcpError closedWith;
        boolean paused;
        TcpSock sock;

        HashingSink() {
            try {
                md = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public void readable(TcpSock s) {
            sock = s;
            if (!paused) {
                drain(s);
            }
        }

        void drain(TcpSock s) {
            while (true) {
                buf.clear();
                int n = s.read(buf, buf.capacity());
                if (n > 0) {
                    md.update(buf.nioBuffer(0, n));
                    bytes += n;
                    continue;
                }
                if (n < 0 && !eof) {
                    eof = true;
                    s.close();
                }
                return;
            }
        }

        String hash() {
            return HexFormat.of().formatHex(md.digest());
        }

        @Override
        public void closed(TcpSock s, TcpError error) {
            closedWith = error;
        }
    }

    /** Runs virtual time until {@code done} holds or {@code limitNanos} passed; returns the time it took. */
    long runUntil(java.util.function.BooleanSupplier done, long limitNanos) {
        long start = net.sched.nanoTime();
        while (!done.getAsBoolean() && net.sched.nanoTime() - start < limitNanos) {
            long next = net.sched.nextEventTime();
            if (next < 0) {
                break;
            }
            net.sched.runUntil(Math.max(next, net.sched.nanoTime()));
        }
        return net.sched.nanoTime() - start;
    }

    @Override
    public void close() {
        // Let TIME-WAIT and every delayed frame finish, then tear down.
        net.run(200_000_000_000L);
        clientTcp.close();
        serverTcp.close();
        net.close();
    }
}
