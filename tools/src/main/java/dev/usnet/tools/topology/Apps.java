package dev.usnet.tools.topology;

import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.ns.NetNamespace;
import dev.usnet.ns.pid.PidAllocException;
import dev.usnet.ns.pid.Task;
import dev.usnet.tcp.TcpTrace;
import dev.usnet.tcp.app.AppConfig;
import dev.usnet.tcp.app.AppResult;
import dev.usnet.tcp.app.BurstApp;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tcp.app.RrApp;
import dev.usnet.tcp.app.StreamApp;
import dev.usnet.tools.cli.UsageException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
        /** The namespace, for the process the app runs as; null for an app built outside a topology. */
        NetNamespace netns;
        /** The process the app runs as, in its namespace's pid namespaces (usnet.pidns.*); null before it starts. */
        private volatile Task process;
        /** Its {@code start:}: nanoseconds after the run's start at which it (a TCP app's client) starts. */
        long startOffsetNanos;
        /** The pending delayed start, on the namespace thread; null when there is none. */
        private Timeout startTimer;
        /** The app was stopped before its delayed start came: it never starts. Namespace thread. */
        private boolean startCancelled;

        App(String ns, NetStack stack) {
            this.ns = ns;
            this.stack = stack;
        }

        public String namespace() {
            return ns;
        }

        /**
         * The process the app ran (or runs) as: its pids at every level stay readable after it exited. Null before
         * the app started.
         */
        public Task process() {
            return process;
        }

        /** The app's kind as the topology file names it ({@code ping}, {@code spawn}, ...). */
        public abstract String kind();

        /** Starts the app's process in its namespace's pid namespaces; refused with the app's label when no pid is left. */
        void startProcess() {
            if (netns == null || process != null) {
                return;
            }
            process = startProcessIn(netns, kind(), label());
        }

        static Task startProcessIn(NetNamespace netns, String comm, String label) {
            try {
                return netns.processes().spawn(comm);
            } catch (PidAllocException e) {
                throw new UsageException(label + ": cannot start its process: " + e.getMessage(), e);
            }
        }

        /** The app's process exits (its namespace's init reaps it). */
        void endProcess() {
            Task p = process;
            if (p != null) {
                p.exit(0);
            }
        }

        /** Starts on the namespace thread. */
        abstract void start();

        /**
         * On the namespace thread: runs {@code start} now, or, with a {@code start:} offset, schedules it that long
         * from now on the namespace's scheduler (the run's start: apps start before the clock runs), in either clock.
         */
        final void startAfterOffset(Runnable start) {
            if (startOffsetNanos <= 0) {
                start.run();
                return;
            }
            startTimer = stack.scheduler().schedule(() -> {
                startTimer = null;
                if (!startCancelled) {
                    start.run();
                }
            }, startOffsetNanos);
        }

        /**
         * On the namespace thread: a start still pending is called off (the run ends before it came). Returns
         * whether one was: the app never started and has nothing to stop.
         */
        final boolean cancelPendingStart() {
            if (startTimer == null) {
                return false;
            }
            startTimer.cancel();
            startTimer = null;
            startCancelled = true;
            return true;
        }

        /** Stops on the namespace thread; releases what it holds. */
        abstract void stop();

        /** What it counted, in one line: namespace, kind, peer, counters. */
        public abstract String summary();

        /** Whether it did its job; final once the app has stopped. */
        public abstract Outcome outcome();

        /** Which app this is, for a list of those that failed: its namespace, kind and peer. */
        public abstract String label();

        /** The exit summary's lines for this app, each ending in its outcome (one line, unless the app has two ends). */
        public List<String> summaryLines() {
            return List.of(summary() + "; " + outcome().format());
        }

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
        private volatile long noRoute;
        // Echoes unanswered when the app stopped but sent too recently to call lost (see stop); the longest RTT seen.
        private volatile long unansweredAtEnd;
        private long maxRtt;
        private int seq;
        private Timeout timer;
        /** A measured window ({@link #openWindow}): which requests were sent in it; namespace thread only. */
        private final boolean[] inWindow = new boolean[SLOTS];
        private boolean windowOpen;
        private long windowSent;
        private long windowReceived;
        private final Histogram windowRtt = new Histogram(3);

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
        public String kind() {
            return "ping";
        }

        /** The address pinged, dotted. */
        public String to() {
            return Ipv4Addr.format(to);
        }

        @Override
        void start() {
            running = true;
            payload = Unpooled.buffer(size).writeZero(size);
            stack.icmp().openPing(id, (from, s, data, off, len) -> {
                int slot = s & (SLOTS - 1);
                if (from == to && sentSeq[slot] == s) {
                    sentSeq[slot] = -1;
                    long rtt = Math.max(0, stack.now() - sentAt[slot]);
                    recorder.recordValue(rtt);
                    maxRtt = Math.max(maxRtt, rtt);
                    received++;
                    if (inWindow[slot]) {
                        inWindow[slot] = false;
                        windowReceived++;
                        windowRtt.recordValue(rtt);
                    }
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
            inWindow[slot] = windowOpen;
            if (windowOpen) {
                windowSent++;
            }
            if (!stack.icmp().sendEcho(to, id, s, payload, 0, size, 0)) {
                noRoute++;
            }
            timer = stack.scheduler().schedule(this::tick, intervalNanos);
        }

        /**
         * Stops sending and listening. An echo still unanswered then, sent less than two of the longest round trips
         * seen before, may well be on its way back: like ping, which at its end waits two RTTs for the last replies
         * and no longer, it is counted apart ({@link #unansweredAtEnd}), not as lost. Without any reply there is no
         * round trip to go by, and every unanswered echo is lost.
         */
        @Override
        void stop() {
            running = false;
            if (timer != null) {
                timer.cancel();
            }
            if (maxRtt > 0 || received > 0) {
                long now = stack.now();
                long window = 2 * Math.max(maxRtt, 1);
                long pending = 0;
                for (int slot = 0; slot < SLOTS; slot++) {
                    if (sentSeq[slot] >= 0 && now - sentAt[slot] < window) {
                        pending++;
                    }
                }
                unansweredAtEnd = pending;
            }
            stack.icmp().closePing(id);
            payload.release();
        }

        /** Echoes unanswered at the stop that were sent within two round trips of it: neither received nor lost. */
        public long unansweredAtEnd() {
            return unansweredAtEnd;
        }

        @Override
        public synchronized Histogram histogram() {
            total.add(recorder.getIntervalHistogram());
            return total.copy();
        }

        /**
         * Opens a measured window (usnet demo's, after its warm-up): from now on the requests sent are counted
         * apart, with the replies to them whenever they arrive, so a late reply to an earlier request is not
         * counted in it. Call on the namespace thread.
         */
        public void openWindow() {
            windowOpen = true;
        }

        /** Ends the window: later requests are not counted in it; replies to those that were still are. Namespace thread. */
        public void closeWindow() {
            windowOpen = false;
        }

        /** Requests sent in the window. Namespace thread. */
        public long windowSent() {
            return windowSent;
        }

        /** Replies to requests sent in the window. Namespace thread. */
        public long windowReceived() {
            return windowReceived;
        }

        /** Round-trip times of the window's requests, nanoseconds (a copy). Namespace thread. */
        public Histogram windowRtt() {
            return windowRtt.copy();
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
            long s = sent;
            long r = received;
            long late = unansweredAtEnd;
            String loss = s == 0 ? "" : String.format(java.util.Locale.ROOT, ", %.0f%% loss", 100.0 * Math.max(0, s - r - late) / s);
            long n = noRoute;
            return ns + ": ping " + Ipv4Addr.format(to) + ": " + s + " sent, " + r + " received"
                    + (late == 0 ? "" : ", " + late + " unanswered at the end (sent within two round trips of it)") + loss + rtt
                    + (n == 0 ? "" : ", " + n + " without a route");
        }

        /** Failed when no echo was answered; some loss is ok (the summary shows it). */
        @Override
        public Outcome outcome() {
            long s = sent;
            if (s == 0) {
                return Outcome.failed("sent no echo request");
            }
            if (received > 0) {
                return Outcome.OK;
            }
            return Outcome.failed(noRoute == s ? "no route to " + Ipv4Addr.format(to) + " (ENETUNREACH): no echo request left"
                    : "no replies: 0 of " + s + " echoes answered");
        }

        @Override
        public String label() {
            return ns + ": ping " + Ipv4Addr.format(to);
        }
    }

    /** {@code kind: udp-send}: datagrams at a steady rate. */
    public static final class UdpSender extends App {
        private final int to;
        private final int port;
        private final int rate;
        private final int size;
        private final int keepClones;
        /** With {@code max_burst:}: how many are due at each tick, a late tick's excess skipped; else null. */
        private final Pacer pacer;
        private ByteBuf data;
        private UdpSocket sock;
        private volatile long sent;
        private volatile long noRoute;
        private volatile long skipped;
        private long startNanos;
        private Timeout timer;

        UdpSender(String ns, NetStack stack, TopologySpec.UdpSend u) {
            super(ns, stack);
            this.to = u.to();
            this.port = u.port();
            this.rate = u.rate();
            this.size = u.size();
            this.keepClones = u.keepClones();
            this.pacer = u.maxBurstNanos() > 0 ? new Pacer(u.rate(), u.maxBurstNanos()) : null;
        }

        @Override
        public String kind() {
            return "udp-send";
        }

        /** Datagrams not sent because a tick ran later than {@code max_burst:} (0 without it). */
        public long skipped() {
            return skipped;
        }

        /** Clones of its last datagrams the socket keeps ({@code keep_clones:}). */
        public int keepClones() {
            return keepClones;
        }

        public long sent() {
            return sent;
        }

        /** Destination address:port. */
        public String to() {
            return Ipv4Addr.format(to) + ":" + port;
        }

        /** Payload bytes per datagram. */
        public int size() {
            return size;
        }

        @Override
        void start() {
            running = true;
            data = Unpooled.buffer(size).writeZero(size);
            sock = stack.udp().bind(0, 0);
            sock.setKeepClones(keepClones);
            startNanos = stack.now();
            if (pacer != null) {
                pacer.start(startNanos);
            }
            tick();
        }

        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        private void tick() {
            if (!running) {
                return;
            }
            if (pacer != null) {
                pacedTick();
                return;
            }
            long due = (stack.now() - startNanos) * rate / 1_000_000_000L + 1;
            while (sent < due) {
                if (!sock.sendTo(to, port, data, 0, size)) {
                    noRoute++;
                }
                sent++;
            }
            long period = rate >= 1000 ? 1_000_000L : 1_000_000_000L / rate;
            timer = stack.scheduler().schedule(this::tick, period);
        }

        /** {@code max_burst:}: what the pacer says is due, so a late tick sends at most max_burst worth. */
        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        private void pacedTick() {
            for (long n = pacer.due(stack.now()); n > 0; n--) {
                if (!sock.sendTo(to, port, data, 0, size)) {
                    noRoute++;
                }
                sent++;
            }
            skipped = pacer.skipped();
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
            long n = noRoute;
            long late = skipped;
            return ns + ": udp-send " + Ipv4Addr.format(to) + ":" + port + ": " + sent + " sent"
                    + (n == 0 ? "" : ", " + n + " of them without a route")
                    + (late == 0 ? "" : ", " + late + " skipped (the sender ran late by more than max_burst)");
        }

        /**
         * Failed when not one datagram left the namespace (no route to the destination); whether they arrive is
         * for a sink to say.
         */
        @Override
        public Outcome outcome() {
            long s = sent;
            if (s == 0) {
                return Outcome.failed("sent no datagram");
            }
            return noRoute == s ? Outcome.failed("no route to " + Ipv4Addr.format(to) + " (ENETUNREACH): no datagram left")
                    : Outcome.OK;
        }

        @Override
        public String label() {
            return ns + ": udp-send " + Ipv4Addr.format(to) + ":" + port;
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
        public String kind() {
            return "udp-sink";
        }

        /** Payload bytes received. */
        public long bytes() {
            UdpSocket s = sock;
            return s == null ? 0 : s.rxBytes();
        }

        public int port() {
            return port;
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

        /** Failed when nothing arrived: a sink is there to show that traffic gets through. */
        @Override
        public Outcome outcome() {
            return received() == 0 ? Outcome.failed("nothing received on port " + port) : Outcome.OK;
        }

        @Override
        public String label() {
            return ns + ": udp-sink :" + port;
        }
    }

    /**
     * {@code kind: spawn}: a process that forks short-lived children at a steady rate, lets each live its lifetime,
     * then reaps it (exit, wait): the churn of a process-spawning workload, each child taking a pid at every level of
     * its namespace's pid namespaces and giving it back. Forks the pid space refuses (EAGAIN, ENOMEM) are counted.
     */
    public static final class Spawner extends App {
        private record Child(Task task, long exitAt) {}

        private final int rate;
        private final long lifetimeNanos;
        private final long count;
        private final java.util.ArrayDeque<Child> alive = new java.util.ArrayDeque<>();
        private final java.util.Map<String, Long> forkErrors = new java.util.TreeMap<>();
        private volatile long spawned;
        private volatile long reaped;
        /** The last child forked: its pids stay readable after it was reaped. */
        private volatile Task lastChild;
        /** Wall-clock time spent in fork, exit and wait, for measured.spawn_ns. */
        private volatile long wallNanos;
        private long attempts;
        private long startNanos;
        private Timeout timer;

        Spawner(String ns, NetStack stack, TopologySpec.Spawn s) {
            super(ns, stack);
            this.rate = s.rate();
            this.lifetimeNanos = s.lifetimeNanos();
            this.count = s.count();
        }

        @Override
        public String kind() {
            return "spawn";
        }

        /** Children forked. */
        public long spawned() {
            return spawned;
        }

        /** Children that exited and were reaped. */
        public long reaped() {
            return reaped;
        }

        /** Forks refused, by errno. */
        public synchronized java.util.Map<String, Long> forkErrors() {
            return new java.util.TreeMap<>(forkErrors);
        }

        /** The pids the last child forked had at each level (empty before the first). */
        public List<dev.usnet.ns.pid.Upid> lastChildPids() {
            Task c = lastChild;
            return c == null ? List.of() : c.pids();
        }

        /** Mean wall-clock nanoseconds of fork + exit + wait per child (0 before the first). */
        public long nanosPerChild() {
            long n = spawned;
            return n == 0 ? 0 : wallNanos / n;
        }

        @Override
        void start() {
            running = true;
            startNanos = stack.now();
            tick();
        }

        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        private void tick() {
            if (!running) {
                return;
            }
            Task parent = process();
            long now = stack.now();
            long t0 = System.nanoTime();
            while (!alive.isEmpty() && alive.peekFirst().exitAt() <= now) {
                reap(parent, alive.pollFirst().task());
            }
            long due = (now - startNanos) * rate / 1_000_000_000L + 1;
            if (count > 0) {
                due = Math.min(due, count);
            }
            while (attempts < due && parent != null) {
                attempts++;
                try {
                    Task c = parent.fork("spawn-child");
                    spawned++;
                    lastChild = c;
                    if (lifetimeNanos == 0) {
                        reap(parent, c);
                    } else {
                        alive.addLast(new Child(c, now + lifetimeNanos));
                    }
                } catch (dev.usnet.ns.pid.PidAllocException e) {
                    synchronized (this) {
                        forkErrors.merge(e.errno(), 1L, Long::sum);
                    }
                }
            }
            wallNanos += System.nanoTime() - t0;
            boolean more = count == 0 || attempts < count;
            if (!more && alive.isEmpty()) {
                return;
            }
            long period = rate >= 1000 ? 1_000_000L : 1_000_000_000L / rate;
            long next = more ? period : Long.MAX_VALUE;
            if (!alive.isEmpty()) {
                next = Math.min(next, Math.max(1, alive.peekFirst().exitAt() - now));
            }
            timer = stack.scheduler().schedule(this::tick, next);
        }

        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        private void reap(Task parent, Task c) {
            c.exit(0);
            parent.reap(c);
            reaped++;
        }

        /** Ends the children still alive (each exits and is reaped), then stops. */
        @Override
        void stop() {
            running = false;
            if (timer != null) {
                timer.cancel();
            }
            Task parent = process();
            while (!alive.isEmpty()) {
                reap(parent, alive.pollFirst().task());
            }
        }

        @Override
        public String summary() {
            java.util.Map<String, Long> errs = forkErrors();
            long failed = errs.values().stream().mapToLong(Long::longValue).sum();
            return ns + ": spawn " + rate + "/s: " + spawned + " spawned, " + reaped + " reaped"
                    + (failed == 0 ? "" : ", " + failed + " forks refused " + errs)
                    + (process() == null ? "" : "; pids " + pidsText(process().pids()))
                    + (lastChild == null ? "" : ", last child " + pidsText(lastChildPids()));
        }

        /** Failed when no child could be forked at all. */
        @Override
        public Outcome outcome() {
            if (spawned > 0) {
                return Outcome.OK;
            }
            java.util.Map<String, Long> errs = forkErrors();
            return Outcome.failed(errs.isEmpty() ? "spawned no process" : "no fork succeeded: " + errs);
        }

        @Override
        public String label() {
            return ns + ": spawn " + rate + "/s";
        }
    }

    /** {@code 1234@init 5@ctr/1}: a process's numbers from the initial pid namespace down. */
    static String pidsText(List<dev.usnet.ns.pid.Upid> pids) {
        return String.join(" ", pids.stream().map(u -> u.nr() + "@" + u.ns().name()).toList());
    }

    /**
     * {@code kind: stream | rr | burst}: a TCP test app from {@code dev.usnet.tcp.app}, its client in this
     * namespace and its server in another (or the same). The server listens before the client connects; at the
     * end each end reports an {@link AppResult}, and the client's latency (rr) or burst completion (burst)
     * histogram goes to the output directory.
     */
    public static final class TcpApp extends App {
        private final TopologySpec.TcpApp spec;
        private final String serverNs;
        private final int to;
        private final dev.usnet.tcp.app.App client;
        private final dev.usnet.tcp.app.App server;
        /** The client socket's cwnd trace ({@code trace:}), or null. */
        private final TcpTrace trace;
        /** The client's completed bursts ({@code bursts:} of a burst app), or null. */
        private final List<BurstApp.Burst> bursts;
        private volatile long startNanos;
        /** The server's namespace, for the server's process; null outside a topology. */
        NetNamespace serverNetns;
        private volatile Task serverProcess;

        TcpApp(String ns, NetStack stack, TopologySpec.TcpApp spec, String serverNs, NetStack serverStack, int to) {
            super(ns, stack);
            this.spec = spec;
            this.serverNs = serverNs;
            this.to = to;
            TopologySpec.TcpCommon c = spec.common();
            AppConfig cfg = AppConfig.defaults().withPort(c.port()).withCount(c.count()).withDurationNanos(c.durationNanos())
                    .withCongestionControl(c.congestion()).withNoDelay(c.noDelay())
                    .withBuffers(c.sendBufferBytes(), c.receiveBufferBytes());
            List<BurstApp.Burst> burstLog = null;
            switch (spec) {
                case TopologySpec.TcpStream st -> {
                    client = StreamApp.client(stack, to, cfg, new StreamApp.Params(st.writeBytes(), st.intervalNanos()));
                    server = StreamApp.server(serverStack, cfg);
                }
                case TopologySpec.TcpRr rr -> {
                    RrApp.Params p = new RrApp.Params(rr.requestBytes(), rr.responseBytes());
                    client = RrApp.client(stack, to, cfg, p);
                    server = RrApp.server(serverStack, cfg, p);
                }
                case TopologySpec.TcpBurst b -> {
                    BurstApp.Params p = new BurstApp.Params(b.burstBytes(), b.computeNanos(), b.ackBytes(), b.writeBytes());
                    BurstApp.Client bc = BurstApp.client(stack, to, cfg, p);
                    if (b.bursts() != null) {
                        burstLog = java.util.Collections.synchronizedList(new ArrayList<>());
                        bc.observer(burstLog::add);
                    }
                    client = bc;
                    server = BurstApp.server(serverStack, cfg, p);
                }
            }
            bursts = burstLog;
            trace = c.trace() == null ? null : new TcpTrace();
            if (trace != null) {
                client.setTrace(trace);
            }
        }

        /**
         * The client connection's congestion trace (one row per ACK and congestion event: snd_cwnd, ssthresh,
         * snd_cwnd_cnt, srtt, in flight, CA state), recorded when the entry has {@code trace:}; null when it has
         * not. Rows are added on the client namespace's thread: read it once {@link #isDone()} (or on that thread).
         * Its times are the namespace clock's; {@link #startNanos()} is the client's start on that clock.
         */
        public TcpTrace trace() {
            return trace;
        }

        /**
         * The bursts the client completed so far, in order, when a burst entry has {@code bursts:}; null otherwise
         * (and for stream and rr).
         */
        public List<BurstApp.Burst> bursts() {
            return bursts == null ? null : List.copyOf(bursts);
        }

        /** When the client started, on its namespace's clock (0 before it has). */
        public long startNanos() {
            return startNanos;
        }

        @Override
        public String kind() {
            return spec.kind();
        }

        /** The process the server end runs as, in the server's namespace; null before it starts. */
        public Task serverProcess() {
            return serverProcess;
        }

        public String serverNamespace() {
            return serverNs;
        }

        /** The server's address:port. */
        public String to() {
            return Ipv4Addr.format(to) + ":" + spec.common().port();
        }

        /** The client end (connects from this namespace). */
        public dev.usnet.tcp.app.App client() {
            return client;
        }

        /** The server end (listens in {@link #serverNamespace()}). */
        public dev.usnet.tcp.app.App server() {
            return server;
        }

        /** Both ends are done: their results are final. */
        public boolean isDone() {
            return client.isDone() && server.isDone();
        }

        /** The client's process, then the server's in the server's namespace. */
        @Override
        void startProcess() {
            super.startProcess();
            if (serverNetns != null && serverProcess == null) {
                serverProcess = startProcessIn(serverNetns, spec.kind() + "-server", label() + " (server)");
            }
        }

        /** Listens (on the server namespace's thread). */
        void startServer() {
            server.start();
        }

        @Override
        void endProcess() {
            super.endProcess();
            Task p = serverProcess;
            if (p != null) {
                p.exit(0);
            }
        }

        /** Connects (on this namespace's thread). */
        @Override
        void start() {
            running = true;
            startNanos = stack.now();
            client.start();
        }

        /** Writes the {@code trace:} and {@code bursts:} files this entry names into {@code dir}; returns them. */
        List<Path> writeLogs(Path dir) throws IOException {
            List<Path> files = new ArrayList<>();
            TopologySpec.AppLog t = spec.common().trace();
            if (trace != null && t.file() != null) {
                Path f = dir.resolve(t.file());
                try (Writer w = open(f)) {
                    trace.writeCsv(w);
                }
                files.add(f);
            }
            if (bursts != null && spec instanceof TopologySpec.TcpBurst b && b.bursts().file() != null) {
                Path f = dir.resolve(b.bursts().file());
                try (Writer w = open(f)) {
                    BurstApp.writeCsv(bursts(), startNanos, w);
                }
                files.add(f);
            }
            return files;
        }

        private static Writer open(Path f) throws IOException {
            if (f.getParent() != null) {
                Files.createDirectories(f.getParent());
            }
            return Files.newBufferedWriter(f, StandardCharsets.UTF_8);
        }

        /** Nothing to do on the loop: {@link Apps#stop} ends TCP apps through their own stop and abort. */
        @Override
        void stop() {
            running = false;
        }

        /** The client's histogram once it is done (rr: transaction latency; burst: completion time), else null. */
        @Override
        Histogram histogram() {
            AppResult r = client.result();
            return r == null ? null : r.histogram();
        }

        @Override
        String histogramName() {
            return ns + "." + spec.kind() + "-" + Ipv4Addr.format(to) + "-" + spec.common().port();
        }

        @Override
        public String summary() {
            return String.join("\n", summaryLines());
        }

        /**
         * {@link AppResult#format()} of the client, then of the server, each after its namespace and ending in that
         * end's {@link AppResult#outcome()}.
         */
        @Override
        public List<String> summaryLines() {
            return List.of(line(ns, client), line(serverNs, server));
        }

        private String line(String where, dev.usnet.tcp.app.App a) {
            AppResult r = a.result();
            if (r != null) {
                return where + ": " + r.format() + "; " + r.outcome().format();
            }
            return where + ": " + spec.kind() + " " + a.role().name().toLowerCase(java.util.Locale.ROOT) + " "
                    + Ipv4Addr.format(to) + ":" + spec.common().port() + ": no result (" + a + "); "
                    + outcome(a).format();
        }

        /** The client's outcome when it failed (the cause is on its side), else the server's, else ok. */
        @Override
        public Outcome outcome() {
            Outcome c = outcome(client);
            if (!c.ok()) {
                return c;
            }
            Outcome s = outcome(server);
            return s.ok() ? s : Outcome.failed("server: " + s.reason());
        }

        private static Outcome outcome(dev.usnet.tcp.app.App a) {
            AppResult r = a.result();
            return r != null ? r.outcome() : Outcome.failed("no result: " + a);
        }

        @Override
        public String label() {
            return ns + ": " + spec.kind() + " to " + Ipv4Addr.format(to) + ":" + spec.common().port() + " (server in "
                    + serverNs + ")";
        }
    }

    private final List<App> apps = new ArrayList<>();
    private final Topology topology;

    /** The one scheduler every namespace runs on in virtual time, else null (real time). */
    private final dev.usnet.core.time.VirtualScheduler virtual;

    private Apps(Topology topology) {
        this.topology = topology;
        this.virtual = topology.namespaces().isEmpty() ? null
                : topology.namespaces().getFirst().stack().scheduler() instanceof dev.usnet.core.time.VirtualScheduler v ? v : null;
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
                    case TopologySpec.TcpApp tcp -> {
                        String server = tcp.common().server();
                        Integer to = t.spec().serverAddress(ns.name(), tcp);
                        if (to == null) {
                            // Checked when the file was read; a spec built in code may still lack it.
                            throw new UsageException(tcp.common().serverWhere().error("namespace " + server
                                    + " has no address for the " + tcp.kind() + " client to connect to"));
                        }
                        TcpApp app = new TcpApp(ns.name(), s, tcp, server, t.stack(server), to);
                        app.serverNetns = t.registry().get(server);
                        yield app;
                    }
                    case TopologySpec.Spawn sp -> new Spawner(ns.name(), s, sp);
                    case TopologySpec.Mpi mpi -> new MpiApp(ns.name(), s, mpi, t);
                });
                a.apps.getLast().netns = t.registry().get(ns.name());
                a.apps.getLast().startOffsetNanos = spec.startNanos();
            }
        }
        return a;
    }

    public List<App> list() {
        return List.copyOf(apps);
    }

    /**
     * Starts sinks and TCP servers first, then senders and TCP clients, each on its namespace's thread. A TCP
     * end that cannot open (a port in use, no route) is refused with the line of its entry.
     */
    void start() {
        // Every app's process first, in file order (so its pids follow the file), on this thread: a pid space that
        // refuses one is a usage error naming the app, before anything runs.
        for (App a : apps) {
            a.startProcess();
        }
        for (App a : apps) {
            if (a instanceof UdpSink) {
                topology.onLoop(a.ns, () -> {
                    a.start();
                    return null;
                });
            } else if (a instanceof TcpApp t) {
                startTcp(t, t.serverNs, t::startServer, "server");
            }
        }
        for (App a : apps) {
            if (a instanceof TcpApp t) {
                if (t.startOffsetNanos > 0) {
                    topology.onLoop(t.ns, () -> {
                        t.startAfterOffset(() -> startLate(t));
                        return null;
                    });
                } else {
                    startTcp(t, t.ns, t::start, "client");
                }
            } else if (!(a instanceof UdpSink)) {
                topology.onLoop(a.ns, () -> {
                    a.startAfterOffset(a::start);
                    return null;
                });
            }
        }
    }

    /**
     * A TCP client whose {@code start:} came: it connects now, on its namespace's thread while the run goes on. What
     * connect refuses then (no route, no free port) cannot stop the run as a usage error: the client ends without a
     * result (its outcome says so) and the reason goes to stderr with the entry's line.
     */
    private static void startLate(TcpApp t) {
        try {
            t.start();
        } catch (RuntimeException e) {
            System.err.println("usnet: " + t.spec.where().error(t.kind() + " client in namespace " + t.ns + ": " + e.getMessage()));
        }
    }

    private void startTcp(TcpApp t, String ns, Runnable start, String role) {
        try {
            topology.onLoop(ns, () -> {
                start.run();
                return null;
            });
        } catch (RuntimeException e) {
            Throwable c = e.getCause() != null ? e.getCause() : e;
            throw new UsageException(t.spec.where().error(t.kind() + " " + role + " in namespace " + ns + ": "
                    + c.getMessage()), e);
        }
    }

    /** How long TCP clients get at the end to finish gracefully before they are reset. */
    static final long TCP_GRACE_NANOS = 2_000_000_000L;

    /**
     * Ends the TCP apps still running: each client stops gracefully (rr and burst at the end of the operation in
     * flight; FIN after what it queued) and gets {@link #TCP_GRACE_NANOS} to finish, its server following its
     * end of stream; what is left then is reset. Waits for every end's result (bounded).
     */
    private void stopTcp() {
        List<TcpApp> tcp = apps.stream().filter(a -> a instanceof TcpApp).map(a -> (TcpApp) a).toList();
        if (tcp.isEmpty()) {
            return;
        }
        for (TcpApp t : tcp) {
            // A client whose start: had not come yet never connects; stopping it gives its result (never connected).
            if (t.startOffsetNanos > 0) {
                topology.onLoop(t.ns, t::cancelPendingStart);
            }
            t.client.stop();
        }
        awaitTcp(tcp, true, TCP_GRACE_NANOS);
        for (TcpApp t : tcp) {
            if (!t.client.isDone()) {
                t.client.abort();
            }
        }
        // A server whose client never reached it is still listening; one whose client just ended follows it
        // (stop() queues behind that on the server's thread and then has nothing to do).
        awaitTcp(tcp, true, 500_000_000L);
        for (TcpApp t : tcp) {
            if (!t.server.isDone()) {
                t.server.stop();
            }
        }
        awaitTcp(tcp, false, 1_000_000_000L);
        for (TcpApp t : tcp) {
            if (!t.server.isDone()) {
                t.server.abort();
            }
        }
        awaitTcp(tcp, false, 500_000_000L);
        for (TcpApp t : tcp) {
            t.running = false;
        }
    }

    /**
     * Waits up to {@code nanos} until the clients (or both ends) are done. In virtual time the wait is the
     * namespaces' own clock, run forward a millisecond at a time: nothing sleeps, and the run stays deterministic.
     */
    private void awaitTcp(List<TcpApp> tcp, boolean clientsOnly, long nanos) {
        java.util.function.BooleanSupplier waiting = () -> tcp.stream().anyMatch(t -> clientsOnly ? !t.client.isDone() : !t.isDone());
        if (virtual != null) {
            long deadline = virtual.nanoTime() + nanos;
            while (virtual.nanoTime() < deadline && waiting.getAsBoolean()) {
                virtual.runFor(1_000_000L);
            }
            return;
        }
        long deadline = System.nanoTime() + nanos;
        while (System.nanoTime() < deadline && waiting.getAsBoolean()) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Writes the TCP apps' {@code trace:} and {@code bursts:} files into {@code dir} once the apps have stopped;
     * returns the files written. One that cannot be written is added to {@code errors} with the entry's line.
     */
    List<Path> writeLogs(Path dir, List<String> errors) {
        List<Path> files = new ArrayList<>();
        for (App a : apps) {
            if (a instanceof TcpApp t) {
                try {
                    files.addAll(t.writeLogs(dir));
                } catch (IOException | RuntimeException e) {
                    errors.add(t.spec.where().error("writing the app's trace or bursts file: " + e));
                }
            }
        }
        return files;
    }

    /**
     * Ends every app at once, waiting for nothing (a run that cannot go on: a virtual clock that stalled): TCP ends
     * are reset (ECONNABORTED), the others stopped. What they leave in flight stays queued until the namespaces
     * are deleted.
     */
    void abort() {
        for (App a : apps) {
            if (a instanceof TcpApp t) {
                if (t.startOffsetNanos > 0) {
                    topology.onLoop(t.ns, t::cancelPendingStart);
                }
                t.client.abort();
                t.server.abort();
                t.running = false;
            } else {
                topology.onLoop(a.ns, () -> {
                    a.cancelPendingStart();
                    if (a.running) {
                        a.stop();
                    }
                    return null;
                });
            }
        }
    }

    /** How long sinks keep counting after the senders stopped, for what is still on its way. */
    static final long SINK_SETTLE_MILLIS = 50;

    /**
     * Stops TCP apps, then senders, then, after {@link #SINK_SETTLE_MILLIS} so that datagrams in flight are
     * counted rather than refused with UDP_NO_SOCKET, sinks.
     */
    void stop() {
        stopTcp();
        for (App a : apps) {
            if (!(a instanceof UdpSink) && !(a instanceof TcpApp) && a.startOffsetNanos > 0) {
                topology.onLoop(a.ns, a::cancelPendingStart);
            }
            if (!(a instanceof UdpSink) && !(a instanceof TcpApp) && a.running) {
                topology.onLoop(a.ns, () -> {
                    a.stop();
                    return null;
                });
            }
        }
        if (apps.stream().anyMatch(a -> a instanceof UdpSink && a.running) && virtual != null) {
            virtual.runFor(SINK_SETTLE_MILLIS * 1_000_000L);
        } else if (apps.stream().anyMatch(a -> a instanceof UdpSink && a.running)) {
            try {
                Thread.sleep(SINK_SETTLE_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
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
        for (App a : apps) {
            a.endProcess();
        }
    }

    /**
     * An app started while the daemon runs ({@code usnet ctl app start}), made from {@code spec} as a file's entry in
     * namespace {@code ns} is, its server (for a TCP kind) in the namespace the entry names; {@code pingId} is the ICMP
     * identifier of a ping. Not started; not one of this run's {@link #list()}: the control plane keeps it.
     */
    public static App createLive(Topology t, String ns, TopologySpec.App spec, int pingId) {
        NetStack s = t.stack(ns);
        App a = switch (spec) {
            case TopologySpec.Ping p -> new Pinger(ns, s, p, pingId);
            case TopologySpec.UdpSend u -> new UdpSender(ns, s, u);
            case TopologySpec.UdpSink u -> new UdpSink(ns, s, u);
            case TopologySpec.TcpApp tcp -> {
                String server = tcp.common().server();
                NetStack ss = t.stack(server);
                Integer to = t.spec().namespace(server) != null && t.spec().namespace(ns) != null
                        ? t.spec().serverAddress(ns, tcp) : tcp.common().to();
                if (to == null) {
                    throw new UsageException("namespace " + server + " has no address in the topology file for the "
                            + tcp.kind() + " client to connect to: give 'to A.B.C.D'");
                }
                TcpApp app = new TcpApp(ns, s, tcp, server, ss, to);
                app.serverNetns = t.registry().get(server);
                yield app;
            }
            case TopologySpec.Spawn sp -> new Spawner(ns, s, sp);
            case TopologySpec.Mpi mpi -> throw new UsageException("mpi apps start only from a topology file");
        };
        a.netns = t.registry().get(ns);
        return a;
    }

    /** Starts an app of {@link #createLive}: its process, then (a TCP kind) its server, then it, each on its thread. */
    public static void startLive(Topology t, App a) {
        a.startProcess();
        if (a instanceof TcpApp tcp) {
            t.onLoop(tcp.serverNs, () -> {
                tcp.startServer();
                return null;
            });
        }
        t.onLoop(a.ns, () -> {
            a.start();
            return null;
        });
    }

    /**
     * Stops an app of {@link #createLive} as the daemon's stop ends a file's: a TCP client gracefully, with
     * {@link #TCP_GRACE_NANOS} to finish before it is reset, then its server; any other on its thread.
     */
    public static void stopLive(Topology t, App a) {
        if (a instanceof TcpApp tcp) {
            tcp.client.stop();
            waitFor(() -> tcp.client.isDone(), TCP_GRACE_NANOS);
            if (!tcp.client.isDone()) {
                tcp.client.abort();
            }
            waitFor(() -> tcp.server.isDone(), 500_000_000L);
            if (!tcp.server.isDone()) {
                tcp.server.stop();
            }
            waitFor(tcp::isDone, 1_000_000_000L);
            tcp.running = false;
        } else if (a.running) {
            t.onLoop(a.ns, () -> {
                a.stop();
                return null;
            });
        }
        a.endProcess();
    }

    private static void waitFor(java.util.function.BooleanSupplier done, long nanos) {
        long deadline = System.nanoTime() + nanos;
        while (System.nanoTime() < deadline && !done.getAsBoolean()) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Whether a live app is still running (a TCP app until both its ends are done). */
    public static boolean isRunning(App a) {
        return a instanceof TcpApp t ? !t.isDone() : a.running;
    }
}
