package dev.usnet.tcp.app;

import dev.usnet.tcp.TcpSock;
import java.util.function.Consumer;

/**
 * Options every app (stream, rr, burst; client and server) shares, like netperf's global and test-specific
 * options. Build from {@link #defaults()} with the {@code with*} methods.
 *
 * @param port the server's TCP port (netperf's data port; the client connects to it)
 * <p>The duration and the count drive the client; a server follows its client (it ends at the client's end of
 * stream) or {@link App#stop()}.
 *
 * @param durationNanos how long the client measures, on its namespace's clock (netperf {@code -l}); 0: until
 *     {@code count} is reached or {@link App#stop()}
 * @param count how much the client does: stream — bytes, rr — transactions, burst — bursts; 0: until
 *     {@code durationNanos} or {@link App#stop()}. With both set, whichever comes first ends the run
 * @param congestionControl TCP_CONGESTION for the app's sockets ("cubic", "reno"); null: the namespace's
 *     {@code net.ipv4.tcp_congestion_control}
 * @param noDelay TCP_NODELAY; null: the app's own default (stream off as netperf TCP_STREAM; rr and burst on,
 *     as netperf TCP_RR and MPI libraries set it)
 * @param sendBufferBytes SO_SNDBUF (which locks autotuning of that side, as in Linux); 0: not set, so the
 *     buffer is autotuned from {@code net.ipv4.tcp_wmem} (or its maximum with {@code usnet.tcp.buffers=max})
 * @param receiveBufferBytes SO_RCVBUF; 0: not set, autotuned from {@code net.ipv4.tcp_rmem}. Both buffers are
 *     set once the socket exists, i.e. after the SYN went out, so the window scale still follows tcp_rmem
 * @param readBytes how the app takes received data: 0 discards it with {@link TcpSock#skip} (no copy); n
 *     {@link TcpSock#read}s it into one preallocated n-byte buffer (a copy, as recv() into a user buffer)
 * @param measureCpu whether to sum the thread CPU time spent in the app's callbacks ({@link AppResult#cpuNanos})
 * @param socketHook called with each socket the app opens (client: right after connect(); server: at accept),
 *     on the namespace thread, after the options above: a place for setTrace, setKeepAlive, or an experiment's
 *     own settings; null for none
 */
public record AppConfig(int port, long durationNanos, long count, String congestionControl, Boolean noDelay,
        int sendBufferBytes, int receiveBufferBytes, int readBytes, boolean measureCpu,
        Consumer<TcpSock> socketHook) {

    /** The port when none is given (the one iperf2 uses; netperf's data port is random). */
    public static final int DEFAULT_PORT = 5001;

    public AppConfig {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " out of range 1..65535");
        }
        if (durationNanos < 0 || count < 0 || sendBufferBytes < 0 || receiveBufferBytes < 0 || readBytes < 0) {
            throw new IllegalArgumentException("negative duration, count, buffer size or read size in " + this);
        }
    }

    /** Port 5001, no duration and no count (run until stopped), namespace defaults for every socket option. */
    public static AppConfig defaults() {
        return new AppConfig(DEFAULT_PORT, 0, 0, null, null, 0, 0, 0, true, null);
    }

    public AppConfig withPort(int p) {
        return new AppConfig(p, durationNanos, count, congestionControl, noDelay, sendBufferBytes,
                receiveBufferBytes, readBytes, measureCpu, socketHook);
    }

    public AppConfig withDurationNanos(long nanos) {
        return new AppConfig(port, nanos, count, congestionControl, noDelay, sendBufferBytes, receiveBufferBytes,
                readBytes, measureCpu, socketHook);
    }

    public AppConfig withCount(long n) {
        return new AppConfig(port, durationNanos, n, congestionControl, noDelay, sendBufferBytes,
                receiveBufferBytes, readBytes, measureCpu, socketHook);
    }

    public AppConfig withCongestionControl(String name) {
        return new AppConfig(port, durationNanos, count, name, noDelay, sendBufferBytes, receiveBufferBytes,
                readBytes, measureCpu, socketHook);
    }

    public AppConfig withNoDelay(Boolean on) {
        return new AppConfig(port, durationNanos, count, congestionControl, on, sendBufferBytes,
                receiveBufferBytes, readBytes, measureCpu, socketHook);
    }

    public AppConfig withBuffers(int sndbuf, int rcvbuf) {
        return new AppConfig(port, durationNanos, count, congestionControl, noDelay, sndbuf, rcvbuf, readBytes,
                measureCpu, socketHook);
    }

    public AppConfig withReadBytes(int n) {
        return new AppConfig(port, durationNanos, count, congestionControl, noDelay, sendBufferBytes,
                receiveBufferBytes, n, measureCpu, socketHook);
    }

    public AppConfig withMeasureCpu(boolean on) {
        return new AppConfig(port, durationNanos, count, congestionControl, noDelay, sendBufferBytes,
                receiveBufferBytes, readBytes, on, socketHook);
    }

    public AppConfig withSocketHook(Consumer<TcpSock> hook) {
        return new AppConfig(port, durationNanos, count, congestionControl, noDelay, sendBufferBytes,
                receiveBufferBytes, readBytes, measureCpu, hook);
    }
}
