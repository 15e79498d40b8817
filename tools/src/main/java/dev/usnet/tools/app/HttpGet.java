package dev.usnet.tools.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.topology.file.EntryValues;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.Where;
import dev.usnet.tools.topology.file.YamlMap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * {@code kind: http-get}: fetches {@code http://to:port/} {@code count} times, one connection after the other, as
 * {@code curl} would, and keeps what each answer said. Against an {@code http-server} the answer names the address
 * the server saw the request come from, so the results show whether a NAT on the way rewrote the source (and to
 * which port). Ends by itself after the last answer, or at the first failure.
 */
public final class HttpGet extends DeclaredAppKind<HttpGet.Entry> {
    private static final Set<String> KEYS = Set.of("kind", "to", "port", "count", "start");
    /** An answer longer than this is cut: the app reads status lines and a short body, not downloads. */
    static final int MAX_ANSWER_BYTES = 16384;

    /** An entry: the server's IPv4 address and port, how many fetches, when to start. */
    public record Entry(int to, int port, int count, long startNanos, Where where) implements TopologySpec.App {
        @Override
        public String kind() {
            return "http-get";
        }
    }

    public HttpGet() {
        super("http-get", KEYS, Entry.class, Order.SENDER);
    }

    @Override
    public Entry read(YamlMap m) {
        m.allow(KEYS);
        Long start = EntryValues.start(m);
        Integer to = EntryValues.ip(m, "to");
        Long port = m.require("port") ? m.integer("port", 1, 65535) : null;
        Long count = m.has("count") ? m.integer("count", 1, 1_000_000) : Long.valueOf(1);
        return start == null || to == null || port == null || count == null ? null
                : new Entry(to, port.intValue(), count.intValue(), start, m.where());
    }

    @Override
    public App create(AppContext c, String ns, Entry spec) {
        return new Client(ns, c.topology().stack(ns), spec);
    }

    /** The running client. Its state changes on the namespace thread; counters are read from any. */
    public static final class Client extends App {
        private final Entry spec;
        private final CompletableFuture<Void> done = new CompletableFuture<>();
        private final List<String> seenAs = new ArrayList<>();
        private volatile int ok;
        private volatile long bodyBytes;
        private volatile String failure;
        private TcpSock current;

        Client(String ns, NetStack stack, Entry spec) {
            super(ns, stack);
            this.spec = spec;
        }

        @Override
        public String kind() {
            return "http-get";
        }

        @Override
        public void start() {
            running = true;
            fetch();
        }

        private void fetch() {
            if (!running) {
                return;
            }
            current = Tcp.of(stack).connect(spec.to(), spec.port(), new Fetch());
        }

        /** One fetch: the request once connected, the answer until the server closes. Namespace thread. */
        private final class Fetch implements TcpSock.Callbacks {
            private final ByteBuf answer = Unpooled.buffer(512, MAX_ANSWER_BYTES);
            private boolean finished;

            @Override
            public void connected(TcpSock s) {
                byte[] req = ("GET / HTTP/1.0\r\nHost: " + Ipv4Addr.format(spec.to()) + ":" + spec.port()
                        + "\r\nUser-Agent: usnet-http-get\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
                ByteBuf b = Unpooled.wrappedBuffer(req);
                try {
                    s.write(b, 0, req.length);
                } finally {
                    b.release();
                }
            }

            @Override
            public void readable(TcpSock s) {
                int n = answer.maxWritableBytes() == 0 ? s.skip(Integer.MAX_VALUE) : s.read(answer, answer.maxWritableBytes());
                if (n < 0) {
                    s.close();
                    end(null);
                }
            }

            @Override
            public void closed(TcpSock s, TcpError error) {
                end(error);
            }

            private void end(TcpError error) {
                if (finished) {
                    return;
                }
                finished = true;
                String text = answer.toString(StandardCharsets.US_ASCII);
                answer.release();
                judge(text, error);
            }
        }

        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        private void judge(String text, TcpError error) {
            int eol = text.indexOf("\r\n");
            String status = eol < 0 ? text : text.substring(0, eol);
            if (!status.startsWith("HTTP/") || !status.contains(" 200 ")) {
                fail(text.isEmpty() ? "no answer" + (error == null ? "" : " (" + error + ")")
                        : "answer " + (status.isEmpty() ? "empty" : "'" + status + "'"));
                return;
            }
            int body = text.indexOf("\r\n\r\n");
            String b = body < 0 ? "" : text.substring(body + 4);
            bodyBytes += b.length();
            int at = b.indexOf("you came from ");
            if (at >= 0) {
                int end = b.indexOf('\n', at);
                synchronized (seenAs) {
                    seenAs.add(b.substring(at + "you came from ".length(), end < 0 ? b.length() : end));
                }
            }
            ok++;
            if (ok == spec.count()) {
                running = false;
                done.complete(null);
            } else {
                fetch();
            }
        }

        private void fail(String why) {
            failure = "fetch " + (ok + 1) + " of " + spec.count() + ": " + why;
            running = false;
            done.complete(null);
        }

        /** The addresses the server saw our fetches come from, in order (empty against other servers). */
        public List<String> seenAs() {
            synchronized (seenAs) {
                return List.copyOf(seenAs);
            }
        }

        @Override
        public CompletionStage<?> completion() {
            return done;
        }

        @Override
        public void stop() {
            if (running) {
                running = false;
                if (failure == null && ok < spec.count()) {
                    failure = "stopped after " + ok + " of " + spec.count() + " fetches";
                }
                TcpSock s = current;
                if (s != null) {
                    s.close();
                }
                done.complete(null);
            }
        }

        @Override
        public String peer() {
            return Ipv4Addr.format(spec.to()) + ":" + spec.port();
        }

        /** Body bytes received and fetches answered 200. */
        @Override
        public AppCounters counters() {
            return AppCounters.of(bodyBytes, ok);
        }

        @Override
        public String summary() {
            List<String> seen = seenAs();
            String f = failure;
            return ns + ": http-get " + peer() + ": " + ok + " of " + spec.count() + " answered 200"
                    + (seen.isEmpty() ? "" : ", server saw us as " + String.join(", ", seen))
                    + (f == null ? "" : "; " + f);
        }

        @Override
        public Outcome outcome() {
            String f = failure;
            if (f != null) {
                return Outcome.failed(f);
            }
            return ok == spec.count() ? Outcome.OK : Outcome.failed(ok + " of " + spec.count() + " fetches answered");
        }

        @Override
        public void putResultFields(java.util.Map<String, Object> m) {
            m.put("seen_as", seenAs());
        }

        @Override
        public String label() {
            return ns + ": http-get " + peer();
        }
    }
}
