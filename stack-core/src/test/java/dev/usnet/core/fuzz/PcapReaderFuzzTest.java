package dev.usnet.core.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import dev.usnet.core.pcap.PcapWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The pcap reader (what {@code usnet replay} and the fixtures read) on arbitrary bytes: it returns records or
 * throws an IOException that names the file; nothing else escapes. What it reads, written again by
 * {@link PcapWriter}, reads back the same (timestamps to the microsecond the writer keeps).
 */
class PcapReaderFuzzTest {
    private static final String NAME = "fuzz.pcap";

    @FuzzTest(maxDuration = "5m")
    void pcap(byte[] data) throws IOException {
        List<PcapRecord> records = new ArrayList<>();
        try (PcapReader r = new PcapReader(NAME, new ByteArrayInputStream(data))) {
            PcapRecord rec;
            while ((rec = r.next()) != null) {
                if (rec.data().length > data.length) {
                    throw new AssertionError("a record of " + rec.data().length + " bytes from a " + data.length
                            + "-byte file");
                }
                records.add(rec);
            }
        } catch (IOException e) {
            if (e.getMessage() == null || !e.getMessage().startsWith(NAME + ": ")) {
                throw new AssertionError("a pcap error must name the file: " + e.getMessage(), e);
            }
            return;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<PcapRecord> written = new ArrayList<>();
        try (PcapWriter w = new PcapWriter(out)) {
            for (PcapRecord rec : records) {
                // The classic format keeps 32-bit seconds; later times cannot be written back.
                if (rec.timestampNanos() >= 0 && rec.timestampNanos() / 1_000_000_000L <= 0xffff_ffffL) {
                    w.write(rec.timestampNanos(), rec.data(), 0, rec.data().length, rec.originalLength());
                    written.add(rec);
                }
            }
        }
        List<PcapRecord> back = new ArrayList<>();
        try (PcapReader r = new PcapReader(NAME, new ByteArrayInputStream(out.toByteArray()))) {
            PcapRecord rec;
            while ((rec = r.next()) != null) {
                back.add(rec);
            }
        }
        if (back.size() != written.size()) {
            throw new AssertionError("wrote " + written.size() + " records, read back " + back.size());
        }
        for (int i = 0; i < back.size(); i++) {
            PcapRecord a = written.get(i);
            PcapRecord b = back.get(i);
            if (!Arrays.equals(a.data(), b.data()) || a.originalLength() != b.originalLength()
                    || a.timestampNanos() / 1000 != b.timestampNanos() / 1000) {
                throw new AssertionError("record " + i + " changed in a write and read: " + a + " -> " + b);
            }
        }
    }
}
