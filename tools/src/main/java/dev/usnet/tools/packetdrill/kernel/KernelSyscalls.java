package dev.usnet.tools.packetdrill.kernel;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SocketCalls;
import dev.usnet.tools.packetdrill.IpVersion;
import dev.usnet.tools.packetdrill.ScriptOptions;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.SyscallResult;
import dev.usnet.tools.packetdrill.Value;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Makes a script's system calls on the kernel: arguments ({@link Value}s, Linux numbers already) become C
 * arguments, script fds become kernel fds ({@link FdTable}), out-parameters come back in the shape the script wrote
 * them. Runs on a thread inside the test namespace (a socket belongs to the namespace of the thread creating it).
 *
 * <p>Addresses follow packetdrill: {@code bind(fd, ..., ...)} binds {@code local_ip:8080}, {@code connect(fd, ...,
 * ...)} connects to {@code remote_ip:8080}, {@code socket(..., ...)} with a {@code ...} domain means the family of
 * the script's IP version (AF_INET, or AF_INET6 with IPv4-mapped addresses or IPv6 ones; and a
 * {@code ...} protocol the type's default). Buffers
 * ({@code ...}) are zero-filled memory of the length the script gives.
 */
final class KernelSyscalls {
    /** packetdrill's default {@code --bind_port} and {@code --connect_port}. */
    static final int SCRIPT_PORT = 8080;
    private static final int IPPROTO_TCP = SocketCalls.IPPROTO_TCP;
    /** TCP_CA_NAME_MAX: what a congestion control name's buffer holds. */
    private static final int CA_NAME_MAX = 16;

    private final ScriptOptions options;
    private final FdTable fds;
    private final BlockingCalls blocking;

    KernelSyscalls(ScriptOptions options, FdTable fds) {
        this.options = options;
        this.fds = fds;
        this.blocking = new BlockingCalls(options, fds, this);
    }

    /** Whether the runner's own thread may make {@code s}: {@link BlockingCalls#canRunInline}. */
    boolean canRunInline(Syscall s) {
        return blocking.canRunInline(s);
    }

    /** The wire part of a call that may sleep, made now; the rest for a call thread: {@link BlockingCalls#begin}. */
    Runnable begin(KernelCall c) {
        return blocking.begin(c);
    }

    /** Makes {@code c}'s call and completes it (or fails it with a message naming the line). */
    void run(KernelCall c) {
        try (Arena arena = Arena.ofConfined()) {
            c.complete(dispatch(c, arena));
        } catch (RuntimeException e) {
            c.fail(e);
        }
    }

    private SyscallResult dispatch(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        return switch (s.name()) {
            case "socket" -> socket(c);
            case "bind" -> bind(c, a);
            case "listen" -> simple(c, () -> SocketCalls.listen(fd(s, 0), (int) s.intArg(1)));
            case "accept" -> accept(c, 0);
            case "accept4" -> accept(c, (int) s.intArg(3));
            case "connect" -> connect(c, a);
            case "read" -> {
                long n = count(s, 2);
                MemorySegment buf = a.allocate(Math.max(1, n));
                yield simple(c, () -> SocketCalls.read(fd(s, 0), buf, n));
            }
            case "write" -> {
                long n = count(s, 2);
                MemorySegment buf = a.allocate(Math.max(1, n));
                yield simple(c, () -> SocketCalls.write(fd(s, 0), buf, n));
            }
            case "recv" -> {
                long n = count(s, 2);
                MemorySegment buf = a.allocate(Math.max(1, n));
                yield simple(c, () -> SocketCalls.recv(fd(s, 0), buf, n, flags(s, 3)));
            }
            case "send" -> {
                long n = count(s, 2);
                MemorySegment buf = a.allocate(Math.max(1, n));
                yield simple(c, () -> SocketCalls.send(fd(s, 0), buf, n, flags(s, 3)));
            }
            case "recvfrom" -> {
                long n = count(s, 2);
                MemorySegment buf = a.allocate(Math.max(1, n));
                yield simple(c, () -> SocketCalls.recvfrom(fd(s, 0), buf, n, flags(s, 3), MemorySegment.NULL,
                        MemorySegment.NULL));
            }
            case "sendto" -> {
                // A connected TCP socket ignores the address; packetdrill scripts write it as ... anyway.
                long n = count(s, 2);
                MemorySegment buf = a.allocate(Math.max(1, n));
                yield simple(c, () -> SocketCalls.sendto(fd(s, 0), buf, n, flags(s, 3), MemorySegment.NULL, 0));
            }
            case "sendmsg", "recvmsg" -> message(c, a);
            case "shutdown" -> simple(c, () -> SocketCalls.shutdown(fd(s, 0), (int) s.intArg(1)));
            case "close" -> close(c);
            case "fcntl" -> simple(c, () -> SocketCalls.fcntl(fd(s, 0), (int) s.intArg(1),
                    s.arg(2) instanceof Value.Int v ? v.value() : 0));
            case "ioctl" -> ioctl(c, a);
            case "setsockopt" -> setsockopt(c, a);
            case "getsockopt" -> getsockopt(c, a);
            case "poll" -> poll(c, a);
            case "epoll_create" -> newFd(c, () -> SocketCalls.epollCreate((int) s.intArg(0)));
            case "epoll_create1" -> newFd(c, () -> SocketCalls.epollCreate1(
                    s.arg(0) instanceof Value.Int v ? (int) v.value() : 0));
            case "epoll_ctl" -> epollCtl(c, a);
            case "epoll_wait" -> epollWait(c, a);
            default -> throw KernelCall.bad(s, "the kernel target does not implement this system call");
        };
    }

