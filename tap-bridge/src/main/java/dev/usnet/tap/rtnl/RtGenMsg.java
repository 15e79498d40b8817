package dev.usnet.tap.rtnl;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * struct rtgenmsg, the fixed part of RTM_NEWNSID / RTM_GETNSID (padded to 4 bytes before the attributes), with the
 * NETNSA_* attributes (linux/net_namespace.h) that name a peer namespace and its nsid.
 */
public final class RtGenMsg {
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_BYTE.withName("rtgen_family"),
            MemoryLayout.paddingLayout(3)).withName("rtgenmsg");
    /** NLMSG_ALIGN(sizeof(struct rtgenmsg)): 4. */
    public static final int SIZE = (int) LAYOUT.byteSize();

    public static final int NETNSA_NSID = 1;
    public static final int NETNSA_PID = 2;
    public static final int NETNSA_FD = 3;
    /** NETNSA_NSID_NOT_ASSIGNED: asking RTM_NEWNSID for it lets the kernel pick the lowest free id. */
    public static final int NSID_NOT_ASSIGNED = -1;

    private static final VarHandle FAMILY = LAYOUT.varHandle(groupElement("rtgen_family"));

    private RtGenMsg() {}

    public static void write(MemorySegment s, long off, int family) {
        s.asSlice(off, SIZE).fill((byte) 0);
        FAMILY.set(s, off, (byte) family);
    }
}
