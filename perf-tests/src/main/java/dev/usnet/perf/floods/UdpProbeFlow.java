package dev.usnet.perf.floods;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.buffer.ByteBuf;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * The legitimate flow beside a flood: UDP datagrams of a fixed size at a fixed interval, each carrying its send
 * time, so the receiver measures loss and one-way latency in virtual time.
 */
final class UdpProbeFlow {
    private final NetStack src;
    private final int dst;
    private final int port;
    private final long intervalNanos;
    private final int size;
    private final UdpSocket tx;
    private final ByteBuf payload;
    private final Histogram latency = new Histogram(3_600_000_000_000L, 3);
    private long sent;
    private long received;
    private boolean running;

    UdpProbeFlow(NetStack src, NetStack dstStack, String dstAddr, int port, long intervalNanos, int size) {
        this.src = src;
        this.dst = Ipv4Addr.parse(dstAddr);
        this.port = port;
        this.intervalNanos = intervalNanos;
        this.size = size;
        this.tx = src.udp().bind(0, port);
        this.payload = Buffers.alloc().heapBuffer(size, size);
        payload.writerIndex(size);
        UdpSocket rx = dstStack.udp().bind(0, port);
        rx.setReceiver((s, from, fromPort, buf, off, len) -> {
            if (len >= 8) {
                received++;
                latency.recordValue(Math.max(0, dstStack.now() - buf.getLong(off)));
            }
        });
    }

    void start() {
        running = true;
        src.schedule(this::tick, 0);
    }

    void stop() {
        running = false;
    }

    private void tick() {
        if (!running) {
            return;
        }
        payload.setLong(0, src.now());
        tx.sendTo(dst, port, payload, 0, size);
        sent++;
        src.schedule(this::tick, intervalNanos);
    }

    /** Forgets what was measured so far (the warm-up before the flood). */
    void reset() {
        sent = 0;
        received = 0;
        latency.reset();
    }

    long sent() {
        return sent;
    }

    long received() {
        return received;
    }

    double lossFraction() {
        return sent == 0 ? 1 : 1 - (double) received / sent;
    }

    double p99Us() {
        return latency.getTotalCount() == 0 ? 0 : latency.getValueAtPercentile(99) / 1000.0;
    }

    double maxUs() {
        return latency.getTotalCount() == 0 ? 0 : latency.getMaxValue() / 1000.0;
    }

    /** sent, received, loss, throughput and latency for the JSON, with what it was measured against. */
    Map<String, Object> report(long durationNanos) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kind", "udp " + size + " B every " + intervalNanos / 1000 + " us");
        m.put("sent", sent);
        m.put("received", received);
        m.put("loss", Double.parseDouble(String.format(Locale.ROOT, "%.6f", lossFraction())));
        m.put("throughput_mbit_s", Double.parseDouble(String.format(Locale.ROOT, "%.3f",
                received * size * 8.0 / (durationNanos / 1e9) / 1e6)));
        m.put("latency_p50_us", latency.getTotalCount() == 0 ? 0 : latency.getValueAtPercentile(50) / 1000.0);
        m.put("latency_p99_us", p99Us());
        m.put("latency_max_us", maxUs());
        return m;
    }

    void close() {
        payload.release();
    }
}
