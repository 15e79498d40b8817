package dev.usnet.tcp.app;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Scheduler;
import dev.usnet.core.wire.EthernetFrame;
import java.util.SplittableRandom;

/**
 * One direction of a test link, on the receiving device: a serialising bottleneck of {@code rateBps} (frames
 * leave one after another; an unbounded FIFO in front), then a fixed one-way delay, and seeded loss. ARP
 * passes untouched so neighbours resolve. Deterministic given the seed.
 */
final class Link {
    final SplittableRandom rnd;
    long delayNanos;
    /** Bits per second of the bottleneck; 0: infinitely fast. */
    long rateBps;
    double loss;
    /** Frames (non-ARP, counted from 0) to drop. */
    java.util.function.LongPredicate dropFrame = n -> false;
    long frames;
    long dropped;
    long wireBytes;
    private long busyUntil;

    private Link(long seed) {
        this.rnd = new SplittableRandom(seed);
    }

    static Link on(NetStack stack, Device dev, long seed) {
        Link l = new Link(seed);
        Scheduler sched = stack.scheduler();
        dev.setRxHandler((d, p) -> {
            int type = p.buf().getUnsignedShort(p.start() + 12);
            if (type == EthernetFrame.ETH_P_ARP) {
                return false;
            }
            long n = l.frames++;
            if (l.dropFrame.test(n) || l.loss > 0 && l.rnd.nextDouble() < l.loss) {
                l.dropped++;
                p.release();
                return true;
            }
            long now = sched.nanoTime();
            long out = now;
            l.wireBytes += p.length();
            if (l.rateBps > 0) {
                l.busyUntil = Math.max(now, l.busyUntil) + p.length() * 8L * 1_000_000_000L / l.rateBps;
                out = l.busyUntil;
            }
            long delay = out - now + l.delayNanos;
            if (delay == 0) {
                return false;
            }
            sched.schedule(() -> stack.l2Receive(p), delay);
            return true;
        });
        return l;
    }
}