    // ---- helpers ----

    /** Makes the call as {@code call} does it, marking the time in the kernel; -1 results carry errno. */
    private static SyscallResult simple(KernelCall c, LongSupplier call) {
        long rc = native_(c, call);
        return rc < 0 ? SyscallResult.error(SocketCalls.errno()) : SyscallResult.ok(rc);
    }

    private static long native_(KernelCall c, LongSupplier call) {
        c.enteringKernel();
        long rc = call.getAsLong();
        c.returned();
        return rc;
    }

    /** A call that returns a new fd: the script sees it under the lowest free script number. */
    private SyscallResult newFd(KernelCall c, LongSupplier call) {
        long rc = native_(c, call);
        if (rc < 0) {
            return SyscallResult.error(SocketCalls.errno());
        }
        return SyscallResult.ok(fds.add((int) rc));
    }

    int fd(Syscall s, int i) {
        return fds.kernelFd(s.intArg(i));
    }

    static long count(Syscall s, int i) {
        long n = s.intArg(i);
        if (n < 0) {
            throw KernelCall.bad(s, "argument " + (i + 1) + " is a length and cannot be negative: " + n);
        }
        return n;
    }

    static int flags(Syscall s, int i) {
        return s.arg(i) instanceof Value.Int v ? (int) v.value() : 0;
    }

    /** sizeof(struct sockaddr_in6): family, port, flow info, 16 address bytes, scope id. */
    static final int SOCKADDR_IN6_SIZE = 28;

    /**
     * A struct sockaddr_in (4-byte address) or sockaddr_in6 (16 bytes; flow info and scope id 0) for
     * {@code family}; {@link #sockaddrLength} is its size.
     */
    MemorySegment sockaddr(Arena a, byte[] ip, int port, int family) {
        MemorySegment sa = a.allocate(SOCKADDR_IN6_SIZE, 8);
        sa.set(JAVA_SHORT, 0, (short) family);
        sa.set(JAVA_BYTE, 2, (byte) (port >>> 8));
        sa.set(JAVA_BYTE, 3, (byte) port);
        MemorySegment.copy(ip, 0, sa, JAVA_BYTE, ip.length == 16 ? 8 : 4, ip.length);
        return sa;
    }

    static int sockaddrLength(int family) {
        return family == IpVersion.AF_INET6 ? SOCKADDR_IN6_SIZE : SocketCalls.SOCKADDR_IN_SIZE;
    }

    /** The sockaddr {@code connect(fd, ..., ...)} connects to: remote_ip:8080 in the script's socket family. */
    MemorySegment remoteSockaddr(Arena a) {
        return sockaddr(a, options.remoteSocketAddress(), SCRIPT_PORT, options.ipVersion().socketFamily());
    }

    // ---- the calls ----

    private SyscallResult socket(KernelCall c) {
        Syscall s = c.syscall();
        int family = options.ipVersion().socketFamily();
        int domain = s.arg(0) instanceof Value.Int v ? (int) v.value() : family;
        if (domain != family) {
            throw KernelCall.bad(s, "the script runs over " + options.ipVersion() + ", whose sockets are "
                    + (family == IpVersion.AF_INET ? "AF_INET" : "AF_INET6") + ", got domain " + domain
                    + " (write ... to get the version's family)");
        }
        int type = (int) s.intArg(1);
        // A protocol written ... is the default for the type (0: TCP for SOCK_STREAM).
        int protocol = s.arg(2) instanceof Value.Int v ? (int) v.value() : 0;
        return newFd(c, () -> SocketCalls.socket(domain, type, protocol));
    }

