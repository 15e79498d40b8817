package dev.usnet.tcp.app;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Scheduler;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpState;
import dev.usnet.tcp.TcpTrace;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.CompletableFuture;
import org.HdrHistogram.Histogram;

/**
 * One end of a test application — a client that connects or a server that accepts one connection (as
 * netserver forks one child per test) — living on one namespace's scheduler thread, like a process in a
 * network namespace. {@link #start()} opens the socket, the run ends by itself (the config's count or
 * duration, or the client's end of stream on the server), by {@link #stop()} (graceful) or {@link #abort()}
 * (reset), and {@link #completion()} then yields the {@link AppResult}.
 *
 * <p>A graceful end: the client stops at an operation boundary, notes the measurement, shuts down its output
 * (FIN); the server reads the end of stream, notes its measurement and closes; the client reads the server's
 * FIN, closes, and is done. Both then hold nothing: the send and read buffers go back to the pool and the
 * sockets are closed (TIME-WAIT is TCP's).
 *
 * <p>Every entry from TCP (callbacks) and from the scheduler (timers) runs on the namespace thread and is
 * timed with the thread's CPU clock ({@link AppResult#cpuNanos}). Steady state allocates nothing: data is
 * written from one zero buffer all apps share and received data is skipped or read into a preallocated buffer.
 */
public abstract class App {
    /** Which end of the connection an app is. */
    public enum Role {
        CLIENT, SERVER;

        String label() {
            return this == CLIENT ? "client" : "server";
        }
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** Max bytes per write() call (a larger message takes several). */
    static final int MAX_WRITE = 1 << 20;

    /**
     * What every app writes: MAX_WRITE zero bytes, one buffer for the whole JVM. A write copies from it into the
     * socket's send buffer by absolute index and never changes it, so any number of apps on any threads share it: a
     * buffer per app (64 KiB for a stream's default write size, up to 1 MiB) was, with ten thousand streams, the
     * largest block of memory in the run. It is not pooled (it lives as long as the JVM) and cannot be released.
     */
    private static final ByteBuf ZEROS = Unpooled.unreleasableBuffer(
            Unpooled.wrappedBuffer(java.nio.ByteBuffer.allocateDirect(MAX_WRITE)));

    private static final int NEW = 0;
    private static final int OPENING = 1;
    private static final int RUNNING = 2;
    private static final int ENDING = 3;
    private static final int DONE = 4;

    final String kind;
    final Role role;
    final NetStack stack;
    final Scheduler sched;
    final AppConfig cfg;
    private final int addr;
    /**
     * Over IPv6: the client's server address, the server's address to listen on (ANY: every local address, IPv4
     * ones too, as a dual-stack socket); null over IPv4, where {@link #addr} is the address.
     */
    private Ipv6Addr addr6;
    private final boolean noDelay;
    private final int writeBytes;
    private final TcpSock.Callbacks callbacks = new Callbacks();
    private final CompletableFuture<AppResult> completion = new CompletableFuture<>();
    private final Runnable durationTask = timed(this::durationExpired);

    /** Written on the namespace thread only; volatile so other threads may poll {@link #isDone()}. */
    private volatile int phase = NEW;
    private volatile AppResult result;
    TcpSock sock;
    private TcpListener listener;
    private TcpTrace trace;
    private Timeout durationTimer;
    private boolean peerEof;
    /** The bytes written ({@link #ZEROS}); null before the app opened and after it is done. */
    private ByteBuf src;
    private ByteBuf readBuf;
    private long owed;

    /** When {@link #start()} opened the socket (client: connect()). */
    private long openNanos = -1;
    long startNanos = -1;
    long endNanos = -1;
    long bytesSent;
    long bytesReceived;
    long operations;
    private long sentAtEnd;
    private long receivedAtEnd;
    private TcpInfo endInfo;
    /** Latency or completion times in nanoseconds (auto-resizing, so it allocates only while its range grows). */
    final Histogram histogram;

    private long cpuNanos;
    private long cpuMark;
    private int depth;

