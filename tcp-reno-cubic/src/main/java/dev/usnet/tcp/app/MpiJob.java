package dev.usnet.tcp.app;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpTrace;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;

/**
 * An MPI job over usnet's TCP, as mpirun starts one with OpenMPI's TCP transport (the {@code tcp} BTL): ranks
 * placed on namespaces, each listening on its own port ({@code basePort + rank}), one TCP connection per pair of
 * ranks that exchange messages, and a {@link MpiPattern} run for a number of iterations.
 *
 * <p><b>Connections are opened at start</b>, all of them, before the first iteration: the lower rank of each pair
 * connects to the higher one's port, and the first iteration starts on every rank at the instant the last
 * handshake completes, so the iterations measure the exchanges, not the handshakes. Differs: OpenMPI's TCP BTL
 * connects lazily, at a pair's first message (and then keeps the connection), so its first iteration also pays
 * the handshakes; with {@code mpi_preconnect_mpi} it connects at MPI_Init, as here.
 *
 * <p>Ranks on one namespace (one host) talk over shared memory unless {@link Config#localTcp}: the message is the
 * peer's at once and costs no network (OpenMPI's {@code sm}/{@code vader} BTL, chosen before {@code tcp} by
 * default); with {@code localTcp} they connect to the namespace's own address like any other pair. The ranks of a
 * namespace share its scheduler thread, so shared-memory hand-over needs no locking.
 *
 * <p>Thread use: setup and results from any thread; each rank and its channels run on their namespace's thread.
 */
public final class MpiJob {
    /**
     * @param pattern what each iteration does
     * @param size bytes of each vector message (cg's row reductions and transposes; alltoall and ring messages)
     * @param iterations how many times every rank runs the pattern
     * @param computeNanos the idle time of each compute phase
     * @param localTcp whether ranks of one namespace talk over TCP (true) or shared memory (false)
     * @param basePort rank r listens on basePort + r
     * @param congestion TCP_CONGESTION of every socket, or null for the namespaces' default
     * @param sendBufferBytes SO_SNDBUF of every socket, 0 for the namespaces' tcp_wmem maximum
     * @param receiveBufferBytes SO_RCVBUF of every socket, 0 for the namespaces' tcp_rmem maximum
     */
    public record Config(MpiPattern pattern, int size, int iterations, long computeNanos, boolean localTcp,
            int basePort, String congestion, int sendBufferBytes, int receiveBufferBytes) {
        public Config {
            if (size < 1 || iterations < 1 || computeNanos < 0 || basePort < 1 || sendBufferBytes < 0
                    || receiveBufferBytes < 0) {
                throw new IllegalArgumentException("bad MPI job config " + this);
            }
        }
    }

    /** Where a rank runs: its namespace, and the address its peers connect to. */
    public record Placement(NetStack stack, int addr) {}

    private static final int MAX_WRITE = 1 << 20;

    private final Config cfg;
    private final List<MpiRank> ranks = new ArrayList<>();
    private final int connections;
    private final ConcurrentHashMap<Long, MpiChannel> connecting = new ConcurrentHashMap<>();
    private final AtomicInteger endsPending;
    private final AtomicInteger listensPending = new AtomicInteger();
    private final AtomicInteger ranksDone = new AtomicInteger();
    private final AtomicBoolean released = new AtomicBoolean();
    private final ByteBuf src;
    /** Per rank, the connections it still has to accept (written on that rank's namespace thread). */
    private final int[] acceptsLeft;
    private volatile boolean stopped;
    private volatile boolean finished;
    private volatile String failure;
    private volatile long startNanos = -1;
    private volatile long endNanos = -1;

    public MpiJob(List<Placement> placement, Config cfg) {
        int n = placement.size();
        cfg.pattern().check(n);
        if ((long) cfg.basePort() + n - 1 > 65535) {
            throw new IllegalArgumentException("ports " + cfg.basePort() + ".." + (cfg.basePort() + n - 1L)
                    + " for " + n + " ranks go past 65535");
        }
        this.cfg = cfg;
        this.acceptsLeft = new int[n];
        for (int r = 0; r < n; r++) {
            Placement p = placement.get(r);
            ranks.add(new MpiRank(this, r, p.stack(), p.addr(), cfg.pattern().steps(r, n, cfg.size()), n));
        }
        int count = 0;
        for (MpiRank r : ranks) {
            for (MpiStep s : r.steps()) {
                count += pair(r, s.sendTo()) + pair(r, s.recvFrom());
            }
        }
        this.connections = count;
        this.endsPending = new AtomicInteger(2 * count);
        int largest = Math.min(MAX_WRITE, cfg.size());
        this.src = Buffers.alloc().directBuffer(largest, largest);
        src.setZero(0, largest);
        src.writerIndex(largest);
    }

