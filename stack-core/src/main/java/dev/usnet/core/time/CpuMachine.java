package dev.usnet.core.time;

import java.util.ArrayDeque;

/**
 * The modelled CPU of one machine that several namespaces run on (usnet.cpu.machine), in virtual time: their
 * receive backlog runs take turns on it, one run at a time, each starting when the one before has stopped keeping
 * the machine busy, in the order they asked (round robin: a namespace with more work left asks again behind the
 * others), as net_rx_action goes through one CPU's poll list giving each NAPI its weight. So the bridge of a host
 * namespace and the backlog of the ranks' namespace behind its veth compete for the same modelled time, as in
 * Linux, where the veth's netif_rx queues on the backlog of the CPU that ran the NIC's receive softirq.
 *
 * <p>Only in virtual time (a real-time run only accounts the model). One thread; allocates nothing per run once
 * its queue has grown to the number of namespaces on the machine.
 */
public final class CpuMachine {
    private final String name;
    private final Scheduler scheduler;
    private final ArrayDeque<Runnable> pollList = new ArrayDeque<>();
    // The clock until which the last run keeps the machine busy.
    private long busyUntil;
    private boolean armed;
    private final Runnable dispatch = new Runnable() {
        @Override
        public void run() {
            armed = false;
            long wait = busyUntil - scheduler.nanoTime();
            if (wait > 0) {
                arm(wait);
                return;
            }
            Runnable next = pollList.pollFirst();
            if (next != null) {
                next.run();
            }
            if (!armed && !pollList.isEmpty()) {
                arm(busyUntil - scheduler.nanoTime());
            }
        }

        @Override
        public String toString() {
            return "CPU of machine " + name;
        }
    };

    CpuMachine(String name, Scheduler scheduler) {
        this.name = name;
        this.scheduler = scheduler;
    }

    public String name() {
        return name;
    }

    /** The clock until which the machine is busy with what it already ran. */
    public long busyUntil() {
        return busyUntil;
    }

    /** A run that just ended keeps the machine busy for {@code busyNanos} more, from now or from what was before. */
    public void charge(long busyNanos) {
        busyUntil = Math.max(busyUntil, scheduler.nanoTime()) + busyNanos;
    }

    /** napi_schedule on this machine: {@code run} joins the end of its poll list and runs when its turn comes. */
    public void schedule(Runnable run) {
        pollList.addLast(run);
        if (!armed) {
            arm(busyUntil - scheduler.nanoTime());
        }
    }

    private void arm(long wait) {
        armed = true;
        if (wait > 0) {
            scheduler.executeAfter(dispatch, wait);
        } else {
            scheduler.execute(dispatch);
        }
    }

    @Override
    public String toString() {
        return "machine " + name;
    }
}