    /**
     * @param addr client: the server's address; server: the address to listen on (0: any)
     * @param writeBytes the largest single write (at most MAX_WRITE; a larger one is split)
     */
    App(String kind, Role role, NetStack stack, int addr, AppConfig cfg, boolean defaultNoDelay, int writeBytes,
            boolean withHistogram) {
        if (writeBytes < 1) {
            throw new IllegalArgumentException("write size " + writeBytes + " must be positive");
        }
        this.kind = kind;
        this.role = role;
        this.stack = stack;
        this.sched = stack.scheduler();
        this.cfg = cfg;
        this.addr = addr;
        this.noDelay = cfg.noDelay() != null ? cfg.noDelay() : defaultNoDelay;
        this.writeBytes = Math.min(writeBytes, MAX_WRITE);
        this.histogram = withHistogram ? new Histogram(3) : null;
    }

    // ------------------------------------------------------------------------------------------------------
    // Public control (any thread: hops to the namespace thread when called from elsewhere)

    /**
     * Opens the socket (client: connect; server: listen) on the namespace thread. Called on that thread (or,
     * in virtual time, from the thread driving the scheduler while it is not running) it acts at once and
     * throws what connect/listen throws; otherwise it is queued, and the future says when it happened.
     */
    public final CompletableFuture<Void> start() {
        CompletableFuture<Void> f = new CompletableFuture<>();
        onLoop(() -> {
            try {
                open();
                f.complete(null);
            } catch (RuntimeException e) {
                f.completeExceptionally(e);
                throw e;
            }
        });
        return f;
    }

    /**
     * Ends the run gracefully: a client ends its measurement (rr and burst at the end of the operation in
     * flight) and closes its output; a server ends its measurement and closes; one still opening gives up.
     */
    public final void stop() {
        onLoop(timed(this::stopNow));
    }

    /** Ends the run at once with a reset (SO_LINGER 0); the result's error is ECONNABORTED. */
    public final void abort() {
        onLoop(timed(() -> {
            if (phase == DONE) {
                return;
            }
            if (sock != null && sock.state() != TcpState.CLOSED) {
                sock.abort();
            }
            finish(TcpError.ECONNABORTED);
        }));
    }

    /** Completes with the result when the app is done (on the namespace thread). */
    public final CompletableFuture<AppResult> completion() {
        return completion;
    }

    /** Done: the result is final and everything the app held is released. */
    public final boolean isDone() {
        return phase == DONE;
    }

    /** The result once {@link #isDone()}, else null. */
    public final AppResult result() {
        return result;
    }

    /**
     * Records the connection's congestion trace (cwnd, ssthresh, snd_cwnd_cnt, RTT per ACK) into {@code t}:
     * attached as soon as the socket exists, or at once if it does. Call on the namespace thread.
     */
    public final App setTrace(TcpTrace t) {
        this.trace = t;
        if (sock != null && t != null) {
            sock.setTrace(t);
        }
        return this;
    }

    /** The connection (null before it exists); for inspection on the namespace thread, e.g. {@code info()}. */
    public final TcpSock socket() {
        return sock;
    }

    public final String kind() {
        return kind;
    }

    /**
     * How long the connection took to come up: from {@link #start()} to the end of the handshake (a client's
     * connect() to ESTABLISHED, a server's listen() to its accept), or -1 while it is not up. On the namespace thread.
     */
    public final long connectNanos() {
        return startNanos < 0 || openNanos < 0 ? -1 : startNanos - openNanos;
    }

    /** Payload bytes received so far (a stream's server: what arrived). On the namespace thread. */
    public final long bytesReceived() {
        return bytesReceived;
    }

    /** Payload bytes written into TCP so far. On the namespace thread. */
    public final long bytesSent() {
        return bytesSent;
    }

    public final Role role() {
        return role;
    }

    public final NetStack stack() {
        return stack;
    }

