package dev.usnet.tcp.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.time.Timeout;
import dev.usnet.tcp.TcpInfo;
import java.io.IOException;
import java.io.Writer;
import java.util.List;
import java.util.Locale;

/**
 * An MPI-like pattern: the client sends a burst of {@link Params#burstBytes()}, waits until the burst has
 * completed, "computes" (stays idle) for {@link Params#computeNanos()}, and repeats — {@link AppConfig#count()}
 * bursts, or until {@link AppConfig#durationNanos()} (no burst starts after it; the one in flight completes).
 * Each burst's completion time, from its first write to its completion, goes into the client's histogram.
 *
 * <p><b>Completion</b> is when the sender learns that the receiving application has all of the burst: the
 * server reads the stream and answers each complete burst with {@link Params#ackBytes()} (an MPI-style
 * acknowledgement, as a rendezvous protocol's or a barrier's message), and the burst completes when the client
 * has read that answer. That is what a rank blocked in a synchronous send, a wait on the exchange or the
 * barrier after it sees: the transfer, the receiver taking it, and the answer's trip back (one one-way delay
 * more than the sender's last TCP ACK; the answer carries that ACK, since TCP_NODELAY is on by default). The
 * kernel's view — every byte acknowledged (tcpi_bytes_acked) — is not observable by an application without
 * polling, so it is not what the histogram measures; {@link Burst#infoAtEnd()} gives it per burst when
 * an observer is attached.
 *
 * <p>The compute phase is a scheduler timer, so in virtual time it costs nothing; it is what makes the
 * connection idle between bursts (restart after idle, CUBIC's epoch across idle: see the kernel-version
 * presets). {@link Client#observer} sees each burst with its retransmissions and RTOs; {@link App#setTrace}
 * attaches a cwnd trace. Client and server must be given the same {@link Params}.
 */
public final class BurstApp {
    private BurstApp() {}

    /**
     * @param burstBytes N, the bytes of one burst
     * @param computeNanos T, the idle time after each completed burst (0: the next burst starts at once)
     * @param ackBytes the size of the receiver's answer to a complete burst (default 1)
     * @param writeBytes bytes per write() (default 64 KiB, at most the burst)
     */
    public record Params(int burstBytes, long computeNanos, int ackBytes, int writeBytes) {
        public Params {
            if (burstBytes < 1 || ackBytes < 1 || writeBytes < 1 || computeNanos < 0) {
                throw new IllegalArgumentException("burst, ack and write sizes must be positive, compute time "
                        + "not negative: " + this);
            }
        }

        /** Bursts of {@code burstBytes}, {@code computeNanos} apart, a 1-byte answer, 64 KiB writes. */
        public static Params of(int burstBytes, long computeNanos) {
            return new Params(burstBytes, computeNanos, 1, 64 * 1024);
        }
    }

    /**
     * One completed burst as the observer sees it.
     *
     * @param index 0, 1, 2 … in order
     * @param startNanos the first write of the burst (namespace clock)
     * @param endNanos when the receiver's answer was read: the burst completed
     * @param bytes the burst's size
     * @param retransmits segments retransmitted while it ran (tcpi_total_retrans difference)
     * @param timeouts retransmission timeouts while it ran
     * @param cwndStart snd_cwnd right after its first write went out: what the burst starts with, after any
     *     restart after idle (tcp_slow_start_after_idle) that this first transmission applied
     * @param cwndEnd snd_cwnd at completion
     * @param infoAtEnd the socket's {@code ss -ti} state at completion
     */
    public record Burst(int index, long startNanos, long endNanos, long bytes, long retransmits, long timeouts,
            long cwndStart, long cwndEnd, TcpInfo infoAtEnd) {
        public long completionNanos() {
            return endNanos - startNanos;
        }
    }

    /**
     * Writes {@code burst,start_us,completion_us,retransmits,rtos,cwnd_start,cwnd_end} rows, one per burst, with
     * start times relative to {@code startNanos} (the client's start). Same bursts, same bytes.
     */
    public static void writeCsv(List<Burst> bursts, long startNanos, Writer w) throws IOException {
        w.write("burst,start_us,completion_us,retransmits,rtos,cwnd_start,cwnd_end\n");
        for (Burst b : bursts) {
            w.write(String.format(Locale.ROOT, "%d,%.3f,%.3f,%d,%d,%d,%d%n", b.index(), (b.startNanos() - startNanos) / 1000.0,
                    b.completionNanos() / 1000.0, b.retransmits(), b.timeouts(), b.cwndStart(), b.cwndEnd()));
        }
    }

