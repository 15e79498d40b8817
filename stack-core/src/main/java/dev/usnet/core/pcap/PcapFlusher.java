package dev.usnet.core.pcap;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Flushes open {@link PcapWriter}s that went idle with frames still buffered, so a slow ping's frames reach
 * the file within a flush interval and a bit, not at exit. One daemon thread for all writers: a writer is
 * shared by the namespaces (threads) of every device tapped into it and belongs to none of their schedulers,
 * and a virtual-time scheduler must not be kept busy by a wall-clock chore.
 */
final class PcapFlusher {
    private static final Set<PcapWriter> OPEN = ConcurrentHashMap.newKeySet();
    private static ScheduledExecutorService timer;

    private PcapFlusher() {}

    static synchronized void register(PcapWriter w) {
        OPEN.add(w);
        if (timer == null) {
            timer = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "usnet-pcap-flush");
                t.setDaemon(true);
                return t;
            });
            long period = PcapWriter.FLUSH_INTERVAL_NANOS / 2;
            timer.scheduleWithFixedDelay(PcapFlusher::flushStale, period, period, TimeUnit.NANOSECONDS);
        }
    }

    static void unregister(PcapWriter w) {
        OPEN.remove(w);
    }

    private static void flushStale() {
        long now = System.nanoTime();
        for (PcapWriter w : OPEN) {
            try {
                // A failed flush stops the writer and reports to its listener.
                w.flushIfStale(now);
            } catch (RuntimeException e) {
                OPEN.remove(w);
            }
        }
    }
}