    @Override
    public String toString() {
        return kind + " " + role.label() + " in " + stack.name() + " ("
                + new String[] {"new", "opening", "running", "ending", "done"}[phase] + ")";
    }

    // ------------------------------------------------------------------------------------------------------
    // What each app does (namespace thread)

    /** The connection is up and the measurement starts. */
    abstract void onStart();

    /** Data waits while running: take it with {@link #take} until it returns 0 or -1. */
    abstract void onReadable();

    /** Everything passed to {@link #send} went into TCP. */
    void onSent() {}

    /** The client's duration passed or {@link #stop()} was called while running; ends the measurement by default. */
    void requestStop() {
        endMeasurement();
    }

    /** The measurement just ended ({@link #endInfo()} is set; called once): the app's own timers should stop. */
    void onEnd() {}

    /** The bytes the throughput counts; sent plus received by default. */
    long throughputBytes() {
        return sentAtEnd + receivedAtEnd;
    }

    // ------------------------------------------------------------------------------------------------------
    // Helpers for the apps

    final long now() {
        return sched.nanoTime();
    }

    final boolean running() {
        return phase == RUNNING;
    }

    final TcpInfo endInfo() {
        return endInfo;
    }

    /** Owes {@code n} more bytes to the peer and writes what the send buffer takes now. */
    final void send(long n) {
        owed += n;
        pump();
    }

    /** Bytes passed to {@link #send} that TCP has not taken yet. */
    final long owed() {
        return owed;
    }

    private void pump() {
        if (owed <= 0) {
            return;
        }
        while (owed > 0) {
            int len = (int) Math.min(owed, writeBytes);
            int w = sock.write(src, 0, len);
            if (w > 0) {
                owed -= w;
                bytesSent += w;
            }
            if (w < len) {
                // Short: the send buffer is full (writable follows) or the connection can no longer send.
                return;
            }
        }
        onSent();
    }

    /**
     * Takes up to {@code max} received bytes (skipping or reading them, as configured). Returns the bytes
     * taken, 0 when none wait, -1 at the end of stream (noted; the app ends after this callback).
     */
    final int take(int max) {
        int n;
        if (readBuf == null) {
            n = sock.skip(max);
        } else {
            readBuf.clear();
            n = sock.read(readBuf, Math.min(max, readBuf.capacity()));
        }
        if (n > 0) {
            bytesReceived += n;
        } else if (n < 0) {
            peerEof = true;
        }
        return n;
    }

    /**
     * Ends the measurement now: notes the time, the byte counts and the socket's state, and shuts down the
     * output (FIN after what is queued). Unsent owed bytes are dropped.
     */
    final void endMeasurement() {
        if (phase != RUNNING) {
            return;
        }
        phase = ENDING;
        endNanos = now();
        sentAtEnd = bytesSent;
        receivedAtEnd = bytesReceived;
        owed = 0;
        if (durationTimer != null) {
            durationTimer.cancel();
            durationTimer = null;
        }
        endInfo = sock.info();
        onEnd();
        sock.shutdownOutput();
    }

    /** {@code r} as a scheduler task whose CPU time counts as the app's. */
    final Runnable timed(Runnable r) {
        return () -> {
            enter();
            try {
                r.run();
            } finally {
                exit();
            }
        };
    }

    // ------------------------------------------------------------------------------------------------------
    // Life cycle

    private void onLoop(Runnable r) {
        if (sched.inLoop()) {
            r.run();
        } else {
            sched.execute(r);
        }
    }

    /**
     * Makes the app IPv6's (an AF_INET6 socket): a client connects to {@code a}, a server listens on {@code a}
     * ({@link Ipv6Addr#ANY}: every local address, and with net.ipv6.bindv6only 0 IPv4 clients too). Before
     * {@link #start()}.
     */
    void overIpv6(Ipv6Addr a) {
        if (phase != NEW) {
            throw new IllegalStateException(this + " was started already");
        }
        this.addr6 = java.util.Objects.requireNonNull(a, "IPv6 address");
    }

