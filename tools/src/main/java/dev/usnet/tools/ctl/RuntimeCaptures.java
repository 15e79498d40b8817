package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.pcap.PcapTap;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.tools.cli.IoErrors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The captures {@code capture start} began while the daemon runs (those of the topology file are the daemon's own). */
final class RuntimeCaptures {
    record Running(Path file, String where, Device dev, PcapTap tap, PcapWriter writer, PcapTap.Direction direction) {}

    private final Path outDir;
    private final Map<Path, Running> running = new LinkedHashMap<>();
    /** Captures streamed to clients ({@code capture start NS/DEV -}); a stream that ended is dropped when next seen. */
    private final List<CaptureStream> streams = new ArrayList<>();

    RuntimeCaptures(Path outDir) {
        this.outDir = outDir;
    }

    Path resolve(String file) {
        Path p = Path.of(file);
        return (p.isAbsolute() ? p : outDir.resolve(p)).normalize();
    }

    synchronized Running start(Path file, String where, Device dev, PcapTap.Direction dir, long count, long epochNanos) {
        if (running.containsKey(file)) {
            throw new CtlException("a capture into " + file + " is already running (" + running.get(file).where() + ")");
        }
        PcapWriter w;
        try {
            if (file.getParent() != null) {
                Files.createDirectories(file.getParent());
            }
            w = new PcapWriter(file);
        } catch (IOException e) {
            throw new CtlException("cannot write capture " + IoErrors.describe(file, e));
        }
        PcapTap tap = new PcapTap(w, dir, epochNanos, count);
        Running r = new Running(file, where, dev, tap, w, dir);
        running.put(file, r);
        dev.addTap(tap);
        return r;
    }

    /** Stops the capture into {@code file} (every capture when null); returns what each wrote. */
    synchronized Map<Path, Long> stop(Path file) {
        if (file != null && !running.containsKey(file)) {
            throw new CtlException("no capture into " + file + " is running (running: " + (running.isEmpty() ? "none"
                    : String.join(", ", running.keySet().stream().map(Path::toString).toList())) + ")");
        }
        Map<Path, Long> frames = new LinkedHashMap<>();
        for (Running r : new ArrayList<>(running.values())) {
            if (file == null || r.file().equals(file)) {
                frames.put(r.file(), close(r));
            }
        }
        return frames;
    }

    private long close(Running r) {
        r.dev().removeTap(r.tap());
        running.remove(r.file());
        try {
            r.writer().close();
        } catch (IOException e) {
            throw new CtlException("closing capture " + IoErrors.describe(r.file(), e));
        }
        return r.writer().frames();
    }

    synchronized List<Running> list() {
        return List.copyOf(running.values());
    }

    synchronized void startStream(CaptureStream s) {
        streams.removeIf(CaptureStream::ended);
        streams.add(s);
    }

    /** The streams still running. */
    synchronized List<CaptureStream> streams() {
        streams.removeIf(CaptureStream::ended);
        return List.copyOf(streams);
    }

    /** A device that is being deleted: its captures end with it. */
    synchronized void forget(Device d) {
        for (CaptureStream s : List.copyOf(streams)) {
            if (s.device() == d) {
                s.end();
            }
        }
        for (Running r : new ArrayList<>(running.values())) {
            if (r.dev() == d) {
                try {
                    close(r);
                } catch (CtlException e) {
                    System.err.println("usnet: " + e.getMessage());
                }
            }
        }
    }

    synchronized void closeAll() {
        for (CaptureStream s : List.copyOf(streams)) {
            s.end();
        }
        streams.clear();
        for (Running r : new ArrayList<>(running.values())) {
            try {
                close(r);
            } catch (CtlException e) {
                System.err.println("usnet: " + e.getMessage());
            }
        }
    }
}
