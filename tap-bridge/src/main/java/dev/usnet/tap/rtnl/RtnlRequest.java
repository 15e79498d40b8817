package dev.usnet.tap.rtnl;

import dev.usnet.tap.sys.Libc;
import java.lang.foreign.MemorySegment;

/**
 * The rtnetlink requests usnet sends, each written into a buffer at offset 0: header, fixed part, attributes.
 * Every method returns the message's length (nlmsg_len).
 */
public final class RtnlRequest {
    private RtnlRequest() {}

    /**
     * RTM_GETADDR dump of one address family ({@code ip -4 addr}); with {@code targetNsid} >= 0 it carries
     * IFA_TARGET_NETNSID and asks for the addresses of the namespace the asker calls by that nsid, without entering
     * it. The fixed part is all zeros but the family, as strict checking wants a dump request.
     */
    public static int getAddrDump(MemorySegment s, int seq, int family, int targetNsid) {
        long off = NlMsgHdr.SIZE;
        IfAddrMsg.write(s, off, family, 0, 0, 0, 0);
        off += NlMsgHdr.align(IfAddrMsg.SIZE);
        if (targetNsid >= 0) {
            off = NlAttr.putInt(s, off, IfAddrMsg.IFA_TARGET_NETNSID, targetNsid);
        }
        NlMsgHdr.write(s, 0, (int) off, Rtm.GETADDR, NlMsgHdr.NLM_F_REQUEST | NlMsgHdr.NLM_F_DUMP, seq);
        return (int) off;
    }

    /**
     * RTM_NEWADDR ({@code ip addr add LOCAL/PREFIX dev IFINDEX}), IPv4: IFA_LOCAL and IFA_ADDRESS both the address,
     * with an acknowledgement asked for.
     */
    public static int newAddr4(MemorySegment s, int seq, int ifindex, byte[] local, int prefixLen, int scope) {
        long off = NlMsgHdr.SIZE;
        IfAddrMsg.write(s, off, Libc.AF_INET, prefixLen, 0, scope, ifindex);
        off += NlMsgHdr.align(IfAddrMsg.SIZE);
        off = NlAttr.putBytes(s, off, IfAddrMsg.IFA_LOCAL, local);
        off = NlAttr.putBytes(s, off, IfAddrMsg.IFA_ADDRESS, local);
        NlMsgHdr.write(s, 0, (int) off, Rtm.NEWADDR,
                NlMsgHdr.NLM_F_REQUEST | NlMsgHdr.NLM_F_ACK | NlMsgHdr.NLM_F_CREATE | NlMsgHdr.NLM_F_EXCL, seq);
        return (int) off;
    }

    /** RTM_NEWLINK changing only the flags in {@code change} ({@code ip link set IFINDEX up}: IFF_UP, IFF_UP). */
    public static int setLinkFlags(MemorySegment s, int seq, int ifindex, int flags, int change) {
        long off = NlMsgHdr.SIZE;
        IfInfoMsg.write(s, off, 0, ifindex, flags, change);
        off += IfInfoMsg.SIZE;
        NlMsgHdr.write(s, 0, (int) off, Rtm.NEWLINK, NlMsgHdr.NLM_F_REQUEST | NlMsgHdr.NLM_F_ACK, seq);
        return (int) off;
    }

    /** RTM_NEWLINK with IFLA_NET_NS_FD ({@code ip link set DEV netns NSFD}): moves the link into that namespace. */
    public static int moveLink(MemorySegment s, int seq, int ifindex, int nsFd) {
        long off = NlMsgHdr.SIZE;
        IfInfoMsg.write(s, off, 0, ifindex, 0, 0);
        off += IfInfoMsg.SIZE;
        off = NlAttr.putInt(s, off, IfInfoMsg.IFLA_NET_NS_FD, nsFd);
        NlMsgHdr.write(s, 0, (int) off, Rtm.NEWLINK, NlMsgHdr.NLM_F_REQUEST | NlMsgHdr.NLM_F_ACK, seq);
        return (int) off;
    }

    /**
     * RTM_NEWNSID ({@code ip netns set NAME NSID}): gives the namespace {@code nsFd} refers to the id {@code nsid} in
     * the asker's namespace; {@link RtGenMsg#NSID_NOT_ASSIGNED} lets the kernel pick ({@code ip netns set NAME auto}).
     */
    public static int newNsid(MemorySegment s, int seq, int nsFd, int nsid) {
        long off = NlMsgHdr.SIZE;
        RtGenMsg.write(s, off, Libc.AF_UNSPEC);
        off += RtGenMsg.SIZE;
        off = NlAttr.putInt(s, off, RtGenMsg.NETNSA_FD, nsFd);
        off = NlAttr.putInt(s, off, RtGenMsg.NETNSA_NSID, nsid);
        NlMsgHdr.write(s, 0, (int) off, Rtm.NEWNSID, NlMsgHdr.NLM_F_REQUEST | NlMsgHdr.NLM_F_ACK, seq);
        return (int) off;
    }

    /** RTM_GETNSID: the id the asker's namespace has for the namespace {@code nsFd} refers to. */
    public static int getNsid(MemorySegment s, int seq, int nsFd) {
        long off = NlMsgHdr.SIZE;
        RtGenMsg.write(s, off, Libc.AF_UNSPEC);
        off += RtGenMsg.SIZE;
        off = NlAttr.putInt(s, off, RtGenMsg.NETNSA_FD, nsFd);
        NlMsgHdr.write(s, 0, (int) off, Rtm.GETNSID, NlMsgHdr.NLM_F_REQUEST, seq);
        return (int) off;
    }
}
