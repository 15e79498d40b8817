package dev.usnet.tap.rtnl;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/** struct nlmsghdr (linux/netlink.h), the header of every netlink message, with its message types and flags. */
public final class NlMsgHdr {
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_INT.withName("nlmsg_len"),
            JAVA_SHORT.withName("nlmsg_type"),
            JAVA_SHORT.withName("nlmsg_flags"),
            JAVA_INT.withName("nlmsg_seq"),
            JAVA_INT.withName("nlmsg_pid")).withName("nlmsghdr");
    /** NLMSG_HDRLEN: 16. */
    public static final int SIZE = (int) LAYOUT.byteSize();

    public static final int NLMSG_NOOP = 1;
    public static final int NLMSG_ERROR = 2;
    public static final int NLMSG_DONE = 3;

    public static final int NLM_F_REQUEST = 0x01;
    public static final int NLM_F_MULTI = 0x02;
    public static final int NLM_F_ACK = 0x04;
    public static final int NLM_F_ROOT = 0x100;
    public static final int NLM_F_MATCH = 0x200;
    public static final int NLM_F_DUMP = NLM_F_ROOT | NLM_F_MATCH;
    public static final int NLM_F_REPLACE = 0x100;
    public static final int NLM_F_EXCL = 0x200;
    public static final int NLM_F_CREATE = 0x400;

    private static final VarHandle LEN = LAYOUT.varHandle(groupElement("nlmsg_len"));
    private static final VarHandle TYPE = LAYOUT.varHandle(groupElement("nlmsg_type"));
    private static final VarHandle FLAGS = LAYOUT.varHandle(groupElement("nlmsg_flags"));
    private static final VarHandle SEQ = LAYOUT.varHandle(groupElement("nlmsg_seq"));
    private static final VarHandle PID = LAYOUT.varHandle(groupElement("nlmsg_pid"));

    private NlMsgHdr() {}

    /** NLMSG_ALIGN: messages start on 4-byte boundaries. */
    public static int align(int len) {
        return (len + 3) & ~3;
    }

    public static int len(MemorySegment s, long off) {
        return (int) LEN.get(s, off);
    }

    public static int type(MemorySegment s, long off) {
        return Short.toUnsignedInt((short) TYPE.get(s, off));
    }

    public static int flags(MemorySegment s, long off) {
        return Short.toUnsignedInt((short) FLAGS.get(s, off));
    }

    public static int seq(MemorySegment s, long off) {
        return (int) SEQ.get(s, off);
    }

    public static int pid(MemorySegment s, long off) {
        return (int) PID.get(s, off);
    }

    /** Writes a header for a message of {@code len} bytes (header included). */
    public static void write(MemorySegment s, long off, int len, int type, int flags, int seq) {
        LEN.set(s, off, len);
        TYPE.set(s, off, (short) type);
        FLAGS.set(s, off, (short) flags);
        SEQ.set(s, off, seq);
        PID.set(s, off, 0);
    }

    static void setLen(MemorySegment s, long off, int len) {
        LEN.set(s, off, len);
    }
}
