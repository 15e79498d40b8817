package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Scheduler;
import dev.usnet.core.wire.EthernetFrame;
import java.util.SplittableRandom;

/**
 * A deterministic impairment on a device's receive side for tests: a serialising bottleneck of {@code rateBps}
 * (an unbounded FIFO in front), a fixed one-way delay, seeded loss, duplication and reordering (a reordered
 * frame is held back by an extra delay), frames dropped by index or content, and an optional blackout.
 * ARP passes untouched so neighbours resolve. Install on the receiving end of each direction.
 */
public final class Impairment {
    final SplittableRandom rnd;
    public long delayNanos;
    public double loss;
    public double dup;
    public double reorder;
    public long reorderExtraNanos = 300_000;
    public boolean blackout;
    /** Frames (non-ARP, counted from 0 on this end) to drop, e.g. to lose exactly the tail of a burst. */
    public java.util.function.LongPredicate dropFrame = n -> false;
    /** Frames to drop by content (e.g. every copy of one TCP segment, retransmissions included). */
    public java.util.function.Predicate<dev.usnet.core.buf.Packet> dropIf = p -> false;
    public long frames;
    /** Bits per second of the bottleneck; 0: infinitely fast. */
    public long rateBps;
    /** Frame bytes that went through the bottleneck. */
    public long wireBytes;
    private long busyUntil;
    public long dropped;
    public long duplicated;
    public long reordered;
    public long delivered;

    private Impairment(long seed) {
        this.rnd = new SplittableRandom(seed);
    }

    public static Impairment on(NetStack stack, Device dev, long seed) {
        Impairment im = new Impairment(seed);
        Scheduler sched = stack.scheduler();
        dev.setRxHandler((d, p) -> {
            int type = p.buf().getUnsignedShort(p.start() + 12);
            if (type == EthernetFrame.ETH_P_ARP) {
                return false;
            }
            long n = im.frames++;
            if (im.blackout || im.dropFrame.test(n) || im.dropIf.test(p) || im.rnd.nextDouble() < im.loss) {
                im.dropped++;
                p.release();
                return true;
            }
            if (im.rnd.nextDouble() < im.dup) {
                im.duplicated++;
                Packet c = p.cloneShared();
                long extra = im.rnd.nextLong(im.reorderExtraNanos + 1);
                sched.schedule(() -> im.deliver(stack, c), im.delayNanos + extra);
            }
            long delay = im.delayNanos;
            im.wireBytes += p.length();
            if (im.rateBps > 0) {
                long now = sched.nanoTime();
                im.busyUntil = Math.max(now, im.busyUntil) + p.length() * 8L * 1_000_000_000L / im.rateBps;
                delay += im.busyUntil - now;
            }
            if (im.rnd.nextDouble() < im.reorder) {
                im.reordered++;
                delay += im.reorderExtraNanos;
            }
            if (delay == 0) {
                im.delivered++;
                return false;
            }
            sched.schedule(() -> im.deliver(stack, p), delay);
            return true;
        });
        return im;
    }

    private void deliver(NetStack stack, Packet p) {
        delivered++;
        stack.l2Receive(p);
    }
}
