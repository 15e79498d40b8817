package dev.usnet.core.pcap;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads classic libpcap files (microsecond or nanosecond magic, either byte order) with Ethernet link type.
 * Errors name the file and the offset.
 */
public final class PcapReader implements AutoCloseable {
    static final int MAGIC_USEC = 0xa1b2c3d4;
    static final int MAGIC_NSEC = 0xa1b23c4d;
    static final int LINKTYPE_ETHERNET = 1;
    /** The block type of a pcapng Section Header Block: the same in either byte order. */
    private static final int PCAPNG_SECTION_HEADER = 0x0a0d0d0a;

    private final String name;
    private final DataInputStream in;
    private final ByteOrder order;
    private final boolean nanos;
    private final int linkType;
    private final boolean tornTailIsEnd;
    private long offset;

    public PcapReader(Path file) throws IOException {
        this(file.toString(), Files.newInputStream(file));
    }

    public PcapReader(String name, InputStream stream) throws IOException {
        this(name, stream, false);
    }

    /**
     * @param tornTailIsEnd treat a last record cut short as the end of the file instead of an error: what a
     *                      capture still being written, or killed while writing, ends with
     */
    private PcapReader(String name, InputStream stream, boolean tornTailIsEnd) throws IOException {
        this.name = name;
        this.tornTailIsEnd = tornTailIsEnd;
        this.in = new DataInputStream(new BufferedInputStream(stream));
        byte[] hdr = new byte[24];
        int got = in.readNBytes(hdr, 0, 24);
        if (got < 24) {
            in.close();
            throw new IOException(name + ": not a pcap file (" + got + " bytes, shorter than the 24-byte pcap header)");
        }
        offset = 24;
        ByteBuffer bb = ByteBuffer.wrap(hdr).order(ByteOrder.LITTLE_ENDIAN);
        int magic = bb.getInt(0);
        ByteOrder o = ByteOrder.LITTLE_ENDIAN;
        if (magic != MAGIC_USEC && magic != MAGIC_NSEC) {
            o = ByteOrder.BIG_ENDIAN;
            magic = ByteBuffer.wrap(hdr).order(o).getInt(0);
        }
        if (magic == PCAPNG_SECTION_HEADER) {
            in.close();
            throw new IOException(name + ": a pcapng file; only classic pcap is read (convert with 'editcap -F pcap')");
        }
        if (magic != MAGIC_USEC && magic != MAGIC_NSEC) {
            in.close();
            throw new IOException(name + ": bad magic " + String.format("0x%08x", magic)
                    + " (not a pcap or pcapng file)");
        }
        this.order = o;
        this.nanos = magic == MAGIC_NSEC;
        this.linkType = ByteBuffer.wrap(hdr).order(o).getInt(20);
        if (linkType != LINKTYPE_ETHERNET) {
            in.close();
            throw new IOException(name + ": link type " + linkType + " is not Ethernet (1)");
        }
    }

    /** The next frame, or null at the end of the file. */
    public PcapRecord next() throws IOException {
        byte[] rh = new byte[16];
        int n = in.readNBytes(rh, 0, 16);
        if (n == 0) {
            return null;
        }
        if (n < 16) {
            return tornTail("record header at offset " + offset + " has " + n + " of 16 bytes");
        }
        ByteBuffer bb = ByteBuffer.wrap(rh).order(order);
        long sec = bb.getInt(0) & 0xffff_ffffL;
        long frac = bb.getInt(4) & 0xffff_ffffL;
        int incl = bb.getInt(8);
        int orig = bb.getInt(12);
        if (incl < 0 || incl > 1 << 20) {
            throw new IOException(name + ": record at offset " + offset + " claims " + incl + " bytes");
        }
        byte[] data = new byte[incl];
        int d = in.readNBytes(data, 0, incl);
        if (d < incl) {
            return tornTail("record at offset " + offset + " has " + d + " of its " + incl + " bytes");
        }
        offset += 16 + incl;
        long ts = sec * 1_000_000_000L + (nanos ? frac : frac * 1000L);
        return new PcapRecord(ts, data, orig);
    }

    private PcapRecord tornTail(String what) throws IOException {
        if (tornTailIsEnd) {
            return null;
        }
        throw new IOException(name + ": truncated: " + what + " (the file ends there; cut short or still being written)");
    }

    /** Every frame of a file; a file cut short in a record is an error. */
    public static List<PcapRecord> readAll(Path file) throws IOException {
        return readAll(file, false);
    }

    /**
     * The complete frames of a file whose last record may be torn: a capture still being written, or one
     * whose writer was killed. Everything before the torn record is returned, the torn bytes ignored.
     */
    public static List<PcapRecord> readComplete(Path file) throws IOException {
        return readAll(file, true);
    }

    private static List<PcapRecord> readAll(Path file, boolean tornTailIsEnd) throws IOException {
        try (PcapReader r = new PcapReader(file.toString(), Files.newInputStream(file), tornTailIsEnd)) {
            List<PcapRecord> l = new ArrayList<>();
            PcapRecord rec;
            while ((rec = r.next()) != null) {
                l.add(rec);
            }
            return l;
        }
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
