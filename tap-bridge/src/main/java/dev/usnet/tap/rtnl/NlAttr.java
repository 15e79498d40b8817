package dev.usnet.tap.rtnl;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * struct rtattr / struct nlattr (the same four bytes): one type-length-value attribute after a message's fixed
 * part, its value padded to 4 bytes (RTA_ALIGN). The type's top two bits are NLA_F_NESTED and
 * NLA_F_NET_BYTEORDER, masked off by {@link #type}.
 */
public final class NlAttr {
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_SHORT.withName("rta_len"),
            JAVA_SHORT.withName("rta_type")).withName("rtattr");
    /** RTA_LENGTH(0): 4. */
    public static final int HDRLEN = (int) LAYOUT.byteSize();
    private static final int TYPE_MASK = 0x3fff;

    private static final VarHandle LEN = LAYOUT.varHandle(groupElement("rta_len"));
    private static final VarHandle TYPE = LAYOUT.varHandle(groupElement("rta_type"));

    private NlAttr() {}

    /** RTA_ALIGN. */
    public static int align(int len) {
        return (len + 3) & ~3;
    }

    /** rta_len: header plus value, unpadded. */
    public static int len(MemorySegment s, long off) {
        return Short.toUnsignedInt((short) LEN.get(s, off));
    }

    public static int type(MemorySegment s, long off) {
        return Short.toUnsignedInt((short) TYPE.get(s, off)) & TYPE_MASK;
    }

    /** Where the value of the attribute at {@code off} starts. */
    public static long value(long off) {
        return off + HDRLEN;
    }

    /** Writes a 4-byte integer attribute at {@code off}; returns the offset after it. */
    public static long putInt(MemorySegment s, long off, int type, int v) {
        LEN.set(s, off, (short) (HDRLEN + 4));
        TYPE.set(s, off, (short) type);
        s.set(JAVA_INT, off + HDRLEN, v);
        return off + HDRLEN + 4;
    }

    /** Writes a byte-string attribute (an address in network order); returns the offset after it, padded. */
    public static long putBytes(MemorySegment s, long off, int type, byte[] v) {
        LEN.set(s, off, (short) (HDRLEN + v.length));
        TYPE.set(s, off, (short) type);
        MemorySegment.copy(v, 0, s, JAVA_BYTE, off + HDRLEN, v.length);
        int padded = align(HDRLEN + v.length);
        s.asSlice(off + HDRLEN + v.length, padded - HDRLEN - v.length).fill((byte) 0);
        return off + padded;
    }

    /** Writes a NUL-terminated string attribute (IFA_LABEL, IFLA_IFNAME); returns the offset after it, padded. */
    public static long putString(MemorySegment s, long off, int type, String v) {
        byte[] b = v.getBytes(StandardCharsets.US_ASCII);
        byte[] z = java.util.Arrays.copyOf(b, b.length + 1);
        return putBytes(s, off, type, z);
    }

    /** The value of the attribute at {@code off} as an int (host order). */
    public static int getInt(MemorySegment s, long off) {
        return s.get(JAVA_INT, off + HDRLEN);
    }

    /** The value as bytes. */
    public static byte[] getBytes(MemorySegment s, long off) {
        return s.asSlice(off + HDRLEN, len(s, off) - HDRLEN).toArray(JAVA_BYTE);
    }

    /** The value as a NUL-terminated string. */
    public static String getString(MemorySegment s, long off) {
        int n = len(s, off) - HDRLEN;
        byte[] b = s.asSlice(off + HDRLEN, n).toArray(JAVA_BYTE);
        int end = 0;
        while (end < b.length && b[end] != 0) {
            end++;
        }
        return new String(b, 0, end, StandardCharsets.US_ASCII);
    }
}
