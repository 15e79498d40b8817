package dev.usnet.tap.rtnl;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * struct nlmsgerr, the payload of NLMSG_ERROR: a negative errno (0: the acknowledgement asked for with NLM_F_ACK)
 * and the header of the request it answers. NLMSG_DONE of a dump carries the error int alone.
 */
public final class NlMsgErr {
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_INT.withName("error"),
            NlMsgHdr.LAYOUT.withName("msg")).withName("nlmsgerr");

    private static final VarHandle ERROR = LAYOUT.varHandle(groupElement("error"));

    private NlMsgErr() {}

    /** The error field: 0 or a negative errno. */
    public static int error(MemorySegment s, long off) {
        return (int) ERROR.get(s, off);
    }

    public static void write(MemorySegment s, long off, int error) {
        ERROR.set(s, off, error);
    }
}
