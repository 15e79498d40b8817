package dev.usnet.tap;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.usnet.tap.netns.Netns;
import dev.usnet.tap.rtnl.RtnlSocket;
import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SysException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An open TAP device file descriptor (drivers/net/tun.c from user space), created with the JDK's foreign
 * function API: {@code open("/dev/net/tun")}, {@code ioctl(TUNSETIFF)}, optionally {@code TUNSETVNETHDRSZ} and
 * {@code TUNSETOFFLOAD}, then {@code O_NONBLOCK}. The device can be born in the current network namespace, in a
 * named one ({@code /var/run/netns/NAME}), or in a private namespace and then moved into a named one; see
 * {@link Birth}. The fd works from any thread afterwards.
 */
public final class Tun implements AutoCloseable {
    public static final int IFF_TUN = 0x0001;
    public static final int IFF_TAP = 0x0002;
    public static final int IFF_MULTI_QUEUE = 0x0100;
    public static final int IFF_NO_PI = 0x1000;
    public static final int IFF_VNET_HDR = 0x4000;
    /**
     * TUNSETIFF fails with EBUSY when a device of that name exists, instead of attaching to a persistent TAP (or
     * failing with a vague EINVAL for another kind of link): usnet only ever opens devices it creates.
     */
    public static final int IFF_TUN_EXCL = 0x8000;

    public static final long TUNSETIFF = 0x400454caL;
    public static final long TUNSETPERSIST = 0x400454cbL;
    public static final long TUNSETOFFLOAD = 0x400454d0L;
    /** _IOW('T', 226, int): sets the device's carrier (Linux 5.0+), as a cable plugged in or pulled. */
    public static final long TUNSETCARRIER = 0x400454e2L;
    public static final long TUNSETSNDBUF = 0x400454d4L;
    public static final long TUNSETVNETHDRSZ = 0x400454d8L;

    public static final int TUN_F_CSUM = 0x01;
    public static final int TUN_F_TSO4 = 0x02;
    public static final int TUN_F_TSO6 = 0x04;
    public static final int TUN_F_TSO_ECN = 0x08;
    /** What "GSO wanted" asks of the kernel: partial checksums and TCP super-frames in both families. */
    public static final int OFFLOAD_GSO = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6;

    /** Size of struct virtio_net_hdr_v1 (with num_buffers), what usnet asks for with TUNSETVNETHDRSZ. */
    public static final int VNET_HDR_LEN = 12;

    static final int IFNAMSIZ = 16;
    static final int IFREQ_SIZE = 40;

    /** Where the device is created. */
    public enum Birth {
        /** In the network namespace of the calling thread. */
        CURRENT_NETNS,
        /**
         * In the named namespace, from a short-lived thread that {@code setns()}es into it first. The fd holds a
         * reference on that namespace: {@code ip netns del NAME} then only removes the name, and namespace and
         * device live on until the fd is closed.
         */
        IN_NETNS,
        /**
         * In a private namespace of its own (a short-lived thread {@code unshare(CLONE_NEWNET)}s), then moved into
         * the named namespace over rtnetlink, as a container runtime moves a veth end. The fd holds only the private
         * namespace, so deleting the named namespace removes the device and the fd reports it gone (EBADFD).
         */
        MOVED_INTO_NETNS
    }

    /**
     * How to create a TAP device. {@code name} may be a pattern such as {@code tap%d}; the kernel picks the
     * number. {@code offloads} (TUN_F_*) need {@code vnetHdr}.
     */
    public record Options(Birth birth, String netns, String name, boolean vnetHdr, int offloads) {
        public Options {
            if (birth != Birth.CURRENT_NETNS && (netns == null || netns.isEmpty())) {
                throw new IllegalArgumentException(birth + " needs a network namespace name");
            }
            if (netns != null && (netns.contains("/") || netns.equals(".") || netns.equals(".."))) {
                throw new IllegalArgumentException("bad network namespace name '" + netns + "'");
            }
            if (name == null || name.isEmpty() || name.getBytes(StandardCharsets.US_ASCII).length >= IFNAMSIZ) {
                throw new IllegalArgumentException("TAP device name must have 1.." + (IFNAMSIZ - 1) + " characters: '" + name + "'");
            }
            if (offloads != 0 && !vnetHdr) {
                throw new IllegalArgumentException("offloads need the virtio-net header (vnetHdr)");
            }
            if ((offloads & (TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN)) != 0 && (offloads & TUN_F_CSUM) == 0) {
                throw new IllegalArgumentException("TSO offloads need TUN_F_CSUM");
            }
        }

        /** A plain TAP (no virtio-net header) in the current namespace. */
        public static Options current(String name) {
            return new Options(Birth.CURRENT_NETNS, null, name, false, 0);
        }

