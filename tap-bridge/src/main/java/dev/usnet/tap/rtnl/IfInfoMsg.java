package dev.usnet.tap.rtnl;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/** struct ifinfomsg (linux/rtnetlink.h), the fixed part of RTM_NEWLINK / RTM_GETLINK, with the IFLA_* attributes used. */
public final class IfInfoMsg {
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_BYTE.withName("ifi_family"),
            JAVA_BYTE.withName("__ifi_pad"),
            JAVA_SHORT.withName("ifi_type"),
            JAVA_INT.withName("ifi_index"),
            JAVA_INT.withName("ifi_flags"),
            JAVA_INT.withName("ifi_change")).withName("ifinfomsg");
    public static final int SIZE = (int) LAYOUT.byteSize();

    public static final int IFLA_IFNAME = 3;
    public static final int IFLA_NET_NS_FD = 28;

    /** IFF_UP of ifi_flags / ifi_change. */
    public static final int IFF_UP = 0x1;

    private static final VarHandle FAMILY = LAYOUT.varHandle(groupElement("ifi_family"));
    private static final VarHandle INDEX = LAYOUT.varHandle(groupElement("ifi_index"));
    private static final VarHandle FLAGS = LAYOUT.varHandle(groupElement("ifi_flags"));
    private static final VarHandle CHANGE = LAYOUT.varHandle(groupElement("ifi_change"));

    private IfInfoMsg() {}

    public static int index(MemorySegment s, long off) {
        return (int) INDEX.get(s, off);
    }

    public static int flags(MemorySegment s, long off) {
        return (int) FLAGS.get(s, off);
    }

    /** Writes the struct, zeroing its padding and type. */
    public static void write(MemorySegment s, long off, int family, int index, int flags, int change) {
        s.asSlice(off, SIZE).fill((byte) 0);
        FAMILY.set(s, off, (byte) family);
        INDEX.set(s, off, index);
        FLAGS.set(s, off, flags);
        CHANGE.set(s, off, change);
    }
}