    /**
     * Sees each burst on the client's namespace thread. With an observer attached the client takes
     * {@link TcpInfo} snapshots before, just after the first write of, and at the end of every burst (a few
     * small allocations per burst; none without an observer).
     */
    public interface BurstObserver {
        /**
         * Burst {@code index} is about to be written at {@code startNanos}; {@code info} is the state before it
         * (after the compute phase, before any restart after idle).
         */
        default void started(int index, long startNanos, TcpInfo info) {}

        /** A burst completed. */
        void completed(Burst burst);
    }

    public static Client client(NetStack stack, int server, AppConfig cfg, Params p) {
        return new Client(stack, server, cfg, p);
    }

    public static Server server(NetStack stack, AppConfig cfg, Params p) {
        return new Server(stack, 0, cfg, p);
    }

    /** A client in {@code stack} to IPv6 {@code server}:{@code cfg.port()} (an AF_INET6 socket). */
    public static Client client(NetStack stack, Ipv6Addr server, AppConfig cfg, Params p) {
        Client c = new Client(stack, 0, cfg, p);
        c.overIpv6(server);
        return c;
    }

    /**
     * A server in {@code stack} listening on IPv6 {@code bindAddr}:{@code cfg.port()} ({@link Ipv6Addr#ANY}: every
     * local address, IPv4 ones too unless net.ipv6.bindv6only).
     */
    public static Server server(NetStack stack, AppConfig cfg, Params p, Ipv6Addr bindAddr) {
        Server s = new Server(stack, 0, cfg, p);
        s.overIpv6(bindAddr);
        return s;
    }

    /** Sends the bursts, waits for the answers, computes between them. */
    public static final class Client extends App {
        private final int burst;
        private final long computeNanos;
        private final int ack;
        private final Runnable nextBurst = timed(this::computeDone);
        private BurstObserver observer;
        private Timeout computeTimer;
        private int index = -1;
        private long burstStart;
        private int ackGot;
        private boolean stopRequested;
        private TcpInfo startInfo;
        private long cwndStart;

        Client(NetStack stack, int server, AppConfig cfg, Params p) {
            super("burst", Role.CLIENT, stack, server, cfg, true, Math.min(p.writeBytes(), p.burstBytes()), true);
            this.burst = p.burstBytes();
            this.computeNanos = p.computeNanos();
            this.ack = p.ackBytes();
        }

        /** Attaches {@code o} to see every burst (set it before {@link #start()}, or on the namespace thread). */
        public Client observer(BurstObserver o) {
            this.observer = o;
            return this;
        }

        /** Bursts completed so far (namespace thread). */
        public long bursts() {
            return operations;
        }

        @Override
        void onStart() {
            startBurst();
        }

        private void startBurst() {
            index++;
            ackGot = 0;
            burstStart = now();
            if (observer != null) {
                startInfo = sock.info();
                observer.started(index, burstStart, startInfo);
            }
            send(burst);
            if (observer != null) {
                cwndStart = sock.info().cwnd();
            }
        }

        @Override
        void onReadable() {
            int n;
            while ((n = take(ack - ackGot)) > 0) {
                ackGot += n;
                if (ackGot == ack) {
                    completed();
                    return;
                }
            }
        }

        private void completed() {
            long end = now();
            histogram.recordValue(end - burstStart);
            operations++;
            if (observer != null) {
                TcpInfo i = sock.info();
                observer.completed(new Burst(index, burstStart, end, burst, i.totalRetrans() - startInfo.totalRetrans(),
                        i.timeouts() - startInfo.timeouts(), cwndStart, i.cwnd(), i));
            }
            if (stopRequested || cfg.count() > 0 && operations >= cfg.count()) {
                endMeasurement();
            } else if (computeNanos > 0) {
                computeTimer = sched.schedule(nextBurst, computeNanos);
            } else {
                startBurst();
            }
        }

        private void computeDone() {
            computeTimer = null;
            if (running()) {
                startBurst();
            }
        }

        @Override
        void requestStop() {
            if (computeTimer != null) {
                // Computing: no burst in flight, the run ends here.
                endMeasurement();
            } else {
                stopRequested = true;
            }
        }

        @Override
        void onEnd() {
            if (computeTimer != null) {
                computeTimer.cancel();
                computeTimer = null;
            }
        }
    }

    /** Receives the bursts and answers each complete one. */
    public static final class Server extends App {
        private final int burst;
        private final int ack;
        private int got;

        Server(NetStack stack, int bindAddr, AppConfig cfg, Params p) {
            super("burst", Role.SERVER, stack, bindAddr, cfg, true, p.ackBytes(), false);
            this.burst = p.burstBytes();
            this.ack = p.ackBytes();
        }

        @Override
        void onStart() {}

        @Override
        void onReadable() {
            int n;
            while ((n = take(burst - got)) > 0) {
                got += n;
                if (got == burst) {
                    got = 0;
                    operations++;
                    send(ack);
                }
            }
        }
    }
}