        /** A plain TAP born in {@code netns} via setns (the fd keeps the namespace alive). */
        public static Options inNetns(String netns, String name) {
            return new Options(Birth.IN_NETNS, netns, name, false, 0);
        }

        /** A plain TAP born privately and moved into {@code netns} (deleting the namespace deletes the device). */
        public static Options movedInto(String netns, String name) {
            return new Options(Birth.MOVED_INTO_NETNS, netns, name, false, 0);
        }

        /** With IFF_VNET_HDR; {@code gso} also asks for {@link #OFFLOAD_GSO} (64 KiB frames, partial checksums). */
        public Options withVnetHdr(boolean gso) {
            return new Options(birth, netns, name, true, gso ? OFFLOAD_GSO : 0);
        }
    }

    private final int fd;
    private final String name;
    private final Options options;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Tun(int fd, String name, Options options) {
        this.fd = fd;
        this.name = name;
        this.options = options;
    }

    /** Creates the TAP device as {@code o} says and returns its non-blocking fd. */
    public static Tun open(Options o) throws TunException {
        if (o.birth() == Birth.CURRENT_NETNS) {
            return create(o);
        }
        // setns and unshare(CLONE_NEWNET) change the namespace of the calling OS thread for good, so they run on
        // a platform thread of their own that ends right after.
        return onOwnThread("usnet-tun-birth-" + o.name(),
                () -> o.birth() == Birth.IN_NETNS ? createInNetns(o) : createAndMove(o));
    }

    /**
     * Runs {@code task} on a platform thread of its own ({@link Netns#onOwnThread}): a thread that changed its
     * network namespace must not serve anything else afterwards.
     */
    private static <T> T onOwnThread(String threadName, Netns.Task<T, TunException> task) throws TunException {
        return Netns.onOwnThread(threadName, task);
    }

    /** A stand-in for a TAP ({@link #socketPair}): usnet's end as a Tun, and the fd of the end that plays the kernel. */
    record SocketPair(Tun tun, int peerFd) {}

    /**
     * An AF_UNIX SOCK_SEQPACKET socket pair instead of a TAP: it keeps frame boundaries as a TAP fd does, so a
     * {@link TapDevice} runs over one end unchanged (virtio-net header, GSO offloads) while the caller reads and
     * writes frames at the other, non-blocking too. No device, no privileges: for exercising the TAP data path.
     */
    static SocketPair socketPair(String name) throws TunException {
        int[] fds = new int[2];
        if (Libc.socketpair(Libc.AF_UNIX, Libc.SOCK_SEQPACKET | Libc.SOCK_NONBLOCK | Libc.SOCK_CLOEXEC, fds) < 0) {
            throw fail("socketpair", "a frame socket pair", Libc.errno());
        }
        Options o = new Options(Birth.CURRENT_NETNS, null, name, true, OFFLOAD_GSO);
        return new SocketPair(new Tun(fds[0], name, o), fds[1]);
    }

    public int fd() {
        return fd;
    }

    /** The kernel's name of the device (a {@code %d} pattern resolved). */
    public String name() {
        return name;
    }

    public Options options() {
        return options;
    }

    /** The namespace the device was put in, or null for the current one. */
    public String netns() {
        return options.netns();
    }

    /** True when frames carry a virtio_net_hdr ({@link #VNET_HDR_LEN} bytes) in front, both ways. */
    public boolean vnetHdr() {
        return options.vnetHdr();
    }

    /** TUN_F_* flags the kernel was told this side handles. */
    public int offloads() {
        return options.offloads();
    }

    public boolean isOpen() {
        return !closed.get();
    }

    /** Closes the fd (once); the kernel deletes a non-persistent device with its last fd. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            Libc.close(fd);
        }
    }

    @Override
    public String toString() {
        return "tun " + name + " fd " + fd + (options.netns() == null ? "" : " netns " + options.netns());
    }

    // ---- creation steps ----

    private static Tun createInNetns(Options o) throws TunException {
        try {
            Netns.enter(o.netns());
        } catch (SysException e) {
            throw converted(e);
        }
        return create(o);
    }

    /**
     * Runs {@code task} on a short-lived platform thread that first entered kernel network namespace
     * {@code netns} (/var/run/netns/NAME). What the task opens there (a pcap handle, a socket) stays bound to that
     * namespace and may be used from any thread afterwards.
     */
    public static <T> T callInNetns(String netns, java.util.concurrent.Callable<T> task) throws TunException {
        try {
            return Netns.callIn(netns, () -> {
                try {
                    return task.call();
                } catch (TunException | RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException("in network namespace " + netns + ": " + e, e);
                }
            });
        } catch (SysException e) {
            throw converted(e);
        }
    }