    private SyscallResult bind(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        if (!(s.arg(1) instanceof Value.Ellipsis)) {
            throw KernelCall.bad(s, "the address must be written ... (the target binds local_ip:" + SCRIPT_PORT
                    + " as packetdrill does), got " + s.arg(1));
        }
        int family = options.ipVersion().socketFamily();
        MemorySegment sa = sockaddr(a, options.localSocketAddress(), SCRIPT_PORT, family);
        return simple(c, () -> SocketCalls.bind(fd(s, 0), sa, sockaddrLength(family)));
    }

    private SyscallResult connect(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        MemorySegment sa;
        int len;
        if (s.arg(1) instanceof Value.Ellipsis) {
            sa = remoteSockaddr(a);
            len = sockaddrLength(options.ipVersion().socketFamily());
        } else if (s.arg(1) instanceof Value.Int v && v.value() == Libc.AF_UNSPEC) {
            // connect(fd, AF_UNSPEC, ...): dissolve the association, as Linux allows.
            sa = sockaddr(a, new byte[4], 0, Libc.AF_UNSPEC);
            len = SocketCalls.SOCKADDR_IN_SIZE;
        } else {
            throw KernelCall.bad(s, "the address must be ... (remote_ip:" + SCRIPT_PORT + ") or AF_UNSPEC, got "
                    + s.arg(1));
        }
        return simple(c, () -> SocketCalls.connect(fd(s, 0), sa, len));
    }

    private SyscallResult accept(KernelCall c, int flags) {
        Syscall s = c.syscall();
        return newFd(c, () -> SocketCalls.accept4(fd(s, 0), MemorySegment.NULL, MemorySegment.NULL, flags));
    }

    private SyscallResult close(KernelCall c) {
        Syscall s = c.syscall();
        long scriptFd = s.intArg(0);
        int k = fds.kernelFd(scriptFd);
        SyscallResult r = simple(c, () -> SocketCalls.close(k));
        if (k != FdTable.NO_FD) {
            fds.remove(scriptFd);
        }
        return r;
    }

    /** ioctl(fd, SIOCINQ / SIOCOUTQ / FIONREAD ..., [n]): requests that write one int. */
    private SyscallResult ioctl(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        long request = s.intArg(1);
        MemorySegment v = a.allocate(JAVA_INT);
        SyscallResult r = simple(c, () -> SocketCalls.ioctl(fd(s, 0), request, v));
        if (r.ret() < 0) {
            return r;
        }
        return new SyscallResult(r.ret(), 0, Map.of(2, new Value.Array(List.of(Value.of(v.get(JAVA_INT, 0))))));
    }

    // ---- socket options ----

    private SyscallResult setsockopt(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        int level = (int) s.intArg(1);
        int name = (int) s.intArg(2);
        Value v = s.arg(3);
        MemorySegment buf;
        int natural;
        switch (v) {
            case Value.Int i -> {
                buf = a.allocate(8, 8);
                buf.set(JAVA_INT, 0, (int) i.value());
                natural = 4;
            }
            case Value.Array arr when arr.elements().size() == 1 && arr.elements().getFirst() instanceof Value.Int i -> {
                buf = a.allocate(8, 8);
                buf.set(JAVA_INT, 0, (int) i.value());
                natural = 4;
            }
            case Value.Str str -> {
                byte[] b = str.value().getBytes(StandardCharsets.US_ASCII);
                buf = a.allocate(Math.max(b.length + 1, CA_NAME_MAX), 8);
                MemorySegment.copy(b, 0, buf, JAVA_BYTE, 0, b.length);
                natural = b.length;
            }
            case Value.Struct st -> {
                buf = a.allocate(64, 8);
                natural = writeStruct(s, st, buf);
            }
            default -> throw KernelCall.bad(s, "cannot pass option value " + v
                    + " (give [n], n, \"name\" or a struct such as {l_onoff=1, l_linger=0})");
        }
        int len = s.arg(4) instanceof Value.Int l ? (int) l.value() : natural;
        if (len < 0 || len > buf.byteSize()) {
            throw KernelCall.bad(s, "option length " + len + " does not fit the value " + v);
        }
        return simple(c, () -> SocketCalls.setsockopt(fd(s, 0), level, name, buf, len));
    }

