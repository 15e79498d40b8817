package dev.usnet.tools.topology;

import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * The {@code apps:} of a topology: small traffic sources and sinks that run on their namespace's thread,
 * so a topology can show (and tests can prove) that it forwards.
 */
public final class Apps {
    /** One running app. Counters may be read from any thread. */
    public abstract static class App {
        final String ns;
        final NetStack stack;
        volatile boolean running;

        App(String ns, NetStack stack) {
            this.ns = ns;
            this.stack = stack;
        }

        public String namespace() {
            return ns;
        }

        /** Starts on the namespace thread. */
        abstract void start();

        /** Stops on the namespace thread; releases what it holds. */
        abstract void stop();

        /** One line for the exit summary. */
        public abstract String summary();

        /** A histogram to write as .hgrm, or null. */
        Histogram histogram() {
            return null;
        }

        /** Base name of the .hgrm file. */
        String histogramName() {
            return null;
        }
    }

    /** {@code kind: ping}: echo requests every interval, round-trip times in a histogram. */
    public static final class Pinger extends App {
        private static final int SLOTS = 1024;
        private final int to;
        private final long intervalNanos;
        private final int size;
        private final int id;
        private ByteBuf payload;
        private final long[] sentAt = new long[SLOTS];
        private final int[] sentSeq = new int[SLOTS];
        private final SingleWriterRecorder recorder = new SingleWriterRecorder(3);
        private final Histogram total = new Histogram(3);
        private volatile long sent;
        private volatile long received;
        private int seq;
        private Timeout timer;

        Pinger(String ns, NetStack stack, TopologySpec.Ping p, int id) {
            super(ns, stack);
            this.to = p.to();
            this.intervalNanos = Math.max(1_000_000L, Math.round(p.intervalSeconds() * 1e9));
            this.size = p.size();
            this.id = id;
            java.util.Arrays.fill(sentSeq, -1);
        }

        public long sent() {
            return sent;
        }

        public long received() {
            return received;
        }

        @Override
        void start() {
            running = true;
            payload = Unpooled.buffer(size).writeZero(size);
            stack.icmp().openPing(id, (from, s, data, off, len) -> {
                int slot = s & (SLOTS - 1);
                if (from == to && sentSeq[slot] == s) {
                    sentSeq[slot] = -1;
                    recorder.recordValue(Math.max(0, stack.now() - sentAt[slot]));
                    received++;
                }
            });
            tick();
        }

        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        private void tick() {
            if (!running) {
                return;
            }
            int s = seq;
            seq = (seq + 1) & 0xffff;
            int slot = s & (SLOTS - 1);
            sentSeq[slot] = s;
            sentAt[slot] = stack.now();
            sent++;
            stack.icmp().sendEcho(to, id, s, payload, 0, size, 0);
            timer = stack.scheduler().schedule(this::tick, intervalNanos);
        }

        @Override
        void stop() {
            running = false;
            if (timer != null) {
                timer.cancel();
            }
            stack.icmp().closePing(id);
            payload.release();
        }

        @Override
        public synchronized Histogram histogram() {
            total.add(recorder.getIntervalHistogram());
            return total.copy();
        }

        @Override
        String histogramName() {
            return ns + ".ping-" + Ipv4Addr.format(to);
        }

        @Override
        public String summary() {
            Histogram h = histogram();
            String rtt = h.getTotalCount() == 0 ? ""
                    : String.format(", rtt p50 %.1f us, p99 %.1f us", h.getValueAtPercentile(50) / 1000.0,
                    h.getValueAtPercentile(99) / 1000.0);
            return ns + ": ping " + Ipv4Addr.format(to) + ": " + sent + " sent, " + received + " received" + rtt;
        }
    }

    /** {@code kind: udp-send}: datagrams at a steady rate. */
    public static final class UdpSender extends App {
        private final int to;
        private final int port;
        private final int rate;
        private final int size;
        private ByteBuf data;
        private UdpSocket sock;
        private volatile long sent;
        private long startNanos;
        private Timeout timer;

