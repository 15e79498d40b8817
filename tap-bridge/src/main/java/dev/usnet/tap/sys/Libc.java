package dev.usnet.tap.sys;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * The C library calls usnet's platform code makes (open, ioctl, socket, setns, ...), bound with the JDK's foreign
 * function API. Each call captures errno right after it returns (the JVM may clobber it otherwise) into a per-thread
 * segment allocated once, so a call allocates nothing; {@link #errno()} is the errno of the calling thread's last
 * failed call. Methods return what the C function returns (-1 on failure), never throw for a failed call.
 */
public final class Libc {
    public static final int O_RDONLY = 0;
    public static final int O_RDWR = 2;
    public static final int O_NONBLOCK = 0x800;
    public static final int O_CLOEXEC = 0x80000;
    public static final int F_GETFL = 3;
    public static final int F_SETFL = 4;
    /** setns/unshare namespace types (sched.h). */
    public static final int CLONE_NEWNS = 0x00020000;
    public static final int CLONE_NEWPID = 0x20000000;
    public static final int CLONE_NEWNET = 0x40000000;
    public static final int AF_UNSPEC = 0;
    public static final int AF_UNIX = 1;
    public static final int AF_INET = 2;
    public static final int AF_NETLINK = 16;
    public static final int SOCK_RAW = 3;
    public static final int SOCK_SEQPACKET = 5;
    public static final int SOCK_NONBLOCK = 0x800;
    public static final int SOCK_CLOEXEC = 0x80000;
    public static final int SOL_SOCKET = 1;
    public static final int SO_SNDBUF = 7;
    public static final int SO_RCVBUF = 8;
    public static final int MSG_DONTWAIT = 0x40;
    public static final int MSG_TRUNC = 0x20;

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
    private static final MethodHandle SOCKETPAIR = handle("socketpair",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS), CCS);
    private static final MethodHandle BIND = handle("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), CCS);
    private static final MethodHandle SETSOCKOPT = handle("setsockopt",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), CCS);
    private static final MethodHandle SEND = handle("send",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), CCS);
    private static final MethodHandle RECV = handle("recv",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), CCS);
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

    /** Per thread: the capture-state segment every call writes errno into, and the last failed call's errno. */
    private static final class ThreadState {
        final MemorySegment capture = Arena.ofAuto().allocate(CAPTURE);
        final MemorySegment intArg = Arena.ofAuto().allocate(JAVA_INT, 2);
        int errno;
    }

    private static final ThreadLocal<ThreadState> STATE = ThreadLocal.withInitial(ThreadState::new);

    private Libc() {}

    private static MethodHandle handle(String fn, FunctionDescriptor d, Linker.Option... opts) {
        MemorySegment sym = LIBC.find(fn).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + fn));
        return LINKER.downcallHandle(sym, d, opts);
    }

    /** The errno of this thread's last failed call (0 when the last call succeeded). */
    public static int errno() {
        return STATE.get().errno;
    }

    private static long keep(ThreadState s, long rc) {
        s.errno = rc < 0 ? (int) ERRNO.get(s.capture, 0L) : 0;
        return rc;
    }

    public static int open(String path, int flags) {
        ThreadState s = STATE.get();
        try (Arena a = Arena.ofConfined()) {
            return (int) keep(s, (int) OPEN.invokeExact(s.capture, a.allocateFrom(path), flags, 0));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int close(int fd) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) CLOSE.invokeExact(s.capture, fd));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int ioctl(int fd, long request, MemorySegment arg) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) IOCTL_PTR.invokeExact(s.capture, fd, request, arg));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int ioctl(int fd, long request, long arg) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) IOCTL_LONG.invokeExact(s.capture, fd, request, arg));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int fcntl(int fd, int cmd, int arg) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) FCNTL.invokeExact(s.capture, fd, cmd, arg));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** setns(2): moves the calling thread (only it) into the namespace {@code fd} refers to. */
    public static int setns(int fd, int nstype) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) SETNS.invokeExact(s.capture, fd, nstype));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** unshare(2) for the calling thread. */
    public static int unshare(int flags) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) UNSHARE.invokeExact(s.capture, flags));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int socket(int domain, int type, int protocol) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) SOCKET.invokeExact(s.capture, domain, type, protocol));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Both fds in {@code fds[0..1]}, or -1 with errno kept. */
    public static int socketpair(int domain, int type, int[] fds) {
        ThreadState s = STATE.get();
        try {
            int rc = (int) keep(s, (int) SOCKETPAIR.invokeExact(s.capture, domain, type, 0, s.intArg));
            fds[0] = s.intArg.getAtIndex(JAVA_INT, 0);
            fds[1] = s.intArg.getAtIndex(JAVA_INT, 1);
            return rc;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int bind(int fd, MemorySegment addr, int len) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) BIND.invokeExact(s.capture, fd, addr, len));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** setsockopt(2) with an int option value. */
    public static int setsockopt(int fd, int level, int name, int value) {
        ThreadState s = STATE.get();
        try {
            s.intArg.set(JAVA_INT, 0, value);
            return (int) keep(s, (int) SETSOCKOPT.invokeExact(s.capture, fd, level, name, s.intArg, 4));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long send(int fd, MemorySegment buf, long len, int flags) {
        ThreadState s = STATE.get();
        try {
            return keep(s, (long) SEND.invokeExact(s.capture, fd, buf, len, flags));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long recv(int fd, MemorySegment buf, long len, int flags) {
        ThreadState s = STATE.get();
        try {
            return keep(s, (long) RECV.invokeExact(s.capture, fd, buf, len, flags));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** if_nametoindex(3); 0 on failure, with errno kept. */
    public static int ifNameToIndex(String name) {
        ThreadState s = STATE.get();
        try (Arena a = Arena.ofConfined()) {
            int rc = (int) IF_NAMETOINDEX.invokeExact(s.capture, a.allocateFrom(name));
            s.errno = rc == 0 ? (int) ERRNO.get(s.capture, 0L) : 0;
            return rc;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code syscall(nr, a, b)}: capget (125) and capset (126) with their header and data structs. */
    public static long syscall(long nr, MemorySegment a, MemorySegment b) {
        ThreadState s = STATE.get();
        try {
            return keep(s, (long) SYSCALL3.invokeExact(s.capture, nr, a, b));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** setgroups(0, NULL); glibc applies it (and the setres*id below) to every thread, as POSIX requires. */
    public static int setgroupsNone() {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) SETGROUPS.invokeExact(s.capture, 0L, MemorySegment.NULL));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** setresgid(g, g, g). */
    public static int setresgid(int g) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) SETRESGID.invokeExact(s.capture, g, g, g));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** setresuid(u, u, u). */
    public static int setresuid(int u) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) SETRESUID.invokeExact(s.capture, u, u, u));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** prctl(option, arg2, 0, 0, 0) for the calling thread. */
    public static int prctl(int option, long arg2) {
        return prctl(option, arg2, 0L);
    }

    /** prctl(option, arg2, arg3, 0, 0) for the calling thread. */
    public static int prctl(int option, long arg2, long arg3) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) PRCTL.invokeExact(s.capture, option, arg2, arg3, 0L, 0L));
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
