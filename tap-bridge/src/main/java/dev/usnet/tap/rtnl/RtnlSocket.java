package dev.usnet.tap.rtnl;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SysException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A NETLINK_ROUTE socket, bound to the network namespace of the thread that opened it (for as long as it lives,
 * whatever that thread does later), and the requests usnet makes over it. Strict checking of dump requests
 * (NETLINK_GET_STRICT_CHK, what {@code ip} asks for too) lets the kernel read IFA_TARGET_NETNSID; extended acks make
 * the kernel say why it refused. One thread at a time.
 */
public final class RtnlSocket implements AutoCloseable {
    public static final int NETLINK_ROUTE = 0;
    public static final int SOL_NETLINK = 270;
    public static final int NETLINK_CAP_ACK = 10;
    public static final int NETLINK_EXT_ACK = 11;
    public static final int NETLINK_GET_STRICT_CHK = 12;
    /** In an NLMSG_ERROR's flags: the request's payload was left out (NETLINK_CAP_ACK) / TLVs follow. */
    static final int NLM_F_CAPPED = 0x100;
    static final int NLM_F_ACK_TLVS = 0x200;
    static final int NLMSGERR_ATTR_MSG = 1;

    /** Send and receive buffers, reusable across sockets (a socket per query need not allocate 64 KiB each time). */
    public record Buffers(MemorySegment tx, MemorySegment rx) {
        public static Buffers allocate(Arena arena) {
            // 32 KiB is what the kernel fills a dump skb up to; twice that leaves room on large-page machines.
            return new Buffers(arena.allocate(1024, 8), arena.allocate(64 * 1024, 8));
        }
    }

    private final int fd;
    private final Buffers buf;
    private final Arena own;
    private int seq;
    private boolean closed;

    private RtnlSocket(int fd, Buffers buf, Arena own) {
        this.fd = fd;
        this.buf = buf;
        this.own = own;
    }

    /** Opens a socket in the calling thread's network namespace with buffers of its own. */
    public static RtnlSocket open() throws SysException {
        Arena a = Arena.ofConfined();
        try {
            return open(Buffers.allocate(a), a);
        } catch (SysException | RuntimeException e) {
            a.close();
            throw e;
        }
    }

    /** Opens a socket in the calling thread's network namespace using {@code buf} (the caller keeps them alive). */
    public static RtnlSocket open(Buffers buf) throws SysException {
        return open(buf, null);
    }

