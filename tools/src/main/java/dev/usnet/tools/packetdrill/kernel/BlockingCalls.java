package dev.usnet.tools.packetdrill.kernel;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SocketCalls;
import dev.usnet.tools.packetdrill.ScriptOptions;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.SyscallResult;
import dev.usnet.tools.packetdrill.Value;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Which of a script's calls may put the caller to sleep in the kernel, and for those that may, the part that puts
 * packets on the wire made at once on the runner's thread ({@link KernelSyscalls} makes the calls themselves).
 */
final class BlockingCalls {
    private static final int SO_LINGER = 13;
    private static final int MSG_DONTWAIT = Libc.MSG_DONTWAIT;
    private static final int SO_ERROR = 4;
    private static final int SO_SNDTIMEO = 21;
    private static final int EINPROGRESS = 115;

    private final ScriptOptions options;
    private final FdTable fds;
    private final KernelSyscalls syscalls;

    BlockingCalls(ScriptOptions options, FdTable fds, KernelSyscalls syscalls) {
        this.options = options;
        this.fds = fds;
        this.syscalls = syscalls;
    }

    /**
     * True when the call cannot put its caller to sleep and acts on an fd that exists already, so the runner's own
     * thread may make it (in any namespace; only socket() needs the test namespace): no hand-over to a call thread,
     * whose wake-up on a busy machine can take milliseconds that would shift the script's time line. Decided by
     * asking the kernel, without side effects: option calls, bind, listen, fcntl, shutdown, epoll_ctl,
     * epoll_create never sleep; accept, connect, reads and writes do not on a socket in O_NONBLOCK mode or with
     * MSG_DONTWAIT; accept and reads do not when poll says the socket is readable already; poll and epoll_wait do
     * not with a zero timeout; close does not unless SO_LINGER asks it to wait.
     */
    boolean canRunInline(Syscall s) {
        return switch (s.name()) {
            case "setsockopt", "getsockopt", "bind", "listen", "fcntl", "shutdown", "epoll_ctl", "ioctl",
                 "epoll_create", "epoll_create1" -> true;
            case "poll" -> s.arg(2) instanceof Value.Int t && t.value() == 0;
            case "epoll_wait" -> s.arg(3) instanceof Value.Int t && t.value() == 0;
            case "close" -> !lingers(s);
            case "connect", "write", "send", "sendto", "sendmsg" -> nonBlocking(s);
            case "accept", "accept4", "read", "recv", "recvfrom", "recvmsg" -> nonBlocking(s) || readable(s);
            default -> false;
        };
    }

    /**
     * For a call that may sleep: makes the part that puts packets on the wire on the runner's thread, at the
     * script's moment, and returns the waiting part for a call thread; null when the call completed here. A blocking
     * connect sends its SYN here (a non-blocking connect, O_NONBLOCK set for just that call) and leaves the wait
     * for the handshake (poll for POLLOUT, then SO_ERROR, which is what a blocking connect returns) to the call
     * thread; a blocking write, send or sendto first sends what fits now (MSG_DONTWAIT) and leaves only a rest that
     * does not fit for the call thread. Every other call runs wholly on the call thread.
     */
    Runnable begin(KernelCall c) {
        Syscall s = c.syscall();
        try {
            Runnable rest = switch (s.name()) {
                case "connect" -> s.arg(1) instanceof Value.Ellipsis && !sendTimeout(s) ? beginConnect(c) : null;
                case "write", "send", "sendto" -> beginWrite(c);
                default -> null;
            };
            if (rest != null || c.isDone()) {
                return rest;
            }
        } catch (RuntimeException e) {
            c.fail(e);
            return null;
        }
        return () -> syscalls.run(c);
    }

