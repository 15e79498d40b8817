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
 * The BSD socket calls and their companions (fcntl, poll, epoll) as the C library offers them, bound with the JDK's
 * foreign function API for code that makes system calls on behalf of someone else (a packetdrill script run against
 * the kernel): every argument passes through unchanged, buffers and structs are the caller's segments. As in
 * {@link Libc}, each call captures errno right after it returns into a per-thread segment allocated once;
 * {@link #errno()} is the calling thread's errno of its last failed call here. Methods return what the C function
 * returns (-1 on failure) and never throw for a failed call.
 */
public final class SocketCalls {
    public static final int SOCK_STREAM = 1;
    public static final int SOCK_DGRAM = 2;
    public static final int IPPROTO_TCP = 6;
    public static final int SHUT_RD = 0;
    public static final int SHUT_WR = 1;
    public static final int SHUT_RDWR = 2;
    public static final int TCP_INFO = 11;
    public static final int TCP_CONGESTION = 13;
    public static final short POLLIN = 0x001;
    public static final short POLLOUT = 0x004;
    /** struct pollfd: int fd, short events, short revents. */
    public static final int POLLFD_SIZE = 8;
    /** struct epoll_event on x86-64: u32 events then u64 data, packed (12 bytes). */
    public static final int EPOLL_EVENT_SIZE = 12;
    /** struct sockaddr_in: family (host order), port and address (network order), 8 bytes of zero. */
    public static final int SOCKADDR_IN_SIZE = 16;
    /** struct msghdr on x86-64: name, namelen, iov, iovlen, control, controllen, flags. */
    public static final int MSGHDR_SIZE = 56;
    /** struct iovec: base, len. */
    public static final int IOVEC_SIZE = 16;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CCS = Linker.Option.captureCallState("errno");

    private static final MethodHandle SOCKET = handle("socket", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle SETSOCKOPT = handle("setsockopt",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle GETSOCKOPT = handle("getsockopt",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle BIND = handle("bind", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle LISTEN = handle("listen", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle ACCEPT4 = handle("accept4",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle CONNECT = handle("connect", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle READ = handle("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle WRITE = handle("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle SEND = handle("send",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle RECV = handle("recv",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle SENDTO = handle("sendto",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle RECVFROM = handle("recvfrom",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle SENDMSG = handle("sendmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle RECVMSG = handle("recvmsg", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle SHUTDOWN = handle("shutdown", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle CLOSE = handle("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FCNTL = handle("fcntl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG), Linker.Option.firstVariadicArg(2));
    private static final MethodHandle IOCTL = handle("ioctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.firstVariadicArg(2));
    private static final MethodHandle POLL = handle("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle EPOLL_CREATE = handle("epoll_create", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle EPOLL_CREATE1 = handle("epoll_create1", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle EPOLL_CTL = handle("epoll_ctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle EPOLL_WAIT = handle("epoll_wait",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));

    /** The capture-state segment of each thread, allocated once, and its last failed call's errno. */
    private static final class ThreadState {
        final MemorySegment capture = Arena.ofAuto().allocate(CAPTURE);
        int errno;
    }

    private static final ThreadLocal<ThreadState> STATE = ThreadLocal.withInitial(ThreadState::new);

    private SocketCalls() {}

    private static MethodHandle handle(String fn, FunctionDescriptor d, Linker.Option... more) {
        MemorySegment sym = LIBC.find(fn).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + fn));
        Linker.Option[] opts = new Linker.Option[more.length + 1];
        opts[0] = CCS;
        System.arraycopy(more, 0, opts, 1, more.length);
        return LINKER.downcallHandle(sym, d, opts);
    }

    /** The errno of this thread's last failed call made through this class (0 when it succeeded). */
    public static int errno() {
        return STATE.get().errno;
    }

    private static long keep(ThreadState s, long rc) {
        s.errno = rc < 0 ? (int) ERRNO.get(s.capture, 0L) : 0;
        return rc;
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException("native call failed", t);
    }

    public static int socket(int domain, int type, int protocol) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) SOCKET.invokeExact(s.capture, domain, type, protocol));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int setsockopt(int fd, int level, int name, MemorySegment value, int len) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) SETSOCKOPT.invokeExact(s.capture, fd, level, name, value, len));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** {@code len} points to a socklen_t holding the buffer's size on entry and the value's length on return. */
    public static int getsockopt(int fd, int level, int name, MemorySegment value, MemorySegment len) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) GETSOCKOPT.invokeExact(s.capture, fd, level, name, value, len));
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

    public static int listen(int fd, int backlog) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) LISTEN.invokeExact(s.capture, fd, backlog));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** accept4(2); {@code addr}/{@code len} may be {@link MemorySegment#NULL}. */
    public static int accept4(int fd, MemorySegment addr, MemorySegment len, int flags) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) ACCEPT4.invokeExact(s.capture, fd, addr, len, flags));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int connect(int fd, MemorySegment addr, int len) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) CONNECT.invokeExact(s.capture, fd, addr, len));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long read(int fd, MemorySegment buf, long count) {
        ThreadState s = STATE.get();
        try {
            return keep(s, (long) READ.invokeExact(s.capture, fd, buf, count));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long write(int fd, MemorySegment buf, long count) {
        ThreadState s = STATE.get();
        try {
            return keep(s, (long) WRITE.invokeExact(s.capture, fd, buf, count));
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

    /** sendto(2); {@code addr} may be {@link MemorySegment#NULL} with {@code addrLen} 0 (a connected socket). */
    public static long sendto(int fd, MemorySegment buf, long len, int flags, MemorySegment addr, int addrLen) {
        ThreadState s = STATE.get();
        try {
            return keep(s, (long) SENDTO.invokeExact(s.capture, fd, buf, len, flags, addr, addrLen));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** recvfrom(2); {@code addr}/{@code addrLen} may be {@link MemorySegment#NULL}. */
    public static long recvfrom(int fd, MemorySegment buf, long len, int flags, MemorySegment addr, MemorySegment addrLen) {
        ThreadState s = STATE.get();
        try {
            return keep(s, (long) RECVFROM.invokeExact(s.capture, fd, buf, len, flags, addr, addrLen));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** sendmsg(2) with a struct msghdr ({@link #MSGHDR_SIZE} bytes) the caller filled. */
    public static long sendmsg(int fd, MemorySegment msghdr, int flags) {
        ThreadState s = STATE.get();
        try {
            return keep(s, (long) SENDMSG.invokeExact(s.capture, fd, msghdr, flags));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** recvmsg(2); the kernel writes msg_flags (offset 48) of {@code msghdr}. */
    public static long recvmsg(int fd, MemorySegment msghdr, int flags) {
        ThreadState s = STATE.get();
        try {
            return keep(s, (long) RECVMSG.invokeExact(s.capture, fd, msghdr, flags));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int shutdown(int fd, int how) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) SHUTDOWN.invokeExact(s.capture, fd, how));
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

    /** fcntl(2) with an integer third argument (F_GETFL, F_SETFL, F_GETFD, F_SETFD, ...). */
    public static int fcntl(int fd, int cmd, long arg) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) FCNTL.invokeExact(s.capture, fd, cmd, arg));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** ioctl(2) with a pointer argument (SIOCINQ/SIOCOUTQ into an int, SIOCSIFMTU with a struct ifreq). */
    public static int ioctl(int fd, long request, MemorySegment arg) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) IOCTL.invokeExact(s.capture, fd, request, arg));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** poll(2) over {@code nfds} struct pollfd ({@link #POLLFD_SIZE} bytes each) at {@code fds}. */
    public static int poll(MemorySegment fds, long nfds, int timeoutMs) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) POLL.invokeExact(s.capture, fds, nfds, timeoutMs));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int epollCreate(int size) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) EPOLL_CREATE.invokeExact(s.capture, size));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int epollCreate1(int flags) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) EPOLL_CREATE1.invokeExact(s.capture, flags));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** epoll_ctl(2); {@code event} is one struct epoll_event ({@link #EPOLL_EVENT_SIZE} bytes) or NULL for DEL. */
    public static int epollCtl(int epfd, int op, int fd, MemorySegment event) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) EPOLL_CTL.invokeExact(s.capture, epfd, op, fd, event));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** epoll_wait(2) into {@code maxEvents} struct epoll_event at {@code events}. */
    public static int epollWait(int epfd, MemorySegment events, int maxEvents, int timeoutMs) {
        ThreadState s = STATE.get();
        try {
            return (int) keep(s, (int) EPOLL_WAIT.invokeExact(s.capture, epfd, events, maxEvents, timeoutMs));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