    private static RtnlSocket open(Buffers buf, Arena own) throws SysException {
        int fd = Libc.socket(Libc.AF_NETLINK, Libc.SOCK_RAW | Libc.SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0) {
            throw SysException.of("socket NETLINK_ROUTE", "rtnetlink", Libc.errno());
        }
        // Kernels before 4.20 lack these options; their dumps then simply ignore what they cannot check.
        Libc.setsockopt(fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, 1);
        Libc.setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, 1);
        Libc.setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, 1);
        return new RtnlSocket(fd, buf, own);
    }

    public int fd() {
        return fd;
    }

    /**
     * RTM_GETADDR dump of {@code family} ({@link Libc#AF_INET}); {@code targetNsid} >= 0 asks for the namespace this
     * socket's namespace calls by that nsid (IFA_TARGET_NETNSID), -1 for the socket's own.
     */
    public List<RtnlAddr> dumpAddrs(int family, int targetNsid) throws SysException {
        int s = ++seq;
        int len = RtnlRequest.getAddrDump(buf.tx(), s, family, targetNsid);
        send(len, "RTM_GETADDR", targetNsid >= 0 ? "nsid " + targetNsid : "this namespace");
        List<RtnlAddr> out = new ArrayList<>();
        receive(s, Rtm.NEWADDR, "RTM_GETADDR", targetNsid >= 0 ? "nsid " + targetNsid : "this namespace", out);
        return out;
    }

    /** {@code ip link set IFINDEX up}. */
    public void setLinkUp(int ifindex) throws SysException {
        int s = ++seq;
        send(RtnlRequest.setLinkFlags(buf.tx(), s, ifindex, IfInfoMsg.IFF_UP, IfInfoMsg.IFF_UP), "RTM_NEWLINK",
                "ifindex " + ifindex);
        receive(s, -1, "RTM_NEWLINK", "ifindex " + ifindex, null);
    }

    /** {@code ip addr add LOCAL/PREFIX dev IFINDEX} for an IPv4 address (4 bytes, network order). */
    public void addAddr4(int ifindex, byte[] local, int prefixLen, int scope) throws SysException {
        int s = ++seq;
        String what = (local[0] & 255) + "." + (local[1] & 255) + "." + (local[2] & 255) + "." + (local[3] & 255) + "/"
                + prefixLen;
        send(RtnlRequest.newAddr4(buf.tx(), s, ifindex, local, prefixLen, scope), "RTM_NEWADDR", what);
        receive(s, -1, "RTM_NEWADDR", what, null);
    }

    /** {@code ip link set IFINDEX netns NSFD}; {@code netns} names the target in messages. */
    public void moveLink(int ifindex, int nsFd, String netns) throws SysException {
        int s = ++seq;
        send(RtnlRequest.moveLink(buf.tx(), s, ifindex, nsFd), "move", netns);
        receive(s, -1, "move", netns, null);
    }

    /** Gives the namespace {@code nsFd} refers to an nsid here ({@link RtGenMsg#NSID_NOT_ASSIGNED}: the kernel picks). */
    public void newNsid(int nsFd, int nsid, String netns) throws SysException {
        int s = ++seq;
        send(RtnlRequest.newNsid(buf.tx(), s, nsFd, nsid), "RTM_NEWNSID", netns);
        receive(s, -1, "RTM_NEWNSID", netns, null);
    }

    /** The nsid this socket's namespace has for the namespace {@code nsFd} refers to; -1 when it has none. */
    public int getNsid(int nsFd, String netns) throws SysException {
        int s = ++seq;
        send(RtnlRequest.getNsid(buf.tx(), s, nsFd), "RTM_GETNSID", netns);
        int[] nsid = {RtGenMsg.NSID_NOT_ASSIGNED};
        receiveNsid(s, netns, nsid);
        return nsid[0];
    }

    private void send(int len, String op, String subject) throws SysException {
        while (true) {
            long n = Libc.send(fd, buf.tx(), len, 0);
            if (n == len) {
                return;
            }
            if (n < 0 && Libc.errno() == Errno.EINTR) {
                continue;
            }
            throw SysException.of(op, subject, n < 0 ? Libc.errno() : Errno.EIO);
        }
    }

    /**
     * Reads answers to request {@code s} until its end: NLMSG_DONE of a dump, or the NLMSG_ERROR that acknowledges
     * (error 0) or refuses it. Messages of {@code type} go to {@code addrs} (decoded as addresses).
     */
    private void receive(int s, int type, String op, String subject, List<RtnlAddr> addrs) throws SysException {
        MemorySegment rx = buf.rx();
        while (true) {
            long n = recv(op, subject);
            long off = 0;
            while (off + NlMsgHdr.SIZE <= n) {
                int len = NlMsgHdr.len(rx, off);
                if (len < NlMsgHdr.SIZE || off + len > n) {
                    throw new SysException(op, 0, op + " failed: a malformed answer (nlmsg_len " + len + " at offset "
                            + off + " of " + n + " bytes)");
                }
                if (NlMsgHdr.seq(rx, off) == s) {
                    int t = NlMsgHdr.type(rx, off);
                    if (t == NlMsgHdr.NLMSG_DONE) {
                        int err = len >= NlMsgHdr.SIZE + 4 ? NlMsgErr.error(rx, off + NlMsgHdr.SIZE) : 0;
                        if (err < 0) {
                            throw failure(op, subject, -err, rx, off, len);
                        }
                        return;
                    }
                    if (t == NlMsgHdr.NLMSG_ERROR) {
                        int err = NlMsgErr.error(rx, off + NlMsgHdr.SIZE);
                        if (err < 0) {
                            throw failure(op, subject, -err, rx, off, len);
                        }
                        return;
                    }
                    if (t == type && addrs != null) {
                        addrs.add(RtnlAddr.parse(rx, off, len));
                    }
                }
                off += NlMsgHdr.align(len);
            }
        }
    }

    private void receiveNsid(int s, String subject, int[] nsid) throws SysException {
        MemorySegment rx = buf.rx();
        while (true) {
            long n = recv("RTM_GETNSID", subject);
            long off = 0;
            while (off + NlMsgHdr.SIZE <= n) {
                int len = NlMsgHdr.len(rx, off);
                if (len < NlMsgHdr.SIZE || off + len > n) {
                    throw new SysException("RTM_GETNSID", 0, "RTM_GETNSID failed: a malformed answer");
                }
                if (NlMsgHdr.seq(rx, off) == s) {
                    int t = NlMsgHdr.type(rx, off);
                    if (t == NlMsgHdr.NLMSG_ERROR) {
                        int err = NlMsgErr.error(rx, off + NlMsgHdr.SIZE);
                        if (err < 0) {
                            throw failure("RTM_GETNSID", subject, -err, rx, off, len);
                        }
                        return;
                    }
                    if (t == Rtm.NEWNSID) {
                        long a = off + NlMsgHdr.SIZE + RtGenMsg.SIZE;
                        while (a + NlAttr.HDRLEN <= off + len) {
                            int alen = NlAttr.len(rx, a);
                            if (alen < NlAttr.HDRLEN) {
                                break;
                            }
                            if (NlAttr.type(rx, a) == RtGenMsg.NETNSA_NSID) {
                                nsid[0] = NlAttr.getInt(rx, a);
                            }
                            a += NlAttr.align(alen);
                        }
                        return;
                    }
                }
                off += NlMsgHdr.align(len);
            }
        }
    }

    private long recv(String op, String subject) throws SysException {
        while (true) {
            long n = Libc.recv(fd, buf.rx(), buf.rx().byteSize(), 0);
            if (n >= 0) {
                return n;
            }
            if (Libc.errno() != Errno.EINTR) {
                throw SysException.of(op, subject, Libc.errno());
            }
        }
    }

    /** A refusal with the kernel's own words (NLMSGERR_ATTR_MSG of an extended ack) when it gave some. */
    private static SysException failure(String op, String subject, int errno, MemorySegment rx, long off, int len) {
        String why = extAckMessage(rx, off, len);
        String m = Errno.message(op, subject, errno) + (why == null ? "" : " (kernel: " + why + ")");
        return new SysException(op, errno, m);
    }

    /** NLMSGERR_ATTR_MSG of the NLMSG_ERROR or NLMSG_DONE at {@code off}, or null. */
    static String extAckMessage(MemorySegment rx, long off, int len) {
        int flags = NlMsgHdr.flags(rx, off);
        int type = NlMsgHdr.type(rx, off);
        if ((flags & NLM_F_ACK_TLVS) == 0 || type != NlMsgHdr.NLMSG_ERROR && type != NlMsgHdr.NLMSG_DONE) {
            return null;
        }
        long body = off + NlMsgHdr.SIZE;
        long a;
        if (type == NlMsgHdr.NLMSG_DONE) {
            // A dump that failed once started: the error int, then the TLVs.
            a = body + 4;
        } else if ((flags & NLM_F_CAPPED) != 0) {
            // struct nlmsgerr with only the request's header, then the TLVs.
            a = body + NlMsgErr.LAYOUT.byteSize();
        } else {
            a = body + 4 + NlMsgHdr.align(NlMsgHdr.len(rx, body + 4));
        }
        long end = off + len;
        while (a + NlAttr.HDRLEN <= end) {
            int alen = NlAttr.len(rx, a);
            if (alen < NlAttr.HDRLEN || a + alen > end) {
                return null;
            }
            if (NlAttr.type(rx, a) == NLMSGERR_ATTR_MSG) {
                byte[] b = rx.asSlice(NlAttr.value(a), alen - NlAttr.HDRLEN).toArray(JAVA_BYTE);
                int z = 0;
                while (z < b.length && b[z] != 0) {
                    z++;
                }
                return new String(b, 0, z, StandardCharsets.UTF_8);
            }
            a += NlAttr.align(alen);
        }
        return null;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            Libc.close(fd);
            if (own != null) {
                own.close();
            }
        }
    }
}
