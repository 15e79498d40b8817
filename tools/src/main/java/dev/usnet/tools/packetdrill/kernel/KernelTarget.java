package dev.usnet.tools.packetdrill.kernel;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SocketCalls;
import dev.usnet.tools.packetdrill.PendingCall;
import dev.usnet.tools.packetdrill.ScriptOptions;
import dev.usnet.tools.packetdrill.Sniffed;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.Target;
import dev.usnet.tools.packetdrill.TargetException;
import dev.usnet.tools.packetdrill.Value;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The Linux kernel as a packetdrill target: a fresh network namespace ({@code usnet-pd-<pid>-<n>}) holding a
 * layer-3 TUN named {@code tun0} with the script's addresses, MTU and default route. The runner plays the remote
 * host by writing IP packets to the TUN fd ({@link #inject}) and sees what the kernel sends through a packet socket
 * on tun0 that gives each packet the kernel's own transmit time stamp ({@link #sniff}, {@link TunSniffer}). System calls are made by platform threads that
 * entered the namespace; a call that the kernel puts to sleep comes back as a pending call that completes when the
 * kernel returns. Time is real time; script time 0 is {@link #start}.
 *
 * <p>Script fds are mapped to kernel fds ({@link FdTable}): the script's first socket is fd 3 even though the JVM
 * holds many fds already. Needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root). Never touches anything outside its
 * namespace; {@link #close} deletes the namespace by name, also from a shutdown hook and when {@link #open} fails
 * halfway.
 */
public final class KernelTarget implements Target {
    /** How long a call that neither returns nor sleeps in the kernel is waited for before it is handed back pending. */
    private static final long CALL_SETTLE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A call must be seen asleep in the kernel for this long before it counts as blocked (a lock is a short sleep). */
    private static final long BLOCKED_CONFIRM_NANOS = 200_000;
    private static final long CALL_CHECK_NANOS = 50_000;
    /** How long warm-up waits for a socket() that has not returned before it calls the namespace broken. */
    private static final long WARM_UP_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** Calls in flight at once: blocked ones keep their thread. More than this is a script error. */
    private static final int MAX_CALL_THREADS = 16;
    private static final int INJECT_BUFFER = 65536;

    private final ScriptClock clock = new ScriptClock();
    private final FdTable fds = new FdTable();
    private ScriptOptions options;
    private TestNamespace namespace;
    private ExecutorService control;
    private ThreadPoolExecutor callThreads;
    private TunDevice tun;
    private TunSniffer sniffer;
    private KernelSyscalls syscalls;
    private Arena arena;
    private MemorySegment injectBuffer;
    private boolean closed;

    public KernelTarget() {}

    @Override
    public synchronized void open(ScriptOptions o) {
        if (namespace != null || closed) {
            throw new IllegalStateException("a KernelTarget opens once");
        }
        if (!Files.exists(Path.of("/dev/net/tun"))) {
            throw new TargetException("the kernel target needs /dev/net/tun: load the tun module (modprobe tun)");
        }
        options = o;
        try {
            namespace = TestNamespace.create();
            control = Executors.newSingleThreadExecutor(namespace.threadFactory("control"));
            tun = onControl(() -> {
                configureIpv6(o.ipVersion().ipv6Wire());
                return TunDevice.createHere(o, namespace.name());
            });
            sniffer = onControl(() -> TunSniffer.createHere(tun, clock));
            sniffer.start();
            arena = Arena.ofShared();
            injectBuffer = arena.allocate(INJECT_BUFFER, 8);
            syscalls = new KernelSyscalls(o, fds);
            callThreads = new ThreadPoolExecutor(1, MAX_CALL_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                    namespace.threadFactory("call"));
            callThreads.prestartAllCoreThreads();
            warmUp();
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /**
     * Set before tun0 exists, so it inherits "default". Over IPv4 (ipv4-mapped-ipv6 included: its packets are
     * IPv4) IPv6 is off: with it on, tun0 would send router solicitations and MLD reports of its own. Over IPv6 it
     * is on, with duplicate address detection off (the address is usable at once; no one else is on the link) and
     * no router solicitations; what MLD and neighbour discovery still send the runner skips.
     */
    private static void configureIpv6(boolean ipv6) {
        if (!Files.exists(Path.of("/proc/sys/net/ipv6/conf/default/disable_ipv6"))) {
            if (ipv6) {
                throw new TargetException("--ip-version ipv6 needs IPv6 in the kernel (no /proc/sys/net/ipv6)");
            }
            return;
        }
        if (ipv6) {
            NamespaceSysctl.write("net.ipv6.conf.default.accept_dad", "0");
            NamespaceSysctl.write("net.ipv6.conf.default.router_solicitations", "0");
            NamespaceSysctl.write("net.ipv6.conf.default.accept_ra", "0");
        }
        NamespaceSysctl.write("net.ipv6.conf.all.disable_ipv6", ipv6 ? "0" : "1");
        NamespaceSysctl.write("net.ipv6.conf.default.disable_ipv6", ipv6 ? "0" : "1");
    }

    /**
     * Makes the first events of a script as quick as the later ones: the first use of each native binding, of a new
     * call thread and of the code paths here costs milliseconds (class loading, interpreted code), which a script's
     * time line would see. Goes through the same paths a script does: calls on a call thread and inline, tcp_info,
     * an injected packet (an IPv4 header with a wrong checksum, which the kernel drops without a word) and a sniff.
     * Leaves the fd table empty, so the script's first socket is still fd 3.
     */
    private void warmUp() {
        for (int round = 0; round < 3; round++) {
            PendingCall s = call(new Syscall("socket", List.of(Value.ELLIPSIS, Value.of(SocketCalls.SOCK_STREAM),
                    Value.of(SocketCalls.IPPROTO_TCP)), 0));
            if (!s.isDone() && s instanceof KernelCall k) {
                // socket() never blocks: a first call on a new thread of a loaded machine (class loading, page faults)
                // can look asleep long enough to pass for blocked. Give it time before calling it stuck.
                k.awaitUntilNanoTime(System.nanoTime() + WARM_UP_WAIT_NANOS);
            }
            if (!s.isDone() || s.result().ret() < 0) {
                throw new TargetException("the kernel target cannot create a socket in " + namespace.name()
                        + (s.isDone() ? ": " + Errno.name(s.result().errno()) : ": socket() does not return"));
            }
            Value fd = Value.of(s.result().ret());
            call(new Syscall("setsockopt", List.of(fd, Value.of(Libc.SOL_SOCKET), Value.of(Libc.SO_RCVBUF),
                    new Value.Array(List.of(Value.of(65536))), Value.of(4)), 0));
            call(new Syscall("getsockopt", List.of(fd, Value.of(Libc.SOL_SOCKET), Value.of(Libc.SO_RCVBUF),
                    new Value.Array(List.of(Value.of(0))), new Value.Array(List.of(Value.of(4)))), 0));
            call(new Syscall("fcntl", List.of(fd, Value.of(Libc.F_GETFL)), 0));
            tcpInfo((int) s.result().ret());
            call(new Syscall("close", List.of(fd), 0));
            injectDropped();
            sniffer.next(clock.nowMicros());
        }
        if (fds.kernelFd(3) != FdTable.NO_FD) {
            throw new IllegalStateException("warm-up left fd 3 open");
        }
    }

    /** 20 bytes of IPv4 header (protocol 253, for experiments) whose checksum is wrong: ip_rcv drops it silently. */
    private void injectDropped() {
        byte[] p = new byte[20];
        p[0] = 0x45;
        p[3] = 20;
        p[8] = 64;
        p[9] = (byte) 253;
        p[10] = (byte) 0xde;
        p[11] = (byte) 0xad;
        System.arraycopy(Addresses.bytes(options.remoteIp()), 0, p, 12, 4);
        System.arraycopy(Addresses.bytes(options.localIp()), 0, p, 16, 4);
        inject(p);
    }

    /** Runs {@code task} on the control thread (inside the namespace) and waits for it. */
    private <T> T onControl(Callable<T> task) {
        try {
            return control.submit(task).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new TargetException(String.valueOf(e.getCause()), e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new TargetException("the kernel target's control thread did not answer within 60 s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TargetException("interrupted");
        }
    }

    private void requireOpen() {
        if (namespace == null || closed) {
            throw new IllegalStateException("the kernel target is not open");
        }
    }

    /** The namespace's name ({@code usnet-pd-<pid>-<n>}), for messages and tests. */
    public String namespaceName() {
        requireOpen();
        return namespace.name();
    }

    @Override
    public void sysctl(String key, String value) {
        requireOpen();
        onControl(() -> {
            NamespaceSysctl.write(key, value);
            return null;
        });
    }

    @Override
    public void setTransmitQueueLimit(int packets) {
        requireOpen();
        if (packets < 0) {
            throw new TargetException("a transmit queue limit cannot be negative: " + packets);
        }
        NamespaceShell.Result r = NamespaceShell.run(namespace.name(), null,
                List.of("tc", "qdisc", "replace", "dev", TunDevice.NAME, "root", "pfifo", "limit",
                        String.valueOf(packets)));
        if (r.exit() != 0) {
            throw new TargetException("tc qdisc replace dev tun0 root pfifo limit " + packets + " failed: "
                    + r.output().trim());
        }
    }

    @Override
    public void start() {
        requireOpen();
        clock.start();
    }

    @Override
    public long nowMicros() {
        return clock.nowMicros();
    }

    @Override
    public void advanceTo(long micros) {
        clock.sleepUntil(micros);
    }

    @Override
    public synchronized void inject(byte[] ipPacket) {
        requireOpen();
        if (ipPacket.length == 0 || ipPacket.length > INJECT_BUFFER) {
            throw new TargetException("cannot inject a packet of " + ipPacket.length + " bytes");
        }
        MemorySegment.copy(ipPacket, 0, injectBuffer, JAVA_BYTE, 0, ipPacket.length);
        tun.inject(injectBuffer, ipPacket.length);
    }

    @Override
    public Sniffed sniff(long deadlineMicros) {
        requireOpen();
        return sniffer.next(deadlineMicros);
    }

    /**
     * Makes the call and returns once it returned, or once the kernel has put it to sleep (then the call is pending
     * and completes when the kernel wakes it). Calls that cannot sleep run on the caller's thread; others on a thread
     * in the namespace, except that what they send (a connect's SYN, a write's data) is sent from the caller's thread
     * first ({@link KernelSyscalls#begin}), so packets leave at the script's moment even when a call thread is slow
     * to get the CPU.
     */
    @Override
    public PendingCall call(Syscall call) {
        requireOpen();
        KernelCall c = new KernelCall(call, clock);
        if (syscalls.canRunInline(call)) {
            // Made on the runner's own thread: no hand-over to a call thread, whose wake-up on a busy machine can
            // take milliseconds. Only calls that need no namespace (an existing fd says which) and cannot sleep.
            syscalls.run(c);
            return c;
        }
        Runnable rest = syscalls.begin(c);
        if (rest == null) {
            return c;
        }
        try {
            callThreads.execute(rest);
        } catch (RejectedExecutionException e) {
            throw new TargetException("line " + call.line() + ": " + call.name() + ": " + MAX_CALL_THREADS
                    + " system calls are already blocked; the kernel target makes at most that many at once");
        }
        long begin = System.nanoTime();
        long asleepSince = -1;
        while (true) {
            long now = System.nanoTime();
            if (c.awaitUntilNanoTime(now + CALL_CHECK_NANOS)) {
                return c;
            }
            now = System.nanoTime();
            if (c.looksBlocked()) {
                if (asleepSince < 0) {
                    asleepSince = now;
                } else if (now - asleepSince >= BLOCKED_CONFIRM_NANOS) {
                    return c;
                }
            } else {
                asleepSince = -1;
            }
            if (now - begin > CALL_SETTLE_NANOS) {
                return c;
            }
        }
    }

    @Override
    public boolean awaitCall(PendingCall call, long deadlineMicros) {
        if (!(call instanceof KernelCall c)) {
            throw new IllegalArgumentException("not a call of this target: " + call);
        }
        return c.awaitUntilNanoTime(clock.nanoTimeAt(deadlineMicros));
    }

    @Override
    public Map<String, Long> tcpInfo(int fd) {
        requireOpen();
        int k = fds.kernelFd(fd);
        if (k == FdTable.NO_FD) {
            throw new TargetException("tcp_info: fd " + fd + " is not an open socket of the script");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment info = a.allocate(TcpInfoLayout.BUFFER_SIZE, 8);
            MemorySegment len = a.allocate(JAVA_INT);
            len.set(JAVA_INT, 0, TcpInfoLayout.BUFFER_SIZE);
            if (SocketCalls.getsockopt(k, SocketCalls.IPPROTO_TCP, SocketCalls.TCP_INFO, info, len) < 0) {
                throw new TargetException("getsockopt(" + fd + ", IPPROTO_TCP, TCP_INFO) failed: "
                        + Errno.name(SocketCalls.errno()));
            }
            return TcpInfoLayout.decode(info, len.get(JAVA_INT, 0));
        }
    }

    @Override
    public String command(String shellCommand, int line) {
        requireOpen();
        return onControl(() -> NamespaceShell.scriptHere(namespace.name(), options.scriptDir(), shellCommand, line));
    }

    @Override
    public String describe() {
        return "kernel " + kernelRelease();
    }

    /** {@code uname -r}. */
    static String kernelRelease() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim();
        } catch (IOException e) {
            return "(unknown release)";
        }
    }

    /** Outgoing packets tun0 saw that were neither IPv4 nor IPv6, dropped (should be none). */
    long nonIpv4Dropped() {
        return sniffer == null ? 0 : sniffer.otherDropped();
    }

    /** Sniffed packets timed by their read, not by the kernel's stamp (should be none). */
    long unstampedPackets() {
        return sniffer == null ? 0 : sniffer.unstamped();
    }

    /**
     * Stops the reader, wakes and ends blocked calls (shutdown on every socket makes the kernel return from accept,
     * connect, read and poll on it), closes every fd, removes tun0 and deletes the namespace by name. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (sniffer != null) {
                sniffer.close();
            }
            for (int k : fds.drain()) {
                SocketCalls.shutdown(k, SocketCalls.SHUT_RDWR);
                SocketCalls.close(k);
            }
            if (callThreads != null) {
                callThreads.shutdownNow();
                awaitQuietly(callThreads);
            }
            if (control != null) {
                control.shutdownNow();
                awaitQuietly(control);
            }
            if (tun != null) {
                tun.close();
            }
            if (arena != null) {
                arena.close();
            }
        } finally {
            if (namespace != null) {
                namespace.close();
            }
        }
    }

    private static void awaitQuietly(ExecutorService e) {
        try {
            e.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }
}