    /** A struct option value: timeval (tv_sec, tv_usec: two longs) or ints in script order (linger). */
    private static int writeStruct(Syscall s, Value.Struct st, MemorySegment buf) {
        if (st.fields().containsKey("tv_sec") || st.fields().containsKey("tv_usec")) {
            buf.set(JAVA_LONG, 0, intField(s, st, "tv_sec"));
            buf.set(JAVA_LONG, 8, intField(s, st, "tv_usec"));
            return 16;
        }
        int off = 0;
        for (var e : st.fields().entrySet()) {
            if (!(e.getValue() instanceof Value.Int i)) {
                throw KernelCall.bad(s, "struct field " + e.getKey() + " must be an integer, got " + e.getValue());
            }
            if (off + 4 > buf.byteSize()) {
                throw KernelCall.bad(s, "struct " + st + " is too large");
            }
            buf.set(JAVA_INT, off, (int) i.value());
            off += 4;
        }
        return off;
    }

    private static long intField(Syscall s, Value.Struct st, String name) {
        Value v = st.fields().get(name);
        if (v == null) {
            return 0;
        }
        if (v instanceof Value.Int i) {
            return i.value();
        }
        throw KernelCall.bad(s, "struct field " + name + " must be an integer, got " + v);
    }

    private SyscallResult getsockopt(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        int level = (int) s.intArg(1);
        int name = (int) s.intArg(2);
        Value v = s.arg(3);
        boolean tcpInfo = level == IPPROTO_TCP && name == SocketCalls.TCP_INFO;
        int asked;
        if (s.arg(4) instanceof Value.Array arr && arr.elements().size() == 1
                && arr.elements().getFirst() instanceof Value.Int l) {
            // The script's length is what it expects back; packetdrill passes it in as the buffer's size too.
            asked = (int) l.value();
        } else if (tcpInfo) {
            asked = TcpInfoLayout.BUFFER_SIZE;
        } else if (v instanceof Value.Str) {
            asked = CA_NAME_MAX;
        } else if (v instanceof Value.Struct st) {
            asked = st.fields().containsKey("tv_sec") || st.fields().containsKey("tv_usec") ? 16
                    : 4 * st.fields().size();
        } else {
            asked = 4;
        }
        if (asked < 0 || asked > 65536) {
            throw KernelCall.bad(s, "option length " + asked + " is out of range");
        }
        MemorySegment buf = a.allocate(Math.max(asked, TcpInfoLayout.BUFFER_SIZE), 8);
        MemorySegment len = a.allocate(JAVA_INT);
        len.set(JAVA_INT, 0, asked);
        SyscallResult r = simple(c, () -> SocketCalls.getsockopt(fd(s, 0), level, name, buf, len));
        if (r.ret() < 0) {
            return r;
        }
        int got = len.get(JAVA_INT, 0);
        Map<Integer, Value> out = new LinkedHashMap<>();
        out.put(3, optionValue(s, v, buf, got, tcpInfo));
        out.put(4, new Value.Array(List.of(Value.of(got))));
        return new SyscallResult(r.ret(), 0, out);
    }

    /** The option value read back, shaped as the script wrote its expectation. */
    private static Value optionValue(Syscall s, Value shape, MemorySegment buf, int got, boolean tcpInfo) {
        if (shape instanceof Value.Str) {
            int n = 0;
            while (n < got && buf.get(JAVA_BYTE, n) != 0) {
                n++;
            }
            return new Value.Str(new String(buf.asSlice(0, n).toArray(JAVA_BYTE), StandardCharsets.US_ASCII));
        }
        if (shape instanceof Value.Struct st) {
            LinkedHashMap<String, Value> fields = new LinkedHashMap<>();
            if (tcpInfo) {
                Map<String, Long> info = TcpInfoLayout.decode(buf, got);
                for (String f : st.fields().keySet()) {
                    Long x = info.get(f);
                    if (x == null) {
                        throw KernelCall.bad(s, "tcp_info of this kernel (" + got + " bytes) has no field " + f);
                    }
                    fields.put(f, Value.of(x));
                }
            } else if (st.fields().containsKey("tv_sec") || st.fields().containsKey("tv_usec")) {
                fields.put("tv_sec", Value.of(got >= 8 ? buf.get(JAVA_LONG, 0) : 0));
                fields.put("tv_usec", Value.of(got >= 16 ? buf.get(JAVA_LONG, 8) : 0));
            } else {
                int off = 0;
                for (String f : st.fields().keySet()) {
                    fields.put(f, Value.of(off + 4 <= got ? buf.get(JAVA_INT, off) : 0));
                    off += 4;
                }
            }
            return new Value.Struct(fields);
        }
        long x = got >= 4 ? buf.get(JAVA_INT, 0) : got >= 1 ? buf.get(JAVA_BYTE, 0) & 0xff : 0;
        return new Value.Array(List.of(Value.of(x)));
    }

