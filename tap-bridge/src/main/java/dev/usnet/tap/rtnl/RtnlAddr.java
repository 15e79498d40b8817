package dev.usnet.tap.rtnl;

import dev.usnet.tap.sys.Libc;
import java.lang.foreign.MemorySegment;

/**
 * One address as an RTM_NEWADDR message describes it (what {@code ip addr} prints a line for): the ifaddrmsg
 * fields, IFA_LOCAL (the interface's own address), IFA_ADDRESS (the peer's on a point-to-point link, else the same),
 * IFA_BROADCAST, IFA_LABEL, the 32-bit IFA_FLAGS, and IFA_TARGET_NETNSID when the dump asked for another namespace
 * (-1 when absent). Addresses are in text form; null when the message has no such attribute.
 */
public record RtnlAddr(int family, int prefixLen, int flags, int scope, int ifindex, String local, String address,
                       String broadcast, String label, int targetNsid) {

    /** {@code local/prefixlen} (or {@code address/prefixlen} without IFA_LOCAL), as {@code ip addr} shows it. */
    public String cidr() {
        return (local != null ? local : address) + "/" + prefixLen;
    }

    /** Decodes the RTM_NEWADDR message at {@code off} in {@code s}; {@code len} is its nlmsg_len. */
    public static RtnlAddr parse(MemorySegment s, long off, int len) {
        long body = off + NlMsgHdr.SIZE;
        if (len < NlMsgHdr.SIZE + IfAddrMsg.SIZE) {
            throw new IllegalArgumentException("RTM_NEWADDR of " + len + " bytes is shorter than nlmsghdr + ifaddrmsg");
        }
        int family = IfAddrMsg.family(s, body);
        int flags = IfAddrMsg.flags(s, body);
        String local = null;
        String address = null;
        String broadcast = null;
        String label = null;
        int nsid = -1;
        long end = off + len;
        long a = body + NlMsgHdr.align(IfAddrMsg.SIZE);
        while (a + NlAttr.HDRLEN <= end) {
            int alen = NlAttr.len(s, a);
            if (alen < NlAttr.HDRLEN || a + alen > end) {
                throw new IllegalArgumentException("RTM_NEWADDR attribute of length " + alen + " at offset " + (a - off)
                        + " runs past the message (" + len + " bytes)");
            }
            switch (NlAttr.type(s, a)) {
                case IfAddrMsg.IFA_LOCAL -> local = addressText(family, s, a, alen);
                case IfAddrMsg.IFA_ADDRESS -> address = addressText(family, s, a, alen);
                case IfAddrMsg.IFA_BROADCAST -> broadcast = addressText(family, s, a, alen);
                case IfAddrMsg.IFA_LABEL -> label = NlAttr.getString(s, a);
                case IfAddrMsg.IFA_FLAGS -> flags = alen >= NlAttr.HDRLEN + 4 ? NlAttr.getInt(s, a) : flags;
                case IfAddrMsg.IFA_TARGET_NETNSID -> nsid = NlAttr.getInt(s, a);
                default -> { }
            }
            a += NlAttr.align(alen);
        }
        return new RtnlAddr(family, IfAddrMsg.prefixLen(s, body), flags, IfAddrMsg.scope(s, body),
                IfAddrMsg.index(s, body), local, address, broadcast, label, nsid);
    }

    private static String addressText(int family, MemorySegment s, long a, int alen) {
        int n = alen - NlAttr.HDRLEN;
        long v = NlAttr.value(a);
        if (family == Libc.AF_INET && n == 4) {
            return Byte.toUnsignedInt(s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, v)) + "."
                    + Byte.toUnsignedInt(s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, v + 1)) + "."
                    + Byte.toUnsignedInt(s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, v + 2)) + "."
                    + Byte.toUnsignedInt(s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, v + 3));
        }
        try {
            return java.net.InetAddress.getByAddress(NlAttr.getBytes(s, a)).getHostAddress();
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("address attribute of " + n + " bytes", e);
        }
    }
}