    private static Tun createAndMove(Options o) throws TunException {
        int nsfd;
        try {
            nsfd = Netns.open(o.netns());
        } catch (SysException e) {
            throw converted(e);
        }
        try {
            if (Libc.unshare(Libc.CLONE_NEWNET) < 0) {
                throw fail("unshare", o.netns(), Libc.errno());
            }
            Tun tun = create(o);
            try {
                moveToNetns(tun.name, nsfd, o.netns());
            } catch (TunException | RuntimeException e) {
                tun.close();
                throw e;
            }
            return tun;
        } finally {
            Libc.close(nsfd);
        }
    }

    /** open + TUNSETIFF (+ TUNSETVNETHDRSZ, TUNSETOFFLOAD) + O_NONBLOCK, in the calling thread's namespace. */
    private static Tun create(Options o) throws TunException {
        int fd = Libc.open("/dev/net/tun", Libc.O_RDWR | Libc.O_CLOEXEC);
        if (fd < 0) {
            throw fail("open /dev/net/tun", o.name(), Libc.errno());
        }
        boolean ok = false;
        try {
            String name;
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment ifr = arena.allocate(IFREQ_SIZE, 8);
                byte[] n = o.name().getBytes(StandardCharsets.US_ASCII);
                MemorySegment.copy(n, 0, ifr, JAVA_BYTE, 0, n.length);
                short flags = (short) (IFF_TAP | IFF_NO_PI | IFF_TUN_EXCL | (o.vnetHdr() ? IFF_VNET_HDR : 0));
                ifr.set(JAVA_SHORT, IFNAMSIZ, flags);
                if (Libc.ioctl(fd, TUNSETIFF, ifr) < 0) {
                    throw fail("TUNSETIFF", o.name(), Libc.errno());
                }
                name = ifr.getString(0, StandardCharsets.US_ASCII);
                if (o.vnetHdr()) {
                    MemorySegment sz = arena.allocate(JAVA_INT);
                    sz.set(JAVA_INT, 0, VNET_HDR_LEN);
                    if (Libc.ioctl(fd, TUNSETVNETHDRSZ, sz) < 0) {
                        throw fail("TUNSETVNETHDRSZ", name, Libc.errno());
                    }
                }
                // Always set: 0 tells the kernel this side takes no partial checksums and no super-frames.
                if (o.vnetHdr() && Libc.ioctl(fd, TUNSETOFFLOAD, o.offloads()) < 0) {
                    throw fail("TUNSETOFFLOAD", name, Libc.errno());
                }
            }
            int fl = Libc.fcntl(fd, Libc.F_GETFL, 0);
            if (fl < 0 || Libc.fcntl(fd, Libc.F_SETFL, fl | Libc.O_NONBLOCK) < 0) {
                throw fail("fcntl O_NONBLOCK", o.name(), Libc.errno());
            }
            ok = true;
            return new Tun(fd, name, o);
        } finally {
            if (!ok) {
                Libc.close(fd);
            }
        }
    }

    /** {@code ip link set NAME netns NSFD} over rtnetlink: RTM_NEWLINK with IFLA_NET_NS_FD. */
    private static void moveToNetns(String name, int nsfd, String netns) throws TunException {
        int ifindex = Libc.ifNameToIndex(name);
        if (ifindex <= 0) {
            throw fail("move", netns, Libc.errno());
        }
        try (RtnlSocket rtnl = RtnlSocket.open()) {
            rtnl.moveLink(ifindex, nsfd, netns);
        } catch (SysException e) {
            throw converted(e);
        }
    }

    /** A platform-layer failure as the TunException callers of this class know. */
    private static TunException converted(SysException e) {
        return new TunException(e.op(), e.errno(), e.getMessage());
    }

    /**
     * TUNSETCARRIER: the kernel side sees carrier ({@code on}) or loses it (NO-CARRIER, operstate DOWN), as when
     * a cable is pulled; the interface stays administratively up.
     */
    public void setCarrier(boolean on) throws TunException {
        if (closed.get()) {
            throw new TunException("TUNSETCARRIER", Errno.EBADF, name + ": closed");
        }
        try (java.lang.foreign.Arena a = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment v = a.allocateFrom(JAVA_INT, on ? 1 : 0);
            if (Libc.ioctl(fd, TUNSETCARRIER, v) < 0) {
                throw fail("TUNSETCARRIER", name, Libc.errno());
            }
        }
    }

    private static TunException fail(String op, String subject, int errno) {
        return new TunException(op, errno, Errno.message(op, subject, errno));
    }
}
