package dev.usnet.tools.run;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.time.Scheduler;
import dev.usnet.core.time.Timeout;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import dev.usnet.tools.topology.file.PcapReplay;
import java.util.ArrayList;
import java.util.List;

/**
 * The running {@code kind: replay} devices of a topology: each sends its pcap file's frames on its namespace's
 * clock, at the file's relative timestamps scaled by the replay's rate, from the instant the apps start. In
 * virtual time a frame leaves at exactly its instant; in real time at the namespace's timer precision (each
 * frame is timed from the start, so lateness does not add up). What reaches a replay end is taken in there
 * (after its taps, so a capture on it sees it) and not handed to its namespace.
 */
public final class PcapReplays {
    /**
     * One replay device sending. Its fields are touched on its namespace's thread only, but {@code stopped} and
     * {@code pending}, which {@link #stop} (any thread) sets and cancels.
     */
    public static final class Sender {
        private final String label;
        private final PcapReplay replay;
        private final Device end;
        private final Scheduler clock;
        private final long[] offsets;
        private final long period;
        private long start;
        private int next;
        private int pass;
        private long sent;
        private volatile Timeout pending;
        private volatile boolean stopped;

        Sender(String label, PcapReplay replay, Device end) {
            this.label = label;
            this.replay = replay;
            this.end = end;
            this.clock = end.stack().scheduler();
            this.offsets = replay.frames().offsets(replay.rate());
            this.period = offsets.length == 0 ? 0 : offsets[offsets.length - 1];
        }

        private void begin() {
            start = clock.nanoTime();
            sendDue();
        }

        /** Sends every frame whose instant has come, then waits for the next one. */
        private void sendDue() {
            if (stopped) {
                return;
            }
            List<PcapRecord> recs = replay.frames().records();
            while (!recs.isEmpty() && (replay.loop() == 0 || pass < replay.loop())) {
                long at = start + pass * period + offsets[next];
                long now = clock.nanoTime();
                if (at > now) {
                    pending = clock.schedule(this::sendDue, at - now);
                    return;
                }
                byte[] data = recs.get(next).data();
                Packet p = Packet.allocate(Buffers.HEADROOM, data.length);
                p.buf().writeBytes(data);
                end.transmit(p);
                if (sent++ == 0) {
                    // The schedule counts from the first frame's departure: in real time the first send through a
                    // cold path (class loading, the JIT) must not make every later frame late. Virtual time stands
                    // still meanwhile.
                    start = clock.nanoTime();
                }
                if (++next == recs.size()) {
                    // The next pass starts at the instant this one's last frame left.
                    next = 0;
                    pass++;
                }
            }
        }

        private void stop() {
            stopped = true;
            Timeout t = pending;
            if (t != null) {
                t.cancel();
            }
        }

        /** {@code ns/dev: N frames of FILE sent (loop L, rate R)}, for the exit report. */
        String line() {
            int n = replay.frames().records().size();
            return "replay " + label + ": " + sent + " frames of " + replay.file() + " sent (" + n + " frame"
                    + (n == 1 ? "" : "s") + " a pass, " + (replay.loop() == 0 ? "looping" : "loop " + replay.loop())
                    + (replay.rate() == 1 ? "" : ", rate " + replay.rate()) + ")";
        }

        /** Frames sent so far. */
        long sent() {
            return sent;
        }
    }

    private final List<Sender> senders;

    private PcapReplays(List<Sender> senders) {
        this.senders = senders;
    }

    /**
     * The replay devices of a built topology, not sending yet; each end already takes in what reaches it. Call
     * before the apps start, so nothing reaching a replay end is handed to its namespace.
     */
    public static PcapReplays of(Topology topology) {
        List<Sender> l = new ArrayList<>();
        for (Ns ns : topology.spec().namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof Veth v && !v.peerSide() && v.replay() != null) {
                    Device end = topology.device(ns.name(), v.link().name());
                    end.setRxHandler((dev, p) -> {
                        p.release();
                        return true;
                    });
                    l.add(new Sender(ns.name() + "/" + v.link().name(), v.replay(), end));
                }
            }
        }
        if (!l.isEmpty()) {
            // The first buffer a process allocates sets up Netty's allocator, which can take a second: here, before
            // the run starts, rather than in the first frame's send.
            Packet.allocate(Buffers.HEADROOM, 64).release();
        }
        return new PcapReplays(List.copyOf(l));
    }

    /** Starts every replay at its namespace's now, on its namespace's thread. */
    public void start() {
        for (Sender s : senders) {
            s.clock.execute(s::begin);
        }
    }

    /** Stops sending; frames already handed to a device go on their way. */
    public void stop() {
        for (Sender s : senders) {
            s.stop();
        }
    }

    public List<Sender> senders() {
        return senders;
    }

    /** The apps' lines of the exit report followed by a line per replay device ({@code replays} may be null). */
    public static List<String> withLines(List<String> appLines, PcapReplays replays) {
        if (replays == null || replays.senders.isEmpty()) {
            return appLines;
        }
        List<String> l = new ArrayList<>(appLines);
        replays.senders.forEach(s -> l.add(s.line()));
        return List.copyOf(l);
    }
}
