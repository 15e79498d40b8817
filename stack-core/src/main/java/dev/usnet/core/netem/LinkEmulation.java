package dev.usnet.core.netem;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.time.Scheduler;
import dev.usnet.core.time.Timeout;
import io.netty.buffer.ByteBuf;
import java.math.BigInteger;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * The link emulation on one device's transmit side: usnet's userspace {@code sch_netem} (the kernel here has
 * none). Every frame the device transmits passes through it; it decides, with a seeded random source of its
 * own, whether the frame is lost or duplicated, when it leaves, and whether the queue has room for it.
 *
 * <p>A frame's departure time is fixed when it arrives, so it is exact in virtual time:
 * <ol>
 * <li>duplicate and loss as netem draws them: a duplicated frame is cloned (sharing its bytes) and the copy
 *     goes through the emulator again without duplication (it may be lost on its own); a frame both
 *     duplicated and lost is sent once;</li>
 * <li>the queue limit: a frame arriving while {@code limit} frames are held (waiting for the link or still in
 *     their delay, as netem counts them) is tail-dropped;</li>
 * <li>reordering: with probability {@code reorder} (after {@code gap - 1} delayed frames) a frame skips the
 *     link and the delay and leaves at once, ahead of everything held — netem's semantics;</li>
 * <li>the link: at {@code rate} a frame occupies the link {@code (len + overhead) * 8 / rate}; it leaves when
 *     the link is free, that long later (netem's rate). With a {@code burst} of B bytes the link is also a
 *     token bucket (tbf): after an idle spell, up to B bytes of back-to-back frames leave together, one frame
 *     time after they came; the long-run rate stays {@code rate};</li>
 * <li>then the delay, {@code delay} plus jitter drawn per frame; in the default {@code fifo} queue a frame
 *     never leaves before the one ahead of it, in {@code tfifo} it may (netem's own behaviour).</li>
 * </ol>
 * Frames wait in a pre-sized ring ordered by departure time, with one timer for the head, on the device's
 * namespace scheduler; nothing is allocated per frame in steady state except the scheduler's timer event.
 * Drops are counted under {@link DropReason#NETEM_LOSS} and {@link DropReason#NETEM_QUEUE_FULL} in the
 * namespace and as tx dropped on the device. Queued frames are dropped ({@link DropReason#DEV_DOWN}) when the
 * device goes down, leaves its namespace or is deleted: nothing leaks.
 *
 * <p>Created by a device when its settings ({@code usnet.netem.<dev>.*}) first ask for emulation;
 * thread-safe (the namespace's thread sends, any thread may read counters or purge).
 */
public final class LinkEmulation {
    /** Where a frame goes when it leaves: the rest of the device's transmit path (taps, counters, driver). */
    @FunctionalInterface
    public interface Output {
        void send(Packet p);
    }

    /**
     * Where a frame the emulation drops goes: the device counts a transmit drop and its namespace counts the drop
     * under {@code reason} and frees the packet. The emulator sits below devices and names neither.
     */
    @FunctionalInterface
    public interface TxDrop {
        void drop(Packet p, DropReason reason);
    }

    /**
     * Counters like {@code tc -s qdisc show}: frames and bytes that left, drops by reason, duplicates made,
     * frames reordered, and the queue now and at its highest.
     */
    public record Stats(long sentPackets, long sentBytes, long lost, long queueDrops, long purged, long duplicated,
                        long reordered, int qlen, long backlogBytes, int maxQlen) {
        /** Every frame dropped here, whatever the reason. */
        public long dropped() {
            return lost + queueDrops + purged;
        }
    }

    private static final int INITIAL_CAPACITY = 16;

    private final TxDrop txDrop;
    private final Scheduler scheduler;
    private final Output output;
    private final long defaultSeed;
    private final Runnable drainTask = this::drain;

    // Settings in force and what is derived from them.
    private NetemParams params;
    private SplittableRandom random;
    private long burstNanos;

    // The link as a token bucket: its theoretical arrival time (GCRA) in ns plus a fraction in 1/rate ns.
    private long tat;
    private long tatFrac;
    private long reorderCounter;

    // Held frames in departure order: a ring of packets and their departure times, grown by doubling.
    private Packet[] frames = new Packet[INITIAL_CAPACITY];
    private long[] times = new long[INITIAL_CAPACITY];
    private int head;
    // Everything below is written under this object's lock and read under it (stats, queueLength): plain fields,
    // where volatile ones cost a fence per store, six stores a frame.
    private int size;
    private long backlogBytes;

    private Timeout timer;
    private long timerAt = Long.MAX_VALUE;
    private boolean closed;

    private long sentPackets;
    private long sentBytes;
    private long lost;
    private long queueDrops;
    private long purged;
    private long duplicated;
    private long reordered;
    private int maxQlen;

    /**
     * The emulator of device {@code devName} in the namespace {@code netnsName} (created with {@code netnsSeed},
     * running on {@code scheduler}); frames that leave go to {@code output}, frames it drops to {@code txDrop}.
     */
    public LinkEmulation(String devName, String netnsName, long netnsSeed, Scheduler scheduler, TxDrop txDrop,
                         Output output) {
        this.txDrop = txDrop;
        this.scheduler = scheduler;
        this.output = output;
        this.defaultSeed = mix(mix(netnsSeed ^ 0x6e6574656dL) + netnsName.hashCode()) + devName.hashCode();
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** The settings the last frame was handled with ({@link NetemParams#NONE} before the first). */
    public synchronized NetemParams params() {
        return params == null ? NetemParams.NONE : params;
    }

    /** Frames held now. */
    public synchronized int queueLength() {
        return size;
    }

    public synchronized Stats stats() {
        return new Stats(sentPackets, sentBytes, lost, queueDrops, purged, duplicated, reordered, size, backlogBytes, maxQlen);
    }

    /**
     * A frame the device transmits, handled with {@code np} (the settings now in force; a change applies to
     * frames sent afterwards, held frames keep their departure times). Owns {@code p} from here.
     */
    public void enqueue(Packet p, NetemParams np) {
        Packet now1;
        Packet now2 = null;
        synchronized (this) {
            if (closed) {
                txDrop.drop(p, DropReason.DEV_DOWN);
                return;
            }
            if (np != params) {
                apply(np);
            }
            long now = scheduler.nanoTime();
            int count = 1;
            if (np.duplicate() > 0 && random.nextDouble() < np.duplicate()) {
                count++;
            }
            if (np.loss() > 0 && random.nextDouble() < np.loss()) {
                count--;
            }
            if (count == 0) {
                dropLost(p);
                return;
            }
            Packet copy = null;
            if (count == 2) {
                copy = p.cloneShared();
                count(Counter.DUPLICATED);
            }
            now1 = admit(p, now);
            if (copy != null) {
                // As netem enqueues the copy at the root again with duplication off: it may be lost on its own.
                if (np.loss() > 0 && random.nextDouble() < np.loss()) {
                    dropLost(copy);
                } else {
                    now2 = admit(copy, now);
                }
            }
        }
        if (now1 != null) {
            onWire(now1);
        }
        if (now2 != null) {
            onWire(now2);
        }
    }

    private enum Counter { DUPLICATED, REORDERED, LOST, QUEUE_DROP, PURGED }

    // Counters are written and read under the lock only.
    private void count(Counter c) {
        switch (c) {
            case DUPLICATED -> duplicated++;
            case REORDERED -> reordered++;
            case LOST -> lost++;
            case QUEUE_DROP -> queueDrops++;
            case PURGED -> purged++;
        }
    }

    private void countSent(Packet p) {
        sentPackets++;
        sentBytes += p.length();
    }

    private void dropLost(Packet p) {
        count(Counter.LOST);
        txDrop.drop(p, DropReason.NETEM_LOSS);
    }

    /**
     * Limit, reordering, link and delay for one frame; returns it when it leaves at once (the caller sends it
     * after the lock), null when it was queued or dropped.
     */
    private Packet admit(Packet p, long now) {
        NetemParams np = params;
        if (size >= np.limit()) {
            count(Counter.QUEUE_DROP);
            txDrop.drop(p, DropReason.NETEM_QUEUE_FULL);
            return null;
        }
        if (np.reorder() > 0 && reorderCounter >= np.gap() - 1 && random.nextDouble() < np.reorder()) {
            reorderCounter = 0;
            count(Counter.REORDERED);
            countSent(p);
            return p;
        }
        reorderCounter++;
        long t = np.rateBitsPerSecond() > 0 ? linkDone(wireBytes(p) + np.overheadBytes(), now, np.rateBitsPerSecond()) : now;
        long d = np.delayNanos();
        long j = np.jitterNanos();
        if (j > 0) {
            d += switch (np.distribution()) {
                case UNIFORM -> random.nextLong(-j, j + 1);
                case NORMAL -> Math.round(Math.max(-4.0, Math.min(4.0, random.nextGaussian())) * j);
            };
        }
        t += Math.max(0, d);
        int n = size;
        if (n == 0 && t <= now) {
            countSent(p);
            return p;
        }
        if (np.queue() == NetemParams.Queue.FIFO && n > 0) {
            t = Math.max(t, times[slot(n - 1)]);
        }
        insert(p, t);
        armTimer(now);
        return null;
    }

    /**
     * When a frame of {@code bytes} offered now has crossed the link: the token bucket's theoretical arrival
     * time advances by the frame's time on the wire; a frame leaves when it is done, or earlier by up to the
     * burst when the bucket has tokens.
     */
    private long linkDone(long bytes, long now, long rate) {
        long num = Math.max(0, bytes) * 8 * 1_000_000_000L;
        long adv = num / rate;
        long rem = num % rate;
        long t;
        long f;
        if (tat < now || (tat == now && tatFrac == 0)) {
            t = now;
            f = 0;
        } else {
            t = tat;
            f = tatFrac;
        }
        t += adv;
        f += rem;
        if (f >= rate) {
            f -= rate;
            t++;
        }
        tat = t;
        tatFrac = f;
        long wire = adv + (rem > 0 ? 1 : 0);
        // tbf's bucket holds burst bytes: beyond the frame on the wire, burst - len bytes may go with it.
        long tolerance = Math.max(0, burstNanos - wire);
        return Math.max(now + wire, (f > 0 ? t + 1 : t) - tolerance);
    }

    private void apply(NetemParams np) {
        NetemParams old = params;
        params = np;
        if (random == null || !Objects.equals(old.seed(), np.seed())) {
            random = new SplittableRandom(np.seed() != null ? np.seed() : defaultSeed);
        }
        long rate = np.rateBitsPerSecond();
        burstNanos = rate == 0 ? 0 : BigInteger.valueOf(np.burstBytes()).multiply(BigInteger.valueOf(8_000_000_000L))
                .divide(BigInteger.valueOf(rate)).longValue();
        if (rate == 0) {
            tat = 0;
            tatFrac = 0;
        } else if (old == null || old.rateBitsPerSecond() != rate) {
            // The fraction was in units of the old rate: less than a nanosecond, dropped.
            tatFrac = 0;
        }
    }

    // ---- the ring ----

    private int slot(int i) {
        return (head + i) & (frames.length - 1);
    }

    private void insert(Packet p, long t) {
        int n = size;
        if (n == frames.length) {
            grow();
        }
        int i = n;
        // Behind every frame due at or before t (FIFO among equal times); in fifo order that is the tail.
        while (i > 0 && times[slot(i - 1)] > t) {
            frames[slot(i)] = frames[slot(i - 1)];
            times[slot(i)] = times[slot(i - 1)];
            i--;
        }
        frames[slot(i)] = p;
        times[slot(i)] = t;
        size = n + 1;
        backlogBytes += p.length();
        if (n + 1 > maxQlen) {
            maxQlen = n + 1;
        }
    }

    private void grow() {
        int n = size;
        Packet[] f = new Packet[frames.length * 2];
        long[] t = new long[frames.length * 2];
        for (int i = 0; i < n; i++) {
            f[i] = frames[slot(i)];
            t[i] = times[slot(i)];
        }
        frames = f;
        times = t;
        head = 0;
    }

    private Packet pop() {
        Packet p = frames[head];
        frames[head] = null;
        head = (head + 1) & (frames.length - 1);
        size = size - 1;
        backlogBytes -= p.length();
        return p;
    }

    private void armTimer(long now) {
        long h = times[head];
        if (h < timerAt) {
            if (timer != null) {
                timer.cancel();
            }
            timerAt = h;
            timer = scheduler.schedule(drainTask, h - now);
        }
    }

    /** The head timer: sends every frame due by now, then waits for the next. */
    private void drain() {
        long now = scheduler.nanoTime();
        synchronized (this) {
            timer = null;
            timerAt = Long.MAX_VALUE;
        }
        while (true) {
            Packet p;
            synchronized (this) {
                if (size == 0) {
                    return;
                }
                if (times[head] > now) {
                    armTimer(now);
                    return;
                }
                p = pop();
                countSent(p);
            }
            onWire(p);
        }
    }

    /**
     * A frame leaves the emulated NIC and wire: its transmission is complete, so its sender's charge for it ends
     * here (the driver's tx-completion freeing the skb runs its destructor, tcp_wfree for TCP's small queues).
     * Differs: Linux completes at the end of serialization; here it is at departure, after this device's
     * {@code delay} too (1 us on the example NICs: ~1.2 KB at 10 Gbit/s).
     */
    private void onWire(Packet p) {
        p.orphan();
        output.send(p);
    }

    /**
     * Drops every held frame ({@link DropReason#DEV_DOWN}, counted as purged and tx dropped) and forgets the
     * link's state, as a qdisc reset does when its device goes down.
     */
    public synchronized void purge() {
        if (timer != null) {
            timer.cancel();
            timer = null;
        }
        timerAt = Long.MAX_VALUE;
        while (size > 0) {
            Packet p = pop();
            count(Counter.PURGED);
            txDrop.drop(p, DropReason.DEV_DOWN);
        }
        head = 0;
        tat = 0;
        tatFrac = 0;
        reorderCounter = 0;
    }

    /** Purges and refuses frames from now on: the device left the namespace this emulator was made for. */
    public synchronized void close() {
        purge();
        closed = true;
    }

    /**
     * The bytes a frame occupies on the wire: its length, and for a GSO super-frame the headers of every
     * segment it will become (as qdisc_pkt_len_init counts them).
     */
    static int wireBytes(Packet p) {
        int len = p.length();
        if (!p.isGso() || (p.gsoType() != Packet.GSO_TCPV4 && p.gsoType() != Packet.GSO_UDP)) {
            return len;
        }
        ByteBuf b = p.buf();
        int start = p.start();
        int end = start + len;
        if (len < 14 + 20) {
            return len;
        }
        int type = b.getUnsignedShort(start + 12);
        int l3 = start + 14;
        if (type == 0x8100 || type == 0x88a8) {
            type = b.getUnsignedShort(start + 16);
            l3 += 4;
        }
        if (type != 0x0800 || l3 + 20 > end) {
            return len;
        }
        int l4 = l3 + (b.getUnsignedByte(l3) & 0xf) * 4;
        int l4hl;
        if (p.gsoType() == Packet.GSO_TCPV4) {
            if (l4 + 20 > end) {
                return len;
            }
            l4hl = (b.getUnsignedByte(l4 + 12) >>> 4) * 4;
        } else {
            l4hl = 8;
        }
        int headers = l4 + l4hl - start;
        int payload = len - headers;
        if (payload <= 0 || headers <= 0) {
            return len;
        }
        int segs = (payload + p.gsoSize() - 1) / p.gsoSize();
        return len + (segs - 1) * headers;
    }
}