    // ---- sendmsg / recvmsg ----

    /**
     * {@code sendmsg(fd, {msg_name(...)=..., msg_iov(1)=[{iov_base=..., iov_len=N}], msg_flags=0}, flags)}: one
     * zero-filled buffer per iovec; recvmsg gives the message struct back with the msg_flags the kernel set.
     */
    private SyscallResult message(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        boolean send = s.name().equals("sendmsg");
        if (!(s.arg(1) instanceof Value.Struct msg)) {
            throw KernelCall.bad(s, "the message must be a struct {msg_iov(N)=[{iov_base=..., iov_len=N}], ...}, got "
                    + s.arg(1));
        }
        Value control = msg.fields().get("msg_control");
        if (control != null && !(control instanceof Value.Ellipsis)) {
            throw KernelCall.bad(s, "msg_control (ancillary data) is not supported by the kernel target");
        }
        List<Long> lengths = new ArrayList<>();
        Value iov = msg.fields().get("msg_iov");
        if (iov instanceof Value.Array arr) {
            for (Value e : arr.elements()) {
                if (!(e instanceof Value.Struct io) || !(io.fields().get("iov_len") instanceof Value.Int l)
                        || l.value() < 0) {
                    throw KernelCall.bad(s, "each iovec must be {iov_base=..., iov_len=N}, got " + e);
                }
                lengths.add(l.value());
            }
        } else if (iov != null && !(iov instanceof Value.Ellipsis)) {
            throw KernelCall.bad(s, "msg_iov must be an array of iovecs, got " + iov);
        }
        MemorySegment iovecs = a.allocate((long) SocketCalls.IOVEC_SIZE * Math.max(1, lengths.size()), 8);
        for (int i = 0; i < lengths.size(); i++) {
            long n = lengths.get(i);
            iovecs.set(ADDRESS, (long) i * SocketCalls.IOVEC_SIZE, a.allocate(Math.max(1, n)));
            iovecs.set(JAVA_LONG, (long) i * SocketCalls.IOVEC_SIZE + 8, n);
        }
        MemorySegment hdr = a.allocate(SocketCalls.MSGHDR_SIZE, 8);
        hdr.set(ADDRESS, 16, iovecs);
        hdr.set(JAVA_LONG, 24, lengths.size());
        int flags = flags(s, 2);
        SyscallResult r = simple(c, () -> send ? SocketCalls.sendmsg(fd(s, 0), hdr, flags)
                : SocketCalls.recvmsg(fd(s, 0), hdr, flags));
        if (send || r.ret() < 0 || !msg.fields().containsKey("msg_flags")) {
            return r;
        }
        LinkedHashMap<String, Value> back = new LinkedHashMap<>(msg.fields());
        back.put("msg_flags", Value.of(hdr.get(JAVA_INT, 48)));
        return new SyscallResult(r.ret(), 0, Map.of(1, new Value.Struct(back)));
    }

    // ---- poll / epoll ----

    private SyscallResult poll(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        List<Value.Struct> in = structs(s, 0, "a pollfd array [{fd=3, events=POLLIN}]");
        long nfds = s.arg(1) instanceof Value.Int n ? n.value() : in.size();
        if (nfds != in.size()) {
            throw KernelCall.bad(s, "nfds " + nfds + " but " + in.size() + " pollfd structs given");
        }
        int timeout = (int) s.intArg(2);
        MemorySegment pfds = a.allocate((long) SocketCalls.POLLFD_SIZE * Math.max(1, in.size()), 8);
        for (int i = 0; i < in.size(); i++) {
            Value.Struct p = in.get(i);
            long off = (long) i * SocketCalls.POLLFD_SIZE;
            pfds.set(JAVA_INT, off, fds.kernelFd(intField(s, p, "fd")));
            pfds.set(JAVA_SHORT, off + 4, (short) intField(s, p, "events"));
        }
        SyscallResult r = simple(c, () -> SocketCalls.poll(pfds, in.size(), timeout));
        if (r.ret() < 0) {
            return r;
        }
        List<Value> out = new ArrayList<>();
        for (int i = 0; i < in.size(); i++) {
            LinkedHashMap<String, Value> f = new LinkedHashMap<>(in.get(i).fields());
            f.put("revents", Value.of(pfds.get(JAVA_SHORT, (long) i * SocketCalls.POLLFD_SIZE + 6) & 0xffff));
            out.add(new Value.Struct(f));
        }
        return new SyscallResult(r.ret(), 0, Map.of(0, new Value.Array(out)));
    }