    /** SO_SNDTIMEO set: a blocking connect then gives up with EINPROGRESS after it, which only the real call does. */
    private boolean sendTimeout(Syscall s) {
        int fd = fdOrNone(s);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(16, 8);
            MemorySegment len = a.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, 16);
            return SocketCalls.getsockopt(fd, Libc.SOL_SOCKET, SO_SNDTIMEO, v, len) == 0
                    && (v.get(JAVA_LONG, 0) != 0 || v.get(JAVA_LONG, 8) != 0);
        }
    }

    private Runnable beginConnect(KernelCall c) {
        Syscall s = c.syscall();
        int fd = syscalls.fd(s, 0);
        int fl = SocketCalls.fcntl(fd, Libc.F_GETFL, 0);
        if (fl < 0) {
            c.complete(SyscallResult.error(SocketCalls.errno()));
            return null;
        }
        long rc;
        int errno;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment sa = syscalls.remoteSockaddr(a);
            int len = KernelSyscalls.sockaddrLength(options.ipVersion().socketFamily());
            SocketCalls.fcntl(fd, Libc.F_SETFL, fl | Libc.O_NONBLOCK);
            c.enteringKernel();
            rc = SocketCalls.connect(fd, sa, len);
            errno = SocketCalls.errno();
            c.returned();
            SocketCalls.fcntl(fd, Libc.F_SETFL, fl);
        }
        if (rc == 0 || errno != EINPROGRESS) {
            c.complete(rc == 0 ? SyscallResult.ok(0) : SyscallResult.error(errno));
            return null;
        }
        return () -> {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment p = a.allocate(SocketCalls.POLLFD_SIZE, 8);
                p.set(JAVA_INT, 0, fd);
                p.set(JAVA_SHORT, 4, SocketCalls.POLLOUT);
                c.enteringKernel();
                int n;
                do {
                    n = SocketCalls.poll(p, 1, -1);
                } while (n < 0 && SocketCalls.errno() == Errno.EINTR);
                c.returned();
                MemorySegment err = a.allocate(JAVA_INT);
                MemorySegment len = a.allocate(JAVA_INT);
                len.set(JAVA_INT, 0, 4);
                if (n < 0 || SocketCalls.getsockopt(fd, Libc.SOL_SOCKET, SO_ERROR, err, len) < 0) {
                    c.complete(SyscallResult.error(SocketCalls.errno()));
                } else {
                    int e = err.get(JAVA_INT, 0);
                    c.complete(e == 0 ? SyscallResult.ok(0) : SyscallResult.error(e));
                }
            } catch (RuntimeException e) {
                c.fail(e);
            }
        };
    }

    /**
     * A blocking write larger than this runs wholly on the call thread. Splitting it into a MSG_DONTWAIT part and a
     * rest would be two sendmsg calls to the kernel, and each ends in tcp_push: the first part's last segment would
     * carry a PSH that one write(2) does not send (seen as {@code P.} in the middle of a cwnd-limited burst). A
     * small write fits the send buffer whole (or not at all: EAGAIN sends nothing), so it is safe to start here.
     */
    private static final long WHOLE_ON_CALL_THREAD_ABOVE = 4096;

    private Runnable beginWrite(KernelCall c) {
        Syscall s = c.syscall();
        int fd = syscalls.fd(s, 0);
        long n = KernelSyscalls.count(s, 2);
        if (n > WHOLE_ON_CALL_THREAD_ABOVE) {
            return null;
        }
        int flags = s.name().equals("write") ? 0 : KernelSyscalls.flags(s, 3);
        Arena a = Arena.ofShared();
        MemorySegment buf = a.allocate(Math.max(1, n));
        c.enteringKernel();
        long sent = SocketCalls.send(fd, buf, n, flags | MSG_DONTWAIT);
        int errno = SocketCalls.errno();
        c.returned();
        if (sent == n || (sent < 0 && errno != Errno.EAGAIN) || n == 0) {
            a.close();
            c.complete(sent < 0 ? SyscallResult.error(errno) : SyscallResult.ok(sent));
            return null;
        }
        long first = Math.max(0, sent);
        return () -> {
            try (a) {
                c.enteringKernel();
                long more = SocketCalls.send(fd, buf.asSlice(first), n - first, flags);
                int e = SocketCalls.errno();
                c.returned();
                // As a blocking write reports it: the bytes queued, or the error when none were.
                if (more < 0) {
                    c.complete(first > 0 ? SyscallResult.ok(first) : SyscallResult.error(e));
                } else {
                    c.complete(SyscallResult.ok(first + more));
                }
            } catch (RuntimeException e) {
                c.fail(e);
            }
        };
    }

    private int fdOrNone(Syscall s) {
        return s.arg(0) instanceof Value.Int v ? fds.kernelFd(v.value()) : FdTable.NO_FD;
    }

    /** O_NONBLOCK on the fd, or MSG_DONTWAIT in the call's flags. An unknown fd fails at once (EBADF): true. */
    private boolean nonBlocking(Syscall s) {
        int fd = fdOrNone(s);
        if (fd == FdTable.NO_FD) {
            return true;
        }
        int flagsArg = switch (s.name()) {
            case "send", "recv", "sendto", "recvfrom" -> 3;
            case "sendmsg", "recvmsg" -> 2;
            default -> -1;
        };
        if (flagsArg >= 0 && s.arg(flagsArg) instanceof Value.Int f && (f.value() & MSG_DONTWAIT) != 0) {
            return true;
        }
        int fl = SocketCalls.fcntl(fd, Libc.F_GETFL, 0);
        return fl < 0 || (fl & Libc.O_NONBLOCK) != 0;
    }

    /** poll with a zero timeout says the fd is readable, hung up or in error: accept or read returns at once. */
    private boolean readable(Syscall s) {
        int fd = fdOrNone(s);
        if (fd == FdTable.NO_FD) {
            return true;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(SocketCalls.POLLFD_SIZE, 8);
            p.set(JAVA_INT, 0, fd);
            p.set(JAVA_SHORT, 4, SocketCalls.POLLIN);
            return SocketCalls.poll(p, 1, 0) > 0 && p.get(JAVA_SHORT, 6) != 0;
        }
    }

    /** SO_LINGER on with a non-zero time: close waits for the data to be acknowledged. */
    private boolean lingers(Syscall s) {
        int fd = fdOrNone(s);
        if (fd == FdTable.NO_FD) {
            return false;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(8, 8);
            MemorySegment len = a.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, 8);
            if (SocketCalls.getsockopt(fd, Libc.SOL_SOCKET, SO_LINGER, v, len) < 0) {
                return false;
            }
            return v.get(JAVA_INT, 0) != 0 && v.get(JAVA_INT, 4) != 0;
        }
    }
}
