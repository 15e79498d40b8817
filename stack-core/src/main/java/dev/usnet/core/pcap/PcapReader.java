package dev.usnet.core.pcap;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
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

    private final String name;
    private final DataInputStream in;
    private final ByteOrder order;
    private final boolean nanos;
    private final int linkType;
    private long offset;

    public PcapReader(Path file) throws IOException {
        this(file.toString(), Files.newInputStream(file));
    }

    public PcapReader(String name, InputStream stream) throws IOException {
        this.name = name;
        this.in = new DataInputStream(new BufferedInputStream(stream));
        byte[] hdr = new byte[24];
        try {
            in.readFully(hdr);
        } catch (EOFException e) {
            throw new IOException(name + ": not a pcap file (shorter than the 24-byte header)");
        }
        offset = 24;
        ByteBuffer bb = ByteBuffer.wrap(hdr).order(ByteOrder.LITTLE_ENDIAN);
        int magic = bb.getInt(0);
        ByteOrder o = ByteOrder.LITTLE_ENDIAN;
        if (magic != MAGIC_USEC && magic != MAGIC_NSEC) {
            o = ByteOrder.BIG_ENDIAN;
            magic = ByteBuffer.wrap(hdr).order(o).getInt(0);
        }
        if (magic != MAGIC_USEC && magic != MAGIC_NSEC) {
            throw new IOException(name + ": not a pcap file (magic " + String.format("0x%08x", magic)
                    + "; pcapng is not supported, convert with 'editcap -F pcap')");
        }
        this.order = o;
        this.nanos = magic == MAGIC_NSEC;
        this.linkType = ByteBuffer.wrap(hdr).order(o).getInt(20);
        if (linkType != LINKTYPE_ETHERNET) {
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
            throw new IOException(name + ": truncated record header at offset " + offset);
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
        try {
            in.readFully(data);
        } catch (EOFException e) {
            throw new IOException(name + ": truncated record at offset " + offset + " (wanted " + incl + " bytes)");
        }
        offset += 16 + incl;
        long ts = sec * 1_000_000_000L + (nanos ? frac : frac * 1000L);
        return new PcapRecord(ts, data, orig);
    }

    public static List<PcapRecord> readAll(Path file) throws IOException {
        try (PcapReader r = new PcapReader(file)) {
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
