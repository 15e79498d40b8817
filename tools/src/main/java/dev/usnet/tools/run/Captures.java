package dev.usnet.tools.run;

import dev.usnet.core.device.Device;
import dev.usnet.core.pcap.PcapTap;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.tools.cli.IoErrors;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec.Capture;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code captures:} of a running topology, in either clock: one pcap file per capture, tapped onto its
 * device. Frames are stamped {@code epochNanos} + the namespace clock: the wall clock's offset in real time,
 * 0 in virtual time (a virtual run starts at 00:00:00 1970).
 */
public final class Captures {
    /** A capture's file name for standard output ({@code --capture NS/DEV=-}). */
    static final String STDOUT = "-";

    private final Map<Path, PcapWriter> files = new LinkedHashMap<>();
    private final List<Runnable> untap = new ArrayList<>();

    /** Opens every capture of {@code spec} under {@code outDir}; a file that cannot be written is bad input. */
    public void open(TopologySpec spec, Topology topology, Path outDir, long epochNanos) {
        for (Ns ns : spec.namespaces()) {
            for (Capture c : ns.captures()) {
                boolean toStdout = c.file().equals(STDOUT);
                Path f = toStdout ? Path.of(STDOUT) : outDir.resolve(c.file());
                if (toStdout && files.containsKey(f)) {
                    throw new UsageException(c.where().error("only one capture can go to standard output (-)"));
                }
                PcapWriter w;
                try {
                    if (toStdout) {
                        // File descriptor 1 itself: usnet's own words go to standard error in such a run (RunCommand).
                        w = new PcapWriter(new java.io.FileOutputStream(java.io.FileDescriptor.out));
                    } else {
                        if (f.getParent() != null) {
                            Files.createDirectories(f.getParent());
                        }
                        w = new PcapWriter(f);
                    }
                } catch (IOException e) {
                    throw new UsageException(c.where().error("cannot write capture " + IoErrors.describe(f, e)), e);
                }
                // A capture whose file stops taking writes (disk full, quota) stops alone, saying so; the run and
                // the other captures go on.
                w.onFailure(e -> System.err.println("usnet: capture stopped: " + IoErrors.describeWithErrno(f, e)
                        + "; the run and the other captures go on"));
                files.put(f, w);
                Device dev = topology.device(ns.name(), c.device());
                PcapTap pcap = new PcapTap(w, c.direction(), epochNanos, c.maxFrames());
                // A pipe's reader (tcpdump -r -, wireshark -k -i -) sees each frame as it is tapped, as with
                // tcpdump -U -w -; a file is flushed in batches.
                dev.usnet.core.device.PacketTap tap = !toStdout ? pcap : (d, p, transmit, t) -> {
                    pcap.tap(d, p, transmit, t);
                    try {
                        w.flush();
                    } catch (IOException gone) {
                        // The reader went away: the writer has stopped itself and said so (onFailure).
                    }
                };
                dev.addTap(tap);
                untap.add(() -> dev.removeTap(tap));
            }
        }
    }

    /** Writes out every capture's buffered frames now (SIGUSR1); returns how many were flushed. */
    public int flush() {
        int n = 0;
        for (var e : files.entrySet()) {
            try {
                e.getValue().flush();
                n++;
            } catch (IOException ex) {
                System.err.println("usnet: flushing capture " + IoErrors.describe(e.getKey(), ex));
            }
        }
        return n;
    }

    /** Takes the taps off their devices, so nothing more is written. */
    public void untap() {
        untap.forEach(Runnable::run);
        untap.clear();
    }

    /** Closes every file; returns the frames each holds, and adds what could not be closed to {@code errors}. */
    public Map<Path, Long> close(List<String> errors) {
        Map<Path, Long> frames = new LinkedHashMap<>();
        for (var e : files.entrySet()) {
            try {
                e.getValue().close();
                if (e.getValue().failure() != null) {
                    // Said when it stopped; its file holds the frames written before.
                    continue;
                }
                frames.put(e.getKey(), e.getValue().frames());
            } catch (IOException ex) {
                errors.add("closing capture " + IoErrors.describe(e.getKey(), ex));
            }
        }
        return frames;
    }
}