    /** The structs of argument {@code i}: an array of them, or one written without brackets. */
    private static List<Value.Struct> structs(Syscall s, int i, String what) {
        Value v = s.arg(i);
        List<Value.Struct> out = new ArrayList<>();
        if (v instanceof Value.Struct st) {
            out.add(st);
        } else if (v instanceof Value.Array arr) {
            for (Value e : arr.elements()) {
                if (!(e instanceof Value.Struct st)) {
                    throw KernelCall.bad(s, "argument " + (i + 1) + " must be " + what + ", got " + v);
                }
                out.add(st);
            }
        } else {
            throw KernelCall.bad(s, "argument " + (i + 1) + " must be " + what + ", got " + v);
        }
        return out;
    }

    /** The name under which an epoll event's data is written in the script: fd, u32, u64, ptr or data. */
    private static String dataField(Value.Struct st) {
        for (String f : st.fields().keySet()) {
            if (!f.equals("events")) {
                return f;
            }
        }
        return "fd";
    }

    private SyscallResult epollCtl(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        int op = (int) s.intArg(1);
        MemorySegment ev = MemorySegment.NULL;
        if (s.arg(3) instanceof Value.Struct st) {
            ev = a.allocate(SocketCalls.EPOLL_EVENT_SIZE, 8);
            ev.set(JAVA_INT, 0, (int) intField(s, st, "events"));
            // The data word carries what the script wrote (its own fd number for fd=3), so epoll_wait hands the
            // script's number back without translation.
            ev.set(JAVA_LONG_UNALIGNED, 4, intField(s, st, dataField(st)));
        } else if (!(s.arg(3) instanceof Value.Ellipsis)) {
            throw KernelCall.bad(s, "the event must be {events=..., fd=N} or ..., got " + s.arg(3));
        }
        MemorySegment event = ev;
        return simple(c, () -> SocketCalls.epollCtl(fd(s, 0), op, fd(s, 2), event));
    }

    private SyscallResult epollWait(KernelCall c, Arena a) {
        Syscall s = c.syscall();
        int max = (int) s.intArg(2);
        int timeout = (int) s.intArg(3);
        if (max <= 0 || max > 4096) {
            throw KernelCall.bad(s, "maxevents " + max + " is out of range (1..4096)");
        }
        MemorySegment evs = a.allocate((long) SocketCalls.EPOLL_EVENT_SIZE * max, 8);
        SyscallResult r = simple(c, () -> SocketCalls.epollWait(fd(s, 0), evs, max, timeout));
        if (r.ret() < 0) {
            return r;
        }
        List<Value.Struct> shapes = s.arg(1) instanceof Value.Ellipsis ? List.of()
                : structs(s, 1, "an event {events=..., fd=N} or an array of them");
        // As packetdrill compares them: the script's events against the buffer's first entries, which the kernel
        // left zeroed where it returned fewer events ({events=0, ptr=0} matches a call that returned 0).
        int shown = Math.min(max, Math.max((int) r.ret(), Math.max(1, shapes.size())));
        List<Value> out = new ArrayList<>();
        for (int i = 0; i < shown; i++) {
            long off = (long) i * SocketCalls.EPOLL_EVENT_SIZE;
            String data = i < shapes.size() ? dataField(shapes.get(i)) : "fd";
            LinkedHashMap<String, Value> f = new LinkedHashMap<>();
            f.put("events", Value.of(evs.get(JAVA_INT_UNALIGNED, off) & 0xffffffffL));
            f.put(data, Value.of(evs.get(JAVA_LONG_UNALIGNED, off + 4)));
            out.add(new Value.Struct(f));
        }
        Value back = s.arg(1) instanceof Value.Struct ? out.getFirst() : new Value.Array(out);
        return new SyscallResult(r.ret(), 0, Map.of(1, back));
    }
}