    /** Makes both ends of the channel between {@code r} and {@code peer} if they need one; 1 when it was made. */
    private int pair(MpiRank r, int peer) {
        if (peer < 0 || peer == r.id || r.channels[peer] != null) {
            return 0;
        }
        MpiRank p = ranks.get(peer);
        if (p.stack == r.stack && !cfg.localTcp()) {
            return 0;
        }
        r.channels[peer] = new MpiChannel(r, peer, r.id < peer);
        p.channels[r.id] = new MpiChannel(p, r.id, peer < r.id);
        return 1;
    }

    public Config config() {
        return cfg;
    }

    public int ranks() {
        return ranks.size();
    }

    /** TCP connections the job opens. */
    public int connections() {
        return connections;
    }

    /** Payload bytes all ranks send in a complete run. */
    public long plannedBytes() {
        return cfg.pattern().bytesPerIteration(ranks.size(), cfg.size()) * cfg.iterations();
    }

    int iterations() {
        return cfg.iterations();
    }

    long computeNanos() {
        return cfg.computeNanos();
    }

    MpiRank rank(int id) {
        return ranks.get(id);
    }

    ByteBuf source() {
        return src;
    }

    boolean isStopped() {
        return stopped || failure != null;
    }

    /** Every rank finished every iteration. */
    public boolean isFinished() {
        return finished;
    }

    /** Finished, failed, or stopped: nothing more will happen. */
    public boolean isDone() {
        return finished || failure != null || stopped;
    }

    /**
     * Starts the job: every rank that accepts connections listens (each on its namespace's thread), then, once all
     * listen, every connecting end connects; the iterations begin when all connections are up. Problems (a port
     * in use, no route) end the job with a failure rather than throw.
     */
    public void start() {
        List<MpiRank> listeners = new ArrayList<>();
        for (MpiRank r : ranks) {
            for (MpiChannel c : r.channels) {
                if (c != null && !c.connector) {
                    listeners.add(r);
                    break;
                }
            }
        }
        if (listeners.isEmpty()) {
            barrier();
            return;
        }
        listensPending.set(listeners.size());
        for (MpiRank r : listeners) {
            r.sched.execute(() -> {
                try {
                    listen(r);
                } catch (RuntimeException e) {
                    fail("rank " + r.id + " cannot listen on port " + (cfg.basePort() + r.id) + " in " + r.stack.name()
                            + ": " + e.getMessage());
                    return;
                }
                if (listensPending.decrementAndGet() == 0) {
                    for (MpiRank c : ranks) {
                        c.sched.execute(() -> connectAll(c));
                    }
                }
            });
        }
    }

    private void listen(MpiRank r) {
        int backlog = 0;
        for (MpiChannel c : r.channels) {
            if (c != null && !c.connector) {
                backlog++;
            }
        }
        var holder = new dev.usnet.tcp.TcpListener[1];
        holder[0] = Tcp.of(r.stack).listen(0, cfg.basePort() + r.id, Math.max(1, backlog), child -> {
            MpiChannel from = connecting.remove(key(child.remoteAddr(), child.remotePort(), r.id));
            if (from == null || stopped) {
                child.abort();
                return;
            }
            configure(child, r.channels[from.rank.id].losses);
            r.channels[from.rank.id].attach(child);
            if (--acceptsLeft[r.id] == 0) {
                holder[0].close();
            }
        });
        acceptsLeft[r.id] = backlog;
    }


    private void connectAll(MpiRank r) {
        if (isStopped()) {
            return;
        }
        for (MpiChannel c : r.channels) {
            if (c == null || !c.connector) {
                continue;
            }
            MpiRank peer = ranks.get(c.peer);
            try {
                c.sock = Tcp.of(r.stack).connect(0, 0, peer.addr, cfg.basePort() + peer.id, c, s -> {
                    configure(s, c.losses);
                    connecting.put(key(s.localAddr(), s.localPort(), peer.id), c);
                });
            } catch (RuntimeException e) {
                fail("rank " + r.id + " cannot connect to rank " + peer.id + ": " + e.getMessage());
                return;
            }
        }
    }

    private void configure(TcpSock s, TcpTrace losses) {
        if (cfg.congestion() != null) {
            s.setCongestionControl(cfg.congestion());
        }
        s.setNoDelay(true);
        if (cfg.sendBufferBytes() > 0) {
            s.setSendBufferSize(cfg.sendBufferBytes());
        }
        if (cfg.receiveBufferBytes() > 0) {
            s.setReceiveBufferSize(cfg.receiveBufferBytes());
        }
        s.setTrace(losses);
    }

    private static long key(int addr, int port, int toRank) {
        return (addr & 0xffff_ffffL) << 32 | (long) port << 16 | toRank;
    }