    /** The IPv6 address of an app made IPv6's (client: the server's; server: the one listened on), or null. */
    public Ipv6Addr ipv6Address() {
        return addr6;
    }

    private void open() {
        if (phase != NEW) {
            throw new IllegalStateException(this + " was started already");
        }
        enter();
        try {
            phase = OPENING;
            openNanos = now();
            src = ZEROS;
            if (cfg.readBytes() > 0) {
                readBuf = Buffers.alloc().directBuffer(cfg.readBytes(), cfg.readBytes());
            }
            Tcp tcp = Tcp.of(stack);
            if (role == Role.CLIENT) {
                sock = addr6 != null ? tcp.connect(addr6, cfg.port(), callbacks) : tcp.connect(addr, cfg.port(), callbacks);
                configure(sock);
            } else {
                listener = addr6 != null ? tcp.listen(addr6, cfg.port(), 1, this::accepted)
                        : tcp.listen(addr, cfg.port(), 1, this::accepted);
            }
        } catch (RuntimeException e) {
            if (sock != null && sock.state() != TcpState.CLOSED) {
                sock.abort();
            }
            closeListener();
            releaseBuffers();
            phase = DONE;
            completion.completeExceptionally(e);
            throw e;
        } finally {
            exit();
        }
    }

    private void configure(TcpSock s) {
        if (cfg.congestionControl() != null) {
            s.setCongestionControl(cfg.congestionControl());
        }
        s.setNoDelay(noDelay);
        if (cfg.sendBufferBytes() > 0) {
            s.setSendBufferSize(cfg.sendBufferBytes());
        }
        if (cfg.receiveBufferBytes() > 0) {
            s.setReceiveBufferSize(cfg.receiveBufferBytes());
        }
        if (trace != null) {
            s.setTrace(trace);
        }
        if (cfg.socketHook() != null) {
            cfg.socketHook().accept(s);
        }
    }

    private void accepted(TcpSock child) {
        enter();
        try {
            if (phase != OPENING || sock != null) {
                child.abort();
                return;
            }
            sock = child;
            closeListener();
            child.setCallbacks(callbacks);
            configure(child);
            begin();
            if (child.readableBytes() > 0) {
                readable();
            }
        } finally {
            exit();
        }
    }

    private void begin() {
        phase = RUNNING;
        startNanos = now();
        if (role == Role.CLIENT && cfg.durationNanos() > 0) {
            durationTimer = sched.schedule(durationTask, cfg.durationNanos());
        }
        onStart();
    }

    private void durationExpired() {
        durationTimer = null;
        if (phase == RUNNING) {
            requestStop();
        }
    }

    private void stopNow() {
        switch (phase) {
            case NEW, OPENING -> {
                if (sock != null && sock.state() != TcpState.CLOSED) {
                    sock.close();
                }
                finish(TcpError.NONE);
            }
            case RUNNING -> {
                if (role == Role.CLIENT) {
                    requestStop();
                } else {
                    endMeasurement();
                    discard();
                    sock.close();
                    finish(TcpError.NONE);
                }
            }
            default -> { }
        }
    }

    private void readable() {
        if (phase == RUNNING) {
            onReadable();
        }
        if (phase == ENDING) {
            discard();
        }
        if (peerEof && phase != DONE) {
            // The peer closed its output: our end of the run (the client first, or the server at the end).
            endMeasurement();
            sock.close();
            finish(TcpError.NONE);
        }
    }

    private void discard() {
        while (take(Integer.MAX_VALUE) > 0) {
            // Late data (a response to a stopped transaction): drop it.
        }
    }

    private void closeListener() {
        if (listener != null) {
            listener.close();
            listener = null;
        }
    }

