package dev.usnet.core.fuzz;

/**
 * A fuzz input read front to back as unsigned fields. Past the end every field reads as zero, so any prefix of
 * an input is an input, and the all-zero choices are the plain, valid ones (a fuzzer's truncations stay useful).
 */
public final class FuzzBytes {
    private final byte[] data;
    private int pos;

    public FuzzBytes(byte[] data) {
        this.data = data;
    }

    public boolean hasMore() {
        return pos < data.length;
    }

    public int remaining() {
        return Math.max(0, data.length - pos);
    }

    public int u8() {
        return pos < data.length ? data[pos++] & 0xff : 0;
    }

    public int u16() {
        return (u8() << 8) | u8();
    }

    public int u32() {
        return (u16() << 16) | u16();
    }

    public long u48() {
        return ((long) u16() << 32) | (u32() & 0xffff_ffffL);
    }

    /** {@code n} bytes; those past the end of the input are zero. */
    public byte[] bytes(int n) {
        byte[] b = new byte[n];
        int take = Math.min(n, remaining());
        System.arraycopy(data, pos, b, 0, take);
        pos += take;
        return b;
    }

    /** The rest of the input. */
    public byte[] rest() {
        return bytes(remaining());
    }

    /** A choice among {@code n} alternatives. */
    public int choose(int n) {
        return u8() % n;
    }
}
