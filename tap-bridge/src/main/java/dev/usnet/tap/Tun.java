package dev.usnet.tap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

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
    public static final long TUNSETSNDBUF = 0x400454d4L;
    public static final long TUNSETVNETHDRSZ = 0x400454d8L;
    /** _IOW('T', 226, int): sets the device's carrier (Linux 5.0+), as a cable plugged in or pulled. */
    public static final long TUNSETCARRIER = 0x400454e2L;

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
    private static final int O_RDONLY = 0;
    private static final int O_RDWR = 2;
    private static final int O_NONBLOCK = 0x800;
    private static final int O_CLOEXEC = 0x80000;
    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int CLONE_NEWNET = 0x40000000;
    private static final int AF_NETLINK = 16;
    private static final int SOCK_RAW = 3;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int AF_UNIX = 1;
    private static final int SOCK_SEQPACKET = 5;
    private static final int SOCK_NONBLOCK = 0x800;
    private static final int NETLINK_ROUTE = 0;
    private static final short RTM_NEWLINK = 16;
    private static final short NLMSG_ERROR = 2;
    private static final short NLM_F_REQUEST = 1;
    private static final short NLM_F_ACK = 4;
    private static final short IFLA_NET_NS_FD = 28;

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
     * Runs {@code task} on a new platform thread and waits for it (also through an interrupt, which is kept):
     * a thread that changed its network namespace must not serve anything else afterwards. Exceptions of the
     * task reach the caller as they were.
     */
    private static <T> T onOwnThread(String threadName, java.util.concurrent.Callable<T> task) throws TunException {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = Thread.ofPlatform().name(threadName).daemon(true).unstarted(() -> {
            try {
                result.set(new Object[] {task.call()});
            } catch (Throwable e) {
                result.set(e);
            }
        });
        t.start();
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Object r = result.get();
        if (r instanceof Object[] box) {
            @SuppressWarnings("unchecked")
            T v = (T) box[0];
            return v;
        }
        if (r instanceof TunException e) {
            throw e;
        }
        if (r instanceof RuntimeException e) {
            throw e;
        }
        if (r instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(threadName + " failed: " + r, (Throwable) r);
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
        if (Native.socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, fds) < 0) {
            throw fail("socketpair", "a frame socket pair", Native.lastErrno());
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
            if (Native.ioctl(fd, TUNSETCARRIER, v) < 0) {
                throw fail("TUNSETCARRIER", name, Native.lastErrno());
            }
        }
    }

    /** Closes the fd (once); the kernel deletes a non-persistent device with its last fd. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            Native.close(fd);
        }
    }

    @Override
    public String toString() {
        return "tun " + name + " fd " + fd + (options.netns() == null ? "" : " netns " + options.netns());
    }

    // ---- creation steps ----

    private static Tun createInNetns(Options o) throws TunException {
        int nsfd = openNetns(o.netns());
        try {
            int rc = Native.setns(nsfd, CLONE_NEWNET);
            if (rc < 0) {
                throw fail("setns", o.netns(), Native.lastErrno());
            }
        } finally {
            Native.close(nsfd);
        }
        return create(o);
    }

    /**
     * Runs {@code task} on a short-lived platform thread that first entered kernel network namespace
     * {@code netns} (/var/run/netns/NAME). What the task opens there (a pcap handle, a socket) stays bound to that
     * namespace and may be used from any thread afterwards.
     */
    public static <T> T callInNetns(String netns, java.util.concurrent.Callable<T> task) throws TunException {
        return onOwnThread("usnet-netns-" + netns, () -> {
            int nsfd = openNetns(netns);
            try {
                if (Native.setns(nsfd, CLONE_NEWNET) < 0) {
                    throw fail("setns", netns, Native.lastErrno());
                }
            } finally {
                Native.close(nsfd);
            }
            return task.call();
        });
    }

    private static Tun createAndMove(Options o) throws TunException {
        int nsfd = openNetns(o.netns());
        try {
            if (Native.unshare(CLONE_NEWNET) < 0) {
                throw fail("unshare", o.netns(), Native.lastErrno());
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
            Native.close(nsfd);
        }
    }

    private static int openNetns(String netns) throws TunException {
        int nsfd = Native.open("/var/run/netns/" + netns, O_RDONLY | O_CLOEXEC);
        if (nsfd < 0) {
            throw fail("open netns", netns, Native.lastErrno());
        }
        return nsfd;
    }

    /** open + TUNSETIFF (+ TUNSETVNETHDRSZ, TUNSETOFFLOAD) + O_NONBLOCK, in the calling thread's namespace. */
    private static Tun create(Options o) throws TunException {
        int fd = Native.open("/dev/net/tun", O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            throw fail("open /dev/net/tun", o.name(), Native.lastErrno());
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
                if (Native.ioctl(fd, TUNSETIFF, ifr) < 0) {
                    throw fail("TUNSETIFF", o.name(), Native.lastErrno());
                }
                name = ifr.getString(0, StandardCharsets.US_ASCII);
                if (o.vnetHdr()) {
                    MemorySegment sz = arena.allocate(JAVA_INT);
                    sz.set(JAVA_INT, 0, VNET_HDR_LEN);
                    if (Native.ioctl(fd, TUNSETVNETHDRSZ, sz) < 0) {
                        throw fail("TUNSETVNETHDRSZ", name, Native.lastErrno());
                    }
                }
                // Always set: 0 tells the kernel this side takes no partial checksums and no super-frames.
                if (o.vnetHdr() && Native.ioctl(fd, TUNSETOFFLOAD, o.offloads()) < 0) {
                    throw fail("TUNSETOFFLOAD", name, Native.lastErrno());
                }
            }
            int fl = Native.fcntl(fd, F_GETFL, 0);
            if (fl < 0 || Native.fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
                throw fail("fcntl O_NONBLOCK", o.name(), Native.lastErrno());
            }
            ok = true;
            return new Tun(fd, name, o);
        } finally {
            if (!ok) {
                Native.close(fd);
            }
        }
    }

    /** {@code ip link set NAME netns NSFD} over rtnetlink: RTM_NEWLINK with IFLA_NET_NS_FD. */
    private static void moveToNetns(String name, int nsfd, String netns) throws TunException {
        int ifindex = Native.ifNameToIndex(name);
        if (ifindex <= 0) {
            throw fail("move", netns, Native.lastErrno());
        }
        int sock = Native.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (sock < 0) {
            throw fail("move", netns, Native.lastErrno());
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = arena.allocate(40, 8);
            m.set(JAVA_INT, 0, 40);                 // nlmsghdr.nlmsg_len
            m.set(JAVA_SHORT, 4, RTM_NEWLINK);      // nlmsg_type
            m.set(JAVA_SHORT, 6, (short) (NLM_F_REQUEST | NLM_F_ACK));
            m.set(JAVA_INT, 8, 1);                  // nlmsg_seq
            m.set(JAVA_INT, 12, 0);                 // nlmsg_pid
            m.set(JAVA_INT, 20, ifindex);           // ifinfomsg: family 0, type 0, index, flags 0, change 0
            m.set(JAVA_SHORT, 32, (short) 8);       // rtattr.rta_len
            m.set(JAVA_SHORT, 34, IFLA_NET_NS_FD);  // rtattr.rta_type
            m.set(JAVA_INT, 36, nsfd);
            if (Native.send(sock, m, 40) != 40) {
                throw fail("move", netns, Native.lastErrno());
            }
            MemorySegment r = arena.allocate(4096, 8);
            long n = Native.recv(sock, r, 4096);
            if (n < 0) {
                throw fail("move", netns, Native.lastErrno());
            }
            if (n < 20 || r.get(JAVA_SHORT, 4) != NLMSG_ERROR) {
                throw new TunException("move", 0, "move failed: unexpected rtnetlink answer moving " + name
                        + " into network namespace " + netns);
            }
            int err = r.get(JAVA_INT, 16);
            if (err != 0) {
                throw fail("move", netns, -err);
            }
        } finally {
            Native.close(sock);
        }
    }

    private static TunException fail(String op, String subject, int errno) {
        return new TunException(op, errno, Errno.message(op, subject, errno));
    }

    /** The libc calls, errno captured right after each (the JVM may clobber errno otherwise). */
    static final class Native {
        private static final Linker LINKER = Linker.nativeLinker();
        private static final SymbolLookup LIBC = LINKER.defaultLookup();
        private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
        private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
        private static final Linker.Option CCS = Linker.Option.captureCallState("errno");

        private static final MethodHandle OPEN = handle("open",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), CCS, Linker.Option.firstVariadicArg(2));
        private static final MethodHandle IOCTL_PTR = handle("ioctl",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), CCS, Linker.Option.firstVariadicArg(2));
        private static final MethodHandle IOCTL_LONG = handle("ioctl",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), CCS, Linker.Option.firstVariadicArg(2));
        private static final MethodHandle FCNTL = handle("fcntl",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), CCS, Linker.Option.firstVariadicArg(2));
        private static final MethodHandle CLOSE = handle("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CCS);
        private static final MethodHandle SETNS = handle("setns", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), CCS);
        private static final MethodHandle UNSHARE = handle("unshare", FunctionDescriptor.of(JAVA_INT, JAVA_INT), CCS);
        private static final MethodHandle SOCKET = handle("socket",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), CCS);
        private static final MethodHandle SEND = handle("send",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), CCS);
        private static final MethodHandle RECV = handle("recv",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), CCS);
        private static final MethodHandle SOCKETPAIR = handle("socketpair",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS), CCS);
        private static final MethodHandle IF_NAMETOINDEX = handle("if_nametoindex",
                FunctionDescriptor.of(JAVA_INT, ADDRESS), CCS);
        // capget/capset are not exported by every libc under those names: the raw syscall numbers (x86-64) are.
        private static final MethodHandle SYSCALL3 = handle("syscall",
                FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS), CCS, Linker.Option.firstVariadicArg(1));
        private static final MethodHandle SETGROUPS = handle("setgroups",
                FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), CCS);
        private static final MethodHandle SETRESGID = handle("setresgid",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), CCS);
        private static final MethodHandle SETRESUID = handle("setresuid",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), CCS);
        private static final MethodHandle PRCTL = handle("prctl",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), CCS,
                Linker.Option.firstVariadicArg(1));

        // errno of the last call on this thread; creation runs on one thread from first call to error message.
        private static final ThreadLocal<int[]> LAST = ThreadLocal.withInitial(() -> new int[1]);

        private Native() {}

        private static MethodHandle handle(String fn, FunctionDescriptor d, Linker.Option... opts) {
            MemorySegment sym = LIBC.find(fn).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + fn));
            return LINKER.downcallHandle(sym, d, opts);
        }

        static int lastErrno() {
            return LAST.get()[0];
        }

        /** A downcall that captures errno into {@code cap}; {@code a} is the call's arena for arguments. */
        private interface Call {
            long invoke(Arena a, MemorySegment cap) throws Throwable;
        }

        /** Runs one downcall in a confined arena and records its errno (creation-time only, never per frame). */
        private static long call(Call c) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment cap = a.allocate(CAPTURE);
                long rc = c.invoke(a, cap);
                keep(cap, rc);
                return rc;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        private static int keep(MemorySegment cap, long rc) {
            int e = rc < 0 ? (int) ERRNO.get(cap, 0L) : 0;
            LAST.get()[0] = e;
            return e;
        }

        static int open(String path, int flags) {
            return (int) call((a, cap) -> (int) OPEN.invokeExact(cap, a.allocateFrom(path), flags, 0));
        }

        static int ioctl(int fd, long req, MemorySegment arg) {
            return (int) call((a, cap) -> (int) IOCTL_PTR.invokeExact(cap, fd, req, arg));
        }

        static int ioctl(int fd, long req, long arg) {
            return (int) call((a, cap) -> (int) IOCTL_LONG.invokeExact(cap, fd, req, arg));
        }

        static int fcntl(int fd, int cmd, int arg) {
            return (int) call((a, cap) -> (int) FCNTL.invokeExact(cap, fd, cmd, arg));
        }

        static int close(int fd) {
            return (int) call((a, cap) -> (int) CLOSE.invokeExact(cap, fd));
        }

        static int setns(int fd, int nstype) {
            return (int) call((a, cap) -> (int) SETNS.invokeExact(cap, fd, nstype));
        }

        static int unshare(int flags) {
            return (int) call((a, cap) -> (int) UNSHARE.invokeExact(cap, flags));
        }

        static int socket(int domain, int type, int protocol) {
            return (int) call((a, cap) -> (int) SOCKET.invokeExact(cap, domain, type, protocol));
        }

        /** Both fds in {@code fds[0..1]}, or -1 with errno kept. */
        static int socketpair(int domain, int type, int[] fds) {
            return (int) call((a, cap) -> {
                MemorySegment out = a.allocate(JAVA_INT, 2);
                int rc = (int) SOCKETPAIR.invokeExact(cap, domain, type, 0, out);
                fds[0] = out.getAtIndex(JAVA_INT, 0);
                fds[1] = out.getAtIndex(JAVA_INT, 1);
                return rc;
            });
        }

        static long send(int fd, MemorySegment buf, long len) {
            return call((a, cap) -> (long) SEND.invokeExact(cap, fd, buf, len, 0));
        }

        static long recv(int fd, MemorySegment buf, long len) {
            return call((a, cap) -> (long) RECV.invokeExact(cap, fd, buf, len, 0));
        }

        /** {@code syscall(nr, a, b)} for capget (125) and capset (126) with their header and data structs. */
        static long syscall(long nr, MemorySegment a, MemorySegment b) {
            return call((ar, cap) -> (long) SYSCALL3.invokeExact(cap, nr, a, b));
        }

        /** glibc applies these to every thread of the process (its setxid broadcast), as POSIX requires. */
        static int setgroupsNone() {
            return (int) call((a, cap) -> (int) SETGROUPS.invokeExact(cap, 0L, MemorySegment.NULL));
        }

        static int setresgid(int g) {
            return (int) call((a, cap) -> (int) SETRESGID.invokeExact(cap, g, g, g));
        }

        static int setresuid(int u) {
            return (int) call((a, cap) -> (int) SETRESUID.invokeExact(cap, u, u, u));
        }

        static int prctl(int option, long arg2) {
            return (int) call((a, cap) -> (int) PRCTL.invokeExact(cap, option, arg2, 0L, 0L, 0L));
        }

        static int prctl4(int option, long arg2, long arg3) {
            return (int) call((a, cap) -> (int) PRCTL.invokeExact(cap, option, arg2, arg3, 0L, 0L));
        }

        /** Returns 0 on failure, with errno kept. */
        static int ifNameToIndex(String name) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment cap = a.allocate(CAPTURE);
                int rc = (int) IF_NAMETOINDEX.invokeExact(cap, a.allocateFrom(name));
                int e = rc == 0 ? (int) ERRNO.get(cap, 0L) : 0;
                LAST.get()[0] = e;
                return rc;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        private static RuntimeException rethrow(Throwable t) {
            if (t instanceof RuntimeException r) {
                throw r;
            }
            if (t instanceof Error e) {
                throw e;
            }
            throw new IllegalStateException("native call failed", t);
        }
    }
}