    private void finish(TcpError error) {
        if (phase == DONE) {
            return;
        }
        if (phase == RUNNING) {
            endMeasurement();
        }
        phase = DONE;
        if (durationTimer != null) {
            durationTimer.cancel();
            durationTimer = null;
        }
        closeListener();
        if (sock != null && sock.state() == TcpState.CLOSED) {
            // A connection that ended with an error keeps unread data for the application: give it back.
            while (sock.skip(Integer.MAX_VALUE) > 0) {
                // drop
            }
        }
        releaseBuffers();
        long cpu = -1;
        if (cfg.measureCpu()) {
            cpu = cpuNanos + (depth > 0 ? cpuClock() - cpuMark : 0);
        }
        AppResult r = buildResult(error, cpu);
        result = r;
        completion.complete(r);
    }

    private void releaseBuffers() {
        src = null;
        if (readBuf != null) {
            readBuf.release();
            readBuf = null;
        }
    }

    private AppResult buildResult(TcpError error, long cpu) {
        long dur = startNanos < 0 ? 0 : Math.max(0, endNanos - startNanos);
        long bytes = startNanos < 0 ? 0 : throughputBytes();
        double secs = dur / 1e9;
        String local;
        String peer;
        if (sock != null) {
            boolean v6 = sock.ipv6() || sock.v4Mapped();
            local = endpoint(v6, sock.localAddrText(), sock.localPort());
            peer = endpoint(v6, sock.remoteAddrText(), sock.remotePort());
        } else if (role == Role.CLIENT) {
            local = "-";
            peer = addr6 != null ? endpoint(true, addr6.toString(), cfg.port()) : Ipv4Addr.format(addr) + ":" + cfg.port();
        } else {
            local = addr6 != null ? endpoint(true, addr6.toString(), cfg.port()) : Ipv4Addr.format(addr) + ":" + cfg.port();
            peer = "-";
        }
        return new AppResult(kind, role, local, peer, startNanos, dur, bytes, secs > 0 ? bytes * 8 / secs : 0,
                sentAtEnd, receivedAtEnd, operations, secs > 0 ? operations / secs : 0,
                histogram == null ? null : Percentiles.of(histogram), histogram == null ? null : histogram.copy(),
                cpu, endInfo == null ? 0 : endInfo.totalRetrans(), endInfo == null ? 0 : endInfo.timeouts(), endInfo,
                error);
    }

    /** ADDR:PORT as ss prints an endpoint, an IPv6 address in brackets. */
    private static String endpoint(boolean v6, String a, int port) {
        return v6 ? "[" + a + "]:" + port : a + ":" + port;
    }

    /**
     * The clock the app's CPU time is read from. In real time the thread's CPU clock: the loop thread also waits and
     * serves other namespaces. In virtual time the wall clock: the simulation thread runs without waiting, so the
     * wall time of a callback is its CPU time (bar preemption), and the thread CPU clock is a system call
     * (clock_gettime(CLOCK_THREAD_CPUTIME_ID) has no vDSO path: ~4 us on a VM against ~30 ns), which read around
     * every callback more than doubled the wall time of a bulk transfer.
     */
    private long cpuClock() {
        return sched.isVirtual() ? System.nanoTime() : THREADS.getCurrentThreadCpuTime();
    }

    private void enter() {
        if (depth++ == 0 && cfg.measureCpu()) {
            cpuMark = cpuClock();
        }
    }

    private void exit() {
        if (--depth == 0 && cfg.measureCpu()) {
            cpuNanos += cpuClock() - cpuMark;
        }
    }

    /** TCP's callbacks, each timed. */
    private final class Callbacks implements TcpSock.Callbacks {
        @Override
        public void connected(TcpSock s) {
            enter();
            try {
                if (phase == OPENING) {
                    begin();
                }
            } finally {
                exit();
            }
        }

        @Override
        public void readable(TcpSock s) {
            enter();
            try {
                if (phase != DONE) {
                    App.this.readable();
                }
            } finally {
                exit();
            }
        }

        @Override
        public void writable(TcpSock s) {
            enter();
            try {
                if (phase == RUNNING) {
                    pump();
                }
            } finally {
                exit();
            }
        }

        @Override
        public void closed(TcpSock s, TcpError error) {
            enter();
            try {
                finish(error);
            } finally {
                exit();
            }
        }
    }
}