    /** One end's handshake completed; the last one starts the iterations. */
    void channelUp() {
        if (endsPending.decrementAndGet() == 0) {
            barrier();
        }
    }

    private void barrier() {
        startNanos = ranks.getFirst().sched.nanoTime();
        for (MpiRank r : ranks) {
            r.sched.execute(r::begin);
        }
    }

    void rankDone(MpiRank r) {
        if (ranksDone.incrementAndGet() == ranks.size()) {
            endNanos = r.sched.nanoTime();
            finished = true;
            for (MpiRank x : ranks) {
                x.sched.execute(() -> {
                    for (MpiChannel c : x.channels) {
                        if (c != null) {
                            c.closeAtEnd();
                        }
                    }
                });
            }
            release();
        }
    }

    synchronized void fail(String reason) {
        if (failure == null && !finished) {
            failure = reason;
        }
    }

    /**
     * Ends an unfinished job: every socket is reset (ECONNABORTED) after its counters are noted. On each
     * namespace's thread, or at once in virtual time (one thread drives every namespace).
     */
    public void abort() {
        if (finished) {
            return;
        }
        stopped = true;
        for (MpiRank r : ranks) {
            Runnable a = () -> {
                for (MpiChannel c : r.channels) {
                    if (c != null) {
                        c.snapshot();
                        if (c.sock != null) {
                            c.sock.abort();
                        }
                    }
                }
            };
            if (r.sched.isVirtual() || r.sched.inLoop()) {
                a.run();
            } else {
                r.sched.execute(a);
            }
        }
        release();
    }

    private void release() {
        if (released.compareAndSet(false, true)) {
            src.release();
        }
    }

    /** Rank {@code id}'s position, for a stuck job. */
    public String where(int id) {
        return ranks.get(id).where();
    }

    /** The job's result so far (final once {@link #isDone()} and its sockets are closed). */
    public MpiResult result() {
        long sent = 0;
        long shm = 0;
        Histogram h = new Histogram(3);
        for (MpiRank r : ranks) {
            sent += r.bytesSent;
            shm += r.shmBytesSent;
            h.add(r.iterations);
        }
        long retrans = 0;
        long timeouts = 0;
        List<MpiResult.Connection> conns = new ArrayList<>(connections);
        for (MpiRank r : ranks) {
            for (MpiChannel c : r.channels) {
                if (c == null || !c.connector) {
                    continue;
                }
                MpiChannel other = ranks.get(c.peer).channels[r.id];
                long re = retransOf(c) + retransOf(other);
                long to = timeoutsOf(c) + timeoutsOf(other);
                retrans += re;
                timeouts += to;
                conns.add(new MpiResult.Connection(r.id, c.peer, re, to, cwnds(c, other, "recovery"),
                        cwnds(c, other, "rto")));
            }
        }
        String why = failure;
        if (why == null && !finished) {
            why = stuck();
        }
        return new MpiResult(cfg.pattern().label(), ranks.size(), cfg.iterations(), connections,
                finished ? endNanos - startNanos : -1, sent, shm, Percentiles.of(h), h, retrans, timeouts,
                List.copyOf(conns), why == null ? "" : why);
    }

    /** Why an unfinished job is unfinished: how many ranks did not finish, and where the first of them is. */
    private String stuck() {
        if (startNanos < 0) {
            return "not every connection came up (" + endsPending.get() + " of " + 2 * connections
                    + " connection ends still opening)";
        }
        int left = 0;
        String first = null;
        for (MpiRank r : ranks) {
            if (!r.isDone()) {
                left++;
                if (first == null) {
                    first = r.where();
                }
            }
        }
        return left + " of " + ranks.size() + " ranks did not finish (first: " + first + ")";
    }

    private static long retransOf(MpiChannel c) {
        return c.counted() || c.sock == null ? c.retrans : c.sock.totalRetrans();
    }

    private static long timeoutsOf(MpiChannel c) {
        return c.counted() || c.sock == null ? c.timeouts : c.sock.timeouts();
    }

    private static long[] cwnds(MpiChannel a, MpiChannel b, String event) {
        int n = 0;
        for (MpiChannel c : new MpiChannel[] {a, b}) {
            for (int i = 0; i < c.losses.rows(); i++) {
                if (c.losses.event(i).equals(event)) {
                    n++;
                }
            }
        }
        long[] out = new long[n];
        int k = 0;
        for (MpiChannel c : new MpiChannel[] {a, b}) {
            for (int i = 0; i < c.losses.rows(); i++) {
                if (c.losses.event(i).equals(event)) {
                    out[k++] = c.losses.priorCwnd(i);
                }
            }
        }
        return out;
    }
}
