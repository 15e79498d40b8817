package dev.usnet.tools.ctl;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code events.jsonl}: the event stream written to a file by a thread of its own, so namespace threads only hand
 * a line over (a full queue loses the line, counted in the stream as for any subscriber).
 */
final class EventsLog implements AutoCloseable {
    private static final String END = "";
    private final Path file;
    private final BlockingQueue<String> queue = new ArrayBlockingQueue<>(65_536);
    private final BufferedWriter out;
    private final Thread writer;
    private volatile IOException failure;

    EventsLog(Path file) throws IOException {
        this.file = file;
        if (file.toAbsolutePath().getParent() != null) {
            Files.createDirectories(file.toAbsolutePath().getParent());
        }
        this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        this.writer = new Thread(this::drain, "usnet-events-log");
        writer.setDaemon(true);
        writer.start();
    }

    Path file() {
        return file;
    }

    /** Takes one line unless the queue is full. Any thread. */
    boolean offer(String line) {
        return failure == null && queue.offer(line);
    }

    private void drain() {
        try {
            while (true) {
                String l = queue.take();
                if (l == END) {
                    break;
                }
                out.write(l);
                out.write('\n');
                if (queue.isEmpty()) {
                    out.flush();
                }
            }
            out.flush();
        } catch (IOException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Writes what is queued, then closes the file; returns the error that stopped writing, if any. */
    @Override
    public void close() throws IOException {
        try {
            if (!queue.offer(END, 5, TimeUnit.SECONDS)) {
                writer.interrupt();
            }
            writer.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            out.close();
        }
        if (failure != null) {
            throw failure;
        }
    }
}
