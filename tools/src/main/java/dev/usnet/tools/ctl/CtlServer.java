package dev.usnet.tools.ctl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.usnet.tools.cli.UsageException;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.IoEventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDomainSocketChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.netty.channel.unix.DomainSocketAddress;
import io.netty.channel.unix.PeerCredentials;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The daemon's control socket: a Unix stream socket (mode 0600) speaking JSON lines (docs/ctl.md). Only the
 * daemon's own user and root may talk to it: each connection's peer is checked with SO_PEERCRED, which Netty's
 * epoll domain socket channel exposes (the JDK's Unix channels do not). Connections are served on one event loop of
 * their own, never a namespace's; requests run on a small worker pool, one at a time per connection, in order.
 * A slow or dead client cannot stall anything: replies and events are written without blocking, a connection
 * whose output backs up stops being read (and its event stream drops events, counted), and one that holds more
 * than {@link #MAX_PENDING_BYTES} unread is closed.
 */
public final class CtlServer implements AutoCloseable {
    /** The longest request line taken; a longer one is refused and its connection closed. */
    static final int MAX_REQUEST_BYTES = 64 * 1024;
    /** Output a connection may hold before it is no longer read from (low, high water marks). */
    static final int LOW_WATER = 64 * 1024;
    static final int HIGH_WATER = 256 * 1024;
    /** Output a connection may hold unread before it is closed. */
    static final long MAX_PENDING_BYTES = 16L * 1024 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final ControlPlane cp;
    private final Path path;
    private final int ownerUid;
    private final IoEventLoopGroup group;
    private final ExecutorService workers;
    private Channel server;
    private final AtomicLong connections = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();

    private CtlServer(ControlPlane cp, Path path, int ownerUid, IoEventLoopGroup group, ExecutorService workers) {
        this.cp = cp;
        this.path = path;
        this.ownerUid = ownerUid;
        this.group = group;
        this.workers = workers;
    }

    /**
     * Listens on {@code path} for {@code cp}. The socket is bound in a private (0700) directory beside it, made 0600
     * and renamed into place, so it is never reachable with looser permissions. A socket file left by a daemon that
     * is gone is replaced; one that answers is refused.
     */
    public static CtlServer start(ControlPlane cp, Path path) {
        if (!Epoll.isAvailable()) {
            throw new UsageException("the control socket needs Netty's native epoll transport, which is unavailable here: "
                    + Epoll.unavailabilityCause());
        }
        Path p = path.toAbsolutePath().normalize();
        Path dir = p.getParent();
        Path staging = dir.resolve(".ctl-" + ProcessHandle.current().pid());
        Path staged = staging.resolve("s");
        // sun_path holds 108 bytes with its terminating NUL.
        for (Path x : List.of(p, staged)) {
            int len = x.toString().getBytes(StandardCharsets.UTF_8).length;
            if (len > 107) {
                throw new UsageException("control socket path " + x + " is " + len + " bytes, longer than a Unix socket"
                        + " path may be (107): give a shorter one with --ctl PATH");
            }
        }
        int uid;
        try {
            Files.createDirectories(dir);
            uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            clearStale(p);
            Files.deleteIfExists(staged);
            Files.deleteIfExists(staging);
            Files.createDirectory(staging, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new UsageException("control socket " + p + ": " + e);
        }
        IoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, r -> {
            Thread t = new Thread(r, "usnet-ctl-io");
            t.setDaemon(true);
            return t;
        }, EpollIoHandler.newFactory());
        AtomicInteger n = new AtomicInteger();
        ExecutorService workers = Executors.newFixedThreadPool(4, r -> {
            Thread t = new io.netty.util.concurrent.FastThreadLocalThread(r, "usnet-ctl-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        CtlServer srv = new CtlServer(cp, p, uid, group, workers);
        try {
            srv.server = new ServerBootstrap()
                    .group(group)
                    .channel(EpollServerDomainSocketChannel.class)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(LOW_WATER, HIGH_WATER))
                    .childHandler(new ChannelInitializer<EpollDomainSocketChannel>() {
                        @Override
                        protected void initChannel(EpollDomainSocketChannel c) {
                            c.pipeline().addLast(new LineBasedFrameDecoder(MAX_REQUEST_BYTES, true, true),
                                    srv.new Connection());
                        }
                    })
                    .bind(new DomainSocketAddress(staged.toString())).sync().channel();
            Files.setPosixFilePermissions(staged, PosixFilePermissions.fromString("rw-------"));
            Files.move(staged, p, StandardCopyOption.ATOMIC_MOVE);
            Files.deleteIfExists(staging);
            return srv;
        } catch (Exception e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            workers.shutdownNow();
            try {
                Files.deleteIfExists(staged);
                Files.deleteIfExists(staging);
            } catch (IOException ignored) {
                // Best effort: the error below is what matters.
            }
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new UsageException("control socket " + p + ": cannot listen: " + e.getMessage(), e);
        }
    }

    /** A socket file nobody answers on is a dead daemon's: removed. One that answers belongs to a live daemon. */
    private static void clearStale(Path p) throws IOException {
        if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (!"socket".equals(kind(p))) {
            throw new IOException("exists and is not a socket; remove it or give another path with --ctl");
        }
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(p));
            throw new IOException("another usnet daemon is listening on it; stop that one or give another path with --ctl");
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("another usnet daemon")) {
                throw e;
            }
            Files.delete(p);
        }
    }

    private static String kind(Path p) throws IOException {
        var a = Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
        return a.isOther() ? "socket" : a.isDirectory() ? "directory" : "file";
    }

    public Path path() {
        return path;
    }

    /** Connections accepted, and those refused by the SO_PEERCRED check, so far. */
    public long connections() {
        return connections.get();
    }

    public long refused() {
        return refused.get();
    }

    /** Stops listening, closes every connection, removes the socket file. */
    @Override
    public void close() {
        try {
            server.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        } finally {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
            workers.shutdownNow();
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                System.err.println("usnet: removing control socket " + path + ": " + e.getMessage());
            }
        }
    }

    /** One client connection: its requests in order, its event stream if it asked for one. */
    private final class Connection extends ChannelInboundHandlerAdapter {
        private Channel ch;
        private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
        private EventHub.Subscription events;
        private volatile CaptureStream capture;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ch = ctx.channel();
            connections.incrementAndGet();
            PeerCredentials pc;
            try {
                pc = ((EpollDomainSocketChannel) ch).peerCredentials();
            } catch (IOException e) {
                refuse("cannot read the peer's credentials (SO_PEERCRED): " + e.getMessage());
                return;
            }
            if (pc.uid() != ownerUid && pc.uid() != 0) {
                refuse("permission denied: uid " + pc.uid() + " (pid " + pc.pid() + ") is neither the daemon's user (uid "
                        + ownerUid + ") nor root");
            }
        }

        private void refuse(String why) {
            refused.incrementAndGet();
            ch.config().setAutoRead(false);
            write(error(null, why)).addListener(f -> ch.close());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            String line;
            try {
                line = ((ByteBuf) msg).toString(StandardCharsets.UTF_8).trim();
            } finally {
                ReferenceCountUtil.release(msg);
            }
            if (line.isEmpty() || !ch.isOpen() || capture != null) {
                // Once a capture streams, a reply would land in the middle of its pcap bytes: the stream is all
                // the connection says, and what the client sends is read (so that its hang-up is seen) and ignored.
                return;
            }
            CtlRequest req;
            try {
                req = CtlRequest.parse(line);
            } catch (CtlRequest.Refused r) {
                write(error(r.id(), r.getMessage()));
                return;
            }
            JsonNode id = req.id();
            String ns = req.ns();
            List<String> args = req.args();
            if (args.getFirst().equals("events")) {
                startEvents(id, args);
                return;
            }
            if (ControlPlane.isCaptureStream(args)) {
                tail = tail.thenRunAsync(() -> startCapture(id, ns, args), workers);
                return;
            }
            tail = tail.thenRunAsync(() -> write(answer(id, ns, args)), workers);
        }

        private void startEvents(JsonNode id, List<String> args) {
            if (events != null) {
                write(error(id, "this connection already streams events"));
                return;
            }
            if (args.size() > 1) {
                write(error(id, "events takes no arguments (filter the stream on the client side)"));
                return;
            }
            ObjectNode ok = ok(id, Map.of("streaming", true), "streaming events (one JSON object a line) until you disconnect");
            write(ok);
            events = cp.events().subscribe(this::event);
        }

        /**
         * {@code capture start NS/DEV -}: the reply line, then the connection carries the pcap's bytes and nothing
         * else (requests that follow are not read) until the capture ends or the client hangs up.
         */
        private void startCapture(JsonNode id, String ns, List<String> args) {
            if (events != null || capture != null) {
                write(error(id, "this connection already streams " + (events != null ? "events" : "a capture")));
                return;
            }
            StreamSink sink = new StreamSink();
            ObjectNode reply;
            try {
                Reply r = cp.streamCapture(ns, args, sink, cs -> capture = cs);
                reply = ok(id, r.data(), r.text());
            } catch (CtlException e) {
                write(error(id, e.getMessage()));
                return;
            } catch (RuntimeException e) {
                write(error(id, "internal error: " + e));
                return;
            }
            write(reply);
            sink.release();
            if (!ch.isActive()) {
                capture.end();
            }
        }

        /**
         * The connection as a capture's byte sink. Bytes the capture writes before its reply line is out (the pcap
         * header, the first frames) are held and sent after it, so that the client reads one JSON line, then pcap.
         */
        private final class StreamSink implements CaptureStream.Sink {
            private java.io.ByteArrayOutputStream held = new java.io.ByteArrayOutputStream();
            /** The capture ended (its count reached) before its reply line was out: hang up after releasing. */
            private boolean endPending;

            @Override
            public boolean writable() {
                return ch.isActive() && ch.isWritable();
            }

            @Override
            public synchronized void write(byte[] b, int off, int len) {
                if (held != null) {
                    held.write(b, off, len);
                    return;
                }
                ch.writeAndFlush(Unpooled.copiedBuffer(b, off, len), ch.voidPromise());
            }

            synchronized void release() {
                byte[] h = held.toByteArray();
                held = null;
                ch.writeAndFlush(Unpooled.wrappedBuffer(h), ch.voidPromise());
                if (endPending) {
                    hangUp();
                }
            }

            @Override
            public synchronized void end() {
                if (held != null) {
                    endPending = true;
                    return;
                }
                hangUp();
            }

            /** After what is queued: the client sees the whole last frame, then end of file (tcpdump then exits). */
            private void hangUp() {
                ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(f -> ch.close());
            }
        }

        /** From any thread: an event line, unless the client is behind (then it is counted and a later line says so). */
        private boolean event(String json) {
            if (!ch.isActive()) {
                return false;
            }
            if (!ch.isWritable()) {
                return false;
            }
            ch.writeAndFlush(ByteBufUtil.writeUtf8(ch.alloc(), json + "\n"), ch.voidPromise());
            return true;
        }

        private ObjectNode answer(JsonNode id, String ns, List<String> args) {
            try {
                Reply r = cp.handle(ns, args);
                return ok(id, r.data(), r.text());
            } catch (CtlException e) {
                return error(id, e.getMessage());
            } catch (RuntimeException e) {
                return error(id, "internal error: " + e);
            }
        }

        private io.netty.channel.ChannelFuture write(ObjectNode reply) {
            ChannelOutboundBuffer ob = ch.unsafe().outboundBuffer();
            if (ob != null && ob.totalPendingWriteBytes() > MAX_PENDING_BYTES) {
                System.err.println("usnet: control client " + ch.remoteAddress() + " holds more than " + MAX_PENDING_BYTES
                        + " bytes unread: disconnected");
                return ch.close();
            }
            String s;
            try {
                s = JSON.writeValueAsString(reply) + "\n";
            } catch (IOException e) {
                s = "{\"usnet_ctl\":1,\"ok\":false,\"error\":\"unwritable reply\"}\n";
            }
            return ch.writeAndFlush(ByteBufUtil.writeUtf8(ch.alloc(), s));
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            // Back-pressure: a client that does not read its replies is not read from either.
            if (capture != null) {
                // A capture's frames are dropped (and counted) while the client is behind; its input is ignored.
                ch.config().setAutoRead(true);
            } else if (events == null) {
                ch.config().setAutoRead(ch.isWritable());
            } else if (ch.isWritable()) {
                events.resumed();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (events != null) {
                events.close();
            }
            CaptureStream c = capture;
            if (c != null) {
                c.end();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof TooLongFrameException) {
                write(error(null, "request longer than " + MAX_REQUEST_BYTES + " bytes")).addListener(f -> ch.close());
                return;
            }
            ch.close();
        }
    }

    private static ObjectNode ok(JsonNode id, Object data, String text) {
        ObjectNode o = JSON.createObjectNode();
        o.put("usnet_ctl", ControlPlane.PROTOCOL);
        o.set("id", id);
        o.put("ok", true);
        o.set("data", JSON.valueToTree(data));
        o.put("text", text);
        return o;
    }

    private static ObjectNode error(JsonNode id, String message) {
        ObjectNode o = JSON.createObjectNode();
        o.put("usnet_ctl", ControlPlane.PROTOCOL);
        o.set("id", id);
        o.put("ok", false);
        o.put("error", message);
        return o;
    }
}
