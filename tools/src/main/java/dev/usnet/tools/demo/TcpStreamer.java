package dev.usnet.tools.demo;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * A paced TCP stream between two namespaces: the client writes {@code chunk} bytes every 10 ms (an
 * application-limited flow, so the demo's pings keep their loop time), the server discards what arrives.
 * Its segments sit in the retransmission queue while clones travel, so forwarders must copy before editing.
 */
final class TcpStreamer {
    private final NetStack client;
    private final NetStack server;
    private final int dst;
    private final int port;
    private final int chunk;
    private final ByteBuf data;
    private TcpListener listener;
    private TcpSock sock;
    private TcpSock serverSide;
    private Timeout tick;
    private volatile boolean running = true;
    private long connectStartNanos;
    /** Nanoseconds from connect() to ESTABLISHED, or -1 while not connected; set on the client's thread. */
    volatile long connectNanos = -1;
    long received;
    /** Bytes the client handed to its socket; read on the client's thread. */
    long written;

    TcpStreamer(NetStack client, NetStack server, String dst, int port, int chunk) {
        this.client = client;
        this.server = server;
        this.dst = Ipv4Addr.parse(dst);
        this.port = port;
        this.chunk = chunk;
        this.data = Unpooled.buffer(Math.max(chunk, 1)).writeZero(Math.max(chunk, 1));
    }

    /** Call on the server namespace's thread. */
    void listen() {
        listener = Tcp.of(server).listen(0, port, 16, child -> {
            serverSide = child;
            child.setCallbacks(new TcpSock.Callbacks() {
                @Override
                public void readable(TcpSock s) {
                    int n;
                    while ((n = s.skip(Integer.MAX_VALUE)) > 0) {
                        received += n;
                    }
                    if (n < 0) {
                        // The client's FIN: everything arrived, so closing now sends no reset.
                        s.close();
                        serverSide = null;
                    }
                }
            });
        });
    }

    /** Call on the client namespace's thread. */
    void connect() {
        connectStartNanos = client.now();
        sock = Tcp.of(client).connect(dst, port, new TcpSock.Callbacks() {
            @Override
            public void connected(TcpSock s) {
                connectNanos = client.now() - connectStartNanos;
                pace();
            }

            @Override
            public void closed(TcpSock s, TcpError error) {
                running = false;
            }
        });
    }

    private void pace() {
        if (!running) {
            return;
        }
        if (sock.writableBytes() >= chunk) {
            written += sock.write(data, 0, chunk);
        }
        tick = client.scheduler().schedule(this::pace, 10_000_000L);
    }

    /** The client side as ss -ti shows it; call on the client's thread. */
    TcpInfo info() {
        return sock == null ? null : sock.info();
    }

    /** Stops writing and closes: a FIN follows what was written. Call on the client's thread. */
    void stop() {
        running = false;
        if (tick != null) {
            tick.cancel();
        }
        if (sock != null) {
            sock.close();
        }
    }

    /** Call on the server's thread after {@link #stop}; a server still waiting for the FIN is reset. */
    void closeServer() {
        if (serverSide != null) {
            serverSide.abort();
        }
        if (listener != null) {
            listener.close();
        }
    }
}