        UdpSender(String ns, NetStack stack, TopologySpec.UdpSend u) {
            super(ns, stack);
            this.to = u.to();
            this.port = u.port();
            this.rate = u.rate();
            this.size = u.size();
        }

        public long sent() {
            return sent;
        }

        @Override
        void start() {
            running = true;
            data = Unpooled.buffer(size).writeZero(size);
            sock = stack.udp().bind(0, 0);
            startNanos = stack.now();
            tick();
        }

        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        private void tick() {
            if (!running) {
                return;
            }
            long due = (stack.now() - startNanos) * rate / 1_000_000_000L + 1;
            while (sent < due) {
                sock.sendTo(to, port, data, 0, size);
                sent++;
            }
            long period = rate >= 1000 ? 1_000_000L : 1_000_000_000L / rate;
            timer = stack.scheduler().schedule(this::tick, period);
        }

        @Override
        void stop() {
            running = false;
            if (timer != null) {
                timer.cancel();
            }
            if (sock != null) {
                sock.close();
            }
            data.release();
        }

        @Override
        public String summary() {
            return ns + ": udp-send " + Ipv4Addr.format(to) + ":" + port + ": " + sent + " sent";
        }
    }

    /** {@code kind: udp-sink}: counts the datagrams arriving on a port. */
    public static final class UdpSink extends App {
        private final int port;
        private UdpSocket sock;

        UdpSink(String ns, NetStack stack, TopologySpec.UdpSink u) {
            super(ns, stack);
            this.port = u.port();
        }

        public long received() {
            UdpSocket s = sock;
            return s == null ? 0 : s.rxDatagrams();
        }

        @Override
        void start() {
            running = true;
            sock = stack.udp().bind(0, port);
        }

        @Override
        void stop() {
            running = false;
            if (sock != null) {
                sock.close();
            }
        }

        @Override
        public String summary() {
            UdpSocket s = sock;
            return ns + ": udp-sink :" + port + ": " + received() + " received (" + (s == null ? 0 : s.rxBytes()) + " bytes)";
        }
    }

    private final List<App> apps = new ArrayList<>();
    private final Topology topology;

    private Apps(Topology topology) {
        this.topology = topology;
    }

    /** Creates the apps of every namespace (not started). */
    static Apps of(Topology t) {
        Apps a = new Apps(t);
        for (TopologySpec.Ns ns : t.spec().namespaces()) {
            NetStack s = t.stack(ns.name());
            int pingId = 0x5500;
            for (TopologySpec.App spec : ns.apps()) {
                a.apps.add(switch (spec) {
                    case TopologySpec.Ping p -> new Pinger(ns.name(), s, p, pingId++);
                    case TopologySpec.UdpSend u -> new UdpSender(ns.name(), s, u);
                    case TopologySpec.UdpSink u -> new UdpSink(ns.name(), s, u);
                });
            }
        }
        return a;
    }

    public List<App> list() {
        return List.copyOf(apps);
    }

    /** Starts sinks first, then senders, each on its namespace's thread. */
    void start() {
        for (App a : apps) {
            if (a instanceof UdpSink) {
                topology.onLoop(a.ns, () -> {
                    a.start();
                    return null;
                });
            }
        }
        for (App a : apps) {
            if (!(a instanceof UdpSink)) {
                topology.onLoop(a.ns, () -> {
                    a.start();
                    return null;
                });
            }
        }
    }

    /** Stops senders first, then sinks. */
    void stop() {
        for (App a : apps) {
            if (!(a instanceof UdpSink) && a.running) {
                topology.onLoop(a.ns, () -> {
                    a.stop();
                    return null;
                });
            }
        }
        for (App a : apps) {
            if (a instanceof UdpSink && a.running) {
                topology.onLoop(a.ns, () -> {
                    a.stop();
                    return null;
                });
            }
        }
    }
}
