package dev.usnet.tools.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.Where;
import dev.usnet.tools.topology.file.YamlMap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * {@code kind: http-server}: a minimal HTTP/1.0 server on a TCP port, enough for {@code curl} or {@code nc} from a
 * kernel namespace and for {@code http-get}. Each connection's request (up to the blank line ending its headers)
 * gets one {@code 200 OK} whose body names the namespace and the address and port the connection came from, as
 * the server saw them; then the server closes. That line is what shows NAT at work: behind a DNAT the server sees
 * the client's own address, behind a MASQUERADE the router's.
 */
public final class HttpServer extends DeclaredAppKind<HttpServer.Entry> {
    private static final Set<String> KEYS = Set.of("kind", "port");
    /** A request whose headers do not end within this many bytes is answered 431 and closed. */
    static final int MAX_REQUEST_BYTES = 8192;

    /** An entry: the port it listens on. */
    public record Entry(int port, Where where) implements TopologySpec.App {
        @Override
        public String kind() {
            return "http-server";
        }
    }

    public HttpServer() {
        super("http-server", KEYS, Entry.class, Order.RECEIVER);
    }

    @Override
    public Entry read(YamlMap m) {
        m.allow(KEYS);
        Long port = m.require("port") ? m.integer("port", 1, 65535) : null;
        return port == null ? null : new Entry(port.intValue(), m.where());
    }

    @Override
    public App create(AppContext c, String ns, Entry spec) {
        return new Server(ns, c.topology().stack(ns), spec.port());
    }

    /** The running server: a listener whose connections each get one response. */
    public static final class Server extends App {
        private final int port;
        private TcpListener listener;
        private volatile long served;
        private volatile long servedBytes;
        private volatile long refused;
        private volatile String lastClient = "";

        Server(String ns, NetStack stack, int port) {
            super(ns, stack);
            this.port = port;
        }

        @Override
        public String kind() {
            return "http-server";
        }

        /** Requests answered 200. */
        public long served() {
            return served;
        }

        /** The address:port the last answered request came from, as the server saw it. */
        public String lastClient() {
            return lastClient;
        }

        @Override
        public void start() {
            running = true;
            listener = Tcp.of(stack).listen(0, port, 128, child -> child.setCallbacks(new Exchange()));
        }

        /** One connection: gathers the request head, answers, closes. Namespace thread. */
        private final class Exchange implements TcpSock.Callbacks {
            private final ByteBuf request = Unpooled.buffer(256, MAX_REQUEST_BYTES);
            private boolean answered;

            @Override
            public void readable(TcpSock s) {
                if (answered) {
                    s.skip(Integer.MAX_VALUE);
                    return;
                }
                int n = s.read(request, request.maxWritableBytes());
                if (headEnds()) {
                    answer(s, 200, "OK", "hello from " + ns + "\nyou came from " + Ipv4Addr.format(s.remoteAddr())
                            + ":" + s.remotePort() + "\n");
                } else if (request.maxWritableBytes() == 0) {
                    answer(s, 431, "Request Header Fields Too Large", "request head over " + MAX_REQUEST_BYTES
                            + " bytes\n");
                } else if (n < 0) {
                    // The client closed before finishing its request: nothing to answer.
                    release();
                    s.close();
                }
            }

            @Override
            public void closed(TcpSock s, TcpError error) {
                release();
            }

            private boolean headEnds() {
                int end = request.writerIndex();
                for (int i = request.readerIndex(); i + 3 < end; i++) {
                    if (request.getByte(i) == '\r' && request.getByte(i + 1) == '\n' && request.getByte(i + 2) == '\r'
                            && request.getByte(i + 3) == '\n') {
                        return true;
                    }
                }
                // nc sends bare newlines: a blank line of "\n\n" ends the head as well.
                for (int i = request.readerIndex(); i + 1 < end; i++) {
                    if (request.getByte(i) == '\n' && request.getByte(i + 1) == '\n') {
                        return true;
                    }
                }
                return false;
            }

            @SuppressWarnings("NonAtomicOperationOnVolatileField")
            private void answer(TcpSock s, int status, String reason, String body) {
                answered = true;
                byte[] b = body.getBytes(StandardCharsets.US_ASCII);
                byte[] head = ("HTTP/1.0 " + status + " " + reason + "\r\nContent-Type: text/plain\r\nContent-Length: "
                        + b.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
                ByteBuf out = Unpooled.wrappedBuffer(head, b);
                try {
                    s.write(out, 0, out.readableBytes());
                } finally {
                    out.release();
                }
                if (status == 200) {
                    served++;
                    servedBytes += b.length;
                    lastClient = Ipv4Addr.format(s.remoteAddr()) + ":" + s.remotePort();
                } else {
                    refused++;
                }
                release();
                s.shutdownOutput();
            }

            private void release() {
                if (request.refCnt() > 0) {
                    request.release();
                }
            }
        }

        @Override
        public void stop() {
            running = false;
            if (listener != null) {
                listener.close();
            }
        }

        @Override
        public String peer() {
            return ":" + port;
        }

        /** Response bodies sent and requests answered. */
        @Override
        public AppCounters counters() {
            return AppCounters.of(servedBytes, served);
        }

        @Override
        public String summary() {
            long r = refused;
            String last = lastClient;
            return ns + ": http-server :" + port + ": " + served + " answered" + (r == 0 ? "" : ", " + r + " refused")
                    + (last.isEmpty() ? "" : ", last from " + last);
        }

        /** Failed when no request was answered: nothing reached the port. */
        @Override
        public Outcome outcome() {
            return served == 0 ? Outcome.failed("no request answered on port " + port) : Outcome.OK;
        }

        @Override
        public void putResultFields(java.util.Map<String, Object> m) {
            m.put("last_client", lastClient);
        }

        @Override
        public String label() {
            return ns + ": http-server :" + port;
        }
    }
}
