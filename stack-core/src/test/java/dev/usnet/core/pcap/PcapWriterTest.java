package dev.usnet.core.pcap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A capture is readable while it is written and after its writer is killed, not only once it is closed. */
class PcapWriterTest {

    static byte[] frame(int i, int len) {
        byte[] f = new byte[len];
        Arrays.fill(f, (byte) i);
        return f;
    }

    /** Waits up to {@code ms} for the file to hold {@code n} complete frames; returns how long that took. */
    private static long millisUntilFrames(Path file, int n, long ms) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        while (PcapReader.readComplete(file).size() < n) {
            if (System.nanoTime() - t0 > ms * 1_000_000L) {
                return -1;
            }
            Thread.sleep(10);
        }
        return (System.nanoTime() - t0) / 1_000_000L;
    }

    @Test
    void anIdleWritersFramesReachTheFileWithinAFlushIntervalWithoutFlushOrClose(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("slow.pcap");
        try (PcapWriter w = new PcapWriter(file)) {
            assertEquals(24, Files.size(file), "the header is on disk at once");
            for (int i = 1; i <= 3; i++) {
                // A slow ping: one frame, then nothing for longer than the flush interval.
                w.write(i * 1_000_000_000L, frame(i, 98), 0, 98, 98);
                long waited = millisUntilFrames(file, i, 1000);
                assertTrue(waited >= 0 && waited < 1000, "frame " + i + " on disk within a second: " + waited + " ms");
            }
            List<PcapRecord> recs = PcapReader.readComplete(file);
            assertEquals(3, recs.size());
            assertArrayEquals(frame(3, 98), recs.get(2).data());
            assertEquals(3_000_000_000L, recs.get(2).timestampNanos());
        }
    }

    @Test
    void aWriterKilledWithSigkillLeavesEveryFrameWrittenBeforeItsLastFlush(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("killed.pcap");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                KilledWriter.class.getName(), file.toString(), "10").redirectErrorStream(true).start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()))) {
            assertEquals("wrote 10", r.readLine());
            Thread.sleep(500);
            p.destroyForcibly(); // SIGKILL: no close, no shutdown hook, no flush from the JVM
            assertTrue(p.waitFor(5, TimeUnit.SECONDS));
            assertEquals(137, p.exitValue(), "killed by signal 9");
        } finally {
            p.destroyForcibly();
        }
        List<PcapRecord> recs = PcapReader.readAll(file);
        assertEquals(10, recs.size());
        for (int i = 0; i < 10; i++) {
            assertArrayEquals(frame(i, 1000), recs.get(i).data());
        }
    }

    @Test
    void aTornLastRecordIsSkippedWhenAskedAndNamedOtherwise(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("torn.pcap");
        try (PcapWriter w = new PcapWriter(file)) {
            w.write(1_000, frame(1, 60), 0, 60, 60);
            w.write(2_000, frame(2, 60), 0, 60, 60);
        }
        byte[] whole = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(whole, whole.length - 20));
        List<PcapRecord> complete = PcapReader.readComplete(file);
        assertEquals(1, complete.size());
        assertArrayEquals(frame(1, 60), complete.get(0).data());
        IOException e = assertThrows(IOException.class, () -> PcapReader.readAll(file));
        assertEquals(file + ": truncated: record at offset 100 has 40 of its 60 bytes"
                + " (the file ends there; cut short or still being written)", e.getMessage());

        Files.write(file, Arrays.copyOf(whole, 24 + 76 + 5));
        assertEquals(1, PcapReader.readComplete(file).size());
        e = assertThrows(IOException.class, () -> PcapReader.readAll(file));
        assertTrue(e.getMessage().contains("record header at offset 100 has 5 of 16 bytes"), e.getMessage());
    }

    /** The process {@link #aWriterKilledWithSigkillLeavesEveryFrameWrittenBeforeItsLastFlush} kills. */
    public static final class KilledWriter {
        public static void main(String[] args) throws Exception {
            PcapWriter w = new PcapWriter(Path.of(args[0]));
            int n = Integer.parseInt(args[1]);
            for (int i = 0; i < n; i++) {
                w.write(i * 1_000_000L, frame(i, 1000), 0, 1000, 1000);
            }
            System.out.println("wrote " + n);
            System.out.flush();
            Thread.sleep(60_000);
        }
    }

    @Test
    void aWriteThatFailsStopsTheCaptureOnceWithoutThrowingIntoThePacketPath() throws Exception {
        java.util.concurrent.atomic.AtomicInteger room = new java.util.concurrent.atomic.AtomicInteger(24 + 3 * (16 + 100));
        java.io.OutputStream disk = new java.io.OutputStream() {
            @Override
            public void write(int b) throws java.io.IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws java.io.IOException {
                if (room.addAndGet(-len) < 0) {
                    throw new java.io.IOException("No space left on device");
                }
            }
        };
        java.util.List<java.io.IOException> told = new java.util.ArrayList<>();
        PcapWriter w = new PcapWriter(disk);
        w.onFailure(told::add);
        for (int i = 0; i < 2000; i++) {
            w.write(i * 1000L, new byte[100], 0, 100, 100);
        }
        w.flush();
        org.junit.jupiter.api.Assertions.assertEquals(1, told.size(), "the failure is reported once");
        org.junit.jupiter.api.Assertions.assertSame(told.get(0), w.failure());
        org.junit.jupiter.api.Assertions.assertTrue(w.framesLost() > 1000, w.framesLost() + " frames not written");
        w.close();
    }

}
