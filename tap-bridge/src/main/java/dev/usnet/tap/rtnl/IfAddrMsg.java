package dev.usnet.tap.rtnl;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/** struct ifaddrmsg (linux/if_addr.h), the fixed part of RTM_NEWADDR / RTM_GETADDR, with the IFA_* attributes. */
public final class IfAddrMsg {
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_BYTE.withName("ifa_family"),
            JAVA_BYTE.withName("ifa_prefixlen"),
            JAVA_BYTE.withName("ifa_flags"),
            JAVA_BYTE.withName("ifa_scope"),
            JAVA_INT.withName("ifa_index")).withName("ifaddrmsg");
    public static final int SIZE = (int) LAYOUT.byteSize();

    public static final int IFA_ADDRESS = 1;
    public static final int IFA_LOCAL = 2;
    public static final int IFA_LABEL = 3;
    public static final int IFA_BROADCAST = 4;
    public static final int IFA_CACHEINFO = 6;
    public static final int IFA_FLAGS = 8;
    /** The namespace, by its nsid in the asker's namespace, whose addresses a dump is about (Linux 4.20+). */
    public static final int IFA_TARGET_NETNSID = 10;

    public static final int IFA_F_SECONDARY = 0x01;
    public static final int IFA_F_PERMANENT = 0x80;

    public static final int RT_SCOPE_UNIVERSE = 0;
    public static final int RT_SCOPE_HOST = 254;

    private static final VarHandle FAMILY = LAYOUT.varHandle(groupElement("ifa_family"));
    private static final VarHandle PREFIXLEN = LAYOUT.varHandle(groupElement("ifa_prefixlen"));
    private static final VarHandle FLAGS = LAYOUT.varHandle(groupElement("ifa_flags"));
    private static final VarHandle SCOPE = LAYOUT.varHandle(groupElement("ifa_scope"));
    private static final VarHandle INDEX = LAYOUT.varHandle(groupElement("ifa_index"));

    private IfAddrMsg() {}

    public static int family(MemorySegment s, long off) {
        return Byte.toUnsignedInt((byte) FAMILY.get(s, off));
    }

    public static int prefixLen(MemorySegment s, long off) {
        return Byte.toUnsignedInt((byte) PREFIXLEN.get(s, off));
    }

    public static int flags(MemorySegment s, long off) {
        return Byte.toUnsignedInt((byte) FLAGS.get(s, off));
    }

    public static int scope(MemorySegment s, long off) {
        return Byte.toUnsignedInt((byte) SCOPE.get(s, off));
    }

    public static int index(MemorySegment s, long off) {
        return (int) INDEX.get(s, off);
    }

    public static void write(MemorySegment s, long off, int family, int prefixLen, int flags, int scope, int index) {
        FAMILY.set(s, off, (byte) family);
        PREFIXLEN.set(s, off, (byte) prefixLen);
        FLAGS.set(s, off, (byte) flags);
        SCOPE.set(s, off, (byte) scope);
        INDEX.set(s, off, index);
    }
}
