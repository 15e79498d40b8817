package dev.usnet.tools.packetdrill.usnet;

import dev.usnet.core.route.Route;
import dev.usnet.core.route.Route6;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpSysctl;
import dev.usnet.tcp.cc.KernelPreset;
import dev.usnet.tools.packetdrill.PendingCall;
import dev.usnet.tools.packetdrill.ScriptOptions;
import dev.usnet.tools.packetdrill.Sniffed;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.Target;
import dev.usnet.tools.packetdrill.TargetException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The packetdrill target that runs a script against usnet: one usnet namespace in virtual time with the layer-3 test
 * device {@code tun0} ({@code local_ip/prefix}, a default route via {@code gateway_ip}, the script's MTU), sockets
 * made by the script's system calls ({@link SocketCalls}), and the namespace set up as this machine's kernel sets up
 * a fresh network namespace ({@link #KERNEL_DEFAULTS}), then the preset and the {@code --set} knobs.
 *
 * <p>The clock moves only in {@link #advanceTo}, {@link #sniff} and {@link #awaitCall}, one instant of virtual
 * time at a time: after each, every blocked system call is tried again, so a call returns, and a packet is stamped,
 * at the instant it happened. Two runs of a script give the same packets at the same times.
 */
public final class UsnetTarget implements Target {
    /** usnet.tcp.kernel when the script's options name none: the newest Linux usnet models (the kernel here is 6.x). */
    static final String DEFAULT_PRESET = KernelPreset.values()[KernelPreset.values().length - 1].label();

    /**
     * What this machine's kernel (Linux 6.x, HZ=250) gives a fresh network namespace, where usnet's knob defaults
     * (chosen for Linux 3.18-4.3) differ: {@code ip netns exec X sysctl ...} there. tcp_rmem's maximum gives window
     * scale 10, as the kernel's SYN and SYN-ACK carry. The kernel's default congestion control here is bbr, which
     * usnet does not have: usnet's default (cubic) stays.
     */
    static final Map<String, String> KERNEL_DEFAULTS = kernelDefaults();

    private static Map<String, String> kernelDefaults() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("usnet.hz", "250");
        m.put("net.ipv4.tcp_rmem", "4096 131072 33554432");
        m.put("net.ipv4.tcp_wmem", "4096 16384 4194304");
        m.put("net.ipv4.tcp_fack", "0");
        m.put("net.ipv4.tcp_max_syn_backlog", "2048");
        m.put("net.ipv4.tcp_limit_output_bytes", "4194304");
        // Linux 4.20+ offers the whole initial space (64240 on a SYN, 65160 on a SYN-ACK with timestamps here).
        m.put("usnet.tcp.init_rwnd", "space");
        m.put("net.ipv4.tcp_syn_linear_timeouts", "4");
        return java.util.Collections.unmodifiableMap(m);
    }

    /** The namespace's seed: fixed, so initial sequence numbers and timestamps repeat from run to run. */
    private static final long SEED = 0x7061_636b_6574L;
    /** Virtual time starts here rather than at 0, which some timers read as "never". */
    private static final long CLOCK_START_NANOS = 1_000_000_000L;

    private VirtualScheduler scheduler;
    private NetStack stack;
    private TunDevice tun;
    private Sysctls sysctls;
    private SocketCalls calls;
    private ShellCommands shell;
    private final FdTable fds = new FdTable();
    private final List<BlockedCall> blocked = new ArrayList<>();
    private long startNanos = CLOCK_START_NANOS;
    private String preset;

    public UsnetTarget() {
    }

    @Override
    public void open(ScriptOptions options) {
        if (stack != null) {
            throw new IllegalStateException("the usnet target is already open");
        }
        scheduler = new VirtualScheduler(CLOCK_START_NANOS);
        stack = new NetStack("packetdrill", scheduler, SEED);
        try {
            build(options);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private void build(ScriptOptions options) {
        var knobs = stack.knobs();
        KERNEL_DEFAULTS.forEach(knobs::set);
        preset = options.preset() == null || options.preset().isEmpty() ? DEFAULT_PRESET : options.preset();
        setKnob(TcpSysctl.KERNEL.key(), preset, "preset");
        SocketOptions socketOptions = new SocketOptions(knobs);
        sysctls = new Sysctls(knobs, socketOptions.limits);
        if (options.knobs() != null) {
            // --set takes usnet knobs and Linux sysctls alike, as a script's sysctl lines do.
            options.knobs().forEach((k, v) -> {
                try {
                    sysctls.set(k, v);
                } catch (TargetException e) {
                    throw new TargetException("--set " + k + "=" + v + ": " + e.getMessage(), e);
                }
            });
        }
        Tcp tcp = Tcp.install(stack);
        if (options.ipv6() != null) {
            // usnet's namespaces start with IPv6 off (disable_ipv6 1) until something gives them an address; the
            // kernel target's namespace has it on. Before tun0 exists, so tun0 inherits "default".
            setKnob("net.ipv6.conf.all.disable_ipv6", "0", "--ip-version ipv6");
            setKnob("net.ipv6.conf.default.disable_ipv6", "0", "--ip-version ipv6");
        }
        tun = new TunDevice("tun0");
        stack.register(tun);
        try {
            tun.setMtu(options.mtu());
        } catch (IllegalArgumentException e) {
            throw new TargetException("--mtu=" + options.mtu() + ": " + e.getMessage(), e);
        }
        tun.setUp(true);
        Ipv6Addr local6 = null;
        Ipv6Addr remote6 = null;
        if (options.ipv6() != null) {
            local6 = ipv6Addr(options.ipv6().local());
            remote6 = ipv6Addr(options.ipv6().remote());
            try {
                // nodad: usable at once, as the kernel target's address (no one else is on the link).
                stack.ipv6().addAddress(tun, local6, options.ipv6().prefixLength(), true);
            } catch (IllegalArgumentException | IllegalStateException e) {
                throw new TargetException("--local_ip: " + e.getMessage(), e);
            }
            stack.ipv6().fib().add(new Route6(Ipv6Addr.ANY, 0, RouteType.UNICAST,
                    ipv6Addr(options.ipv6().gateway()), tun, Route6.METRIC_USER, false));
        } else {
            try {
                stack.devinet().add(tun, options.localIp(), options.prefixLength());
            } catch (IllegalArgumentException e) {
                throw new TargetException("--local_ip/--netmask_ip: " + e.getMessage(), e);
            }
            stack.routes().add(new Route(0, 0, RouteType.UNICAST, options.gatewayIp(), tun, 0, 0, false));
        }
        calls = new SocketCalls(tcp, fds, socketOptions, new SocketCalls.Clock() {
            @Override
            public long nowNanos() {
                return scheduler.nanoTime();
            }

            @Override
            public void wakeAt(long nanos) {
                // Nothing to do at that instant but to stop there: the blocked call sees its deadline passed.
                scheduler.schedule(() -> { }, Math.max(0, nanos - scheduler.nanoTime()));
            }
        }, options.localIp(), options.remoteIp(), options.ipVersion(), local6, remote6);
        shell = new ShellCommands(new ShellCommands.Effects() {
            @Override
            public void sysctl(String key, String value) {
                UsnetTarget.this.sysctl(key, value);
            }

            @Override
            public String readSysctl(String key) {
                try {
                    return stack.knobs().get(key);
                } catch (IllegalArgumentException e) {
                    throw new TargetException("sysctl " + key + ": " + e.getMessage(), e);
                }
            }

            @Override
            public void transmitQueueLimit(int packets) {
                setTransmitQueueLimit(packets);
            }
        }, options.scriptDir());
    }

    private static Ipv6Addr ipv6Addr(byte[] a) {
        return new Ipv6Addr(java.nio.ByteBuffer.wrap(a, 0, 8).getLong(), java.nio.ByteBuffer.wrap(a, 8, 8).getLong());
    }

    private void setKnob(String key, String value, String where) {
        try {
            stack.knobs().set(key, value);
        } catch (IllegalArgumentException e) {
            throw new TargetException(where + ": " + e.getMessage(), e);
        }
    }

    private void requireOpen() {
        if (stack == null) {
            throw new IllegalStateException("the usnet target is not open");
        }
    }

    @Override
    public void sysctl(String key, String value) {
        requireOpen();
        sysctls.set(key, value);
    }

    @Override
    public void setTransmitQueueLimit(int packets) {
        requireOpen();
        tun.setTransmitQueueLimit(packets < 0 ? Integer.MAX_VALUE : packets);
    }

    @Override
    public void start() {
        requireOpen();
        settle();
        startNanos = scheduler.nanoTime();
    }

    @Override
    public long nowMicros() {
        requireOpen();
        return (scheduler.nanoTime() - startNanos) / 1000L;
    }

    private long nanosAt(long micros) {
        return startNanos + micros * 1000L;
    }

    @Override
    public void advanceTo(long micros) {
        requireOpen();
        runTo(nanosAt(micros), () -> false);
    }

    @Override
    public void inject(byte[] ipPacket) {
        requireOpen();
        tun.receiveIp(ipPacket);
        settle();
    }

    @Override
    public Sniffed sniff(long deadlineMicros) {
        requireOpen();
        runTo(nanosAt(deadlineMicros), tun::hasSent);
        TunDevice.Sent s = tun.poll();
        return s == null ? null : new Sniffed(s.ipPacket(), (s.nanos() - startNanos) / 1000L);
    }

    @Override
    public PendingCall call(Syscall call) {
        requireOpen();
        BlockedCall b = new BlockedCall(call, calls.start(call));
        if (!b.retry(nowMicros())) {
            blocked.add(b);
        }
        settle();
        return b;
    }

    @Override
    public boolean awaitCall(PendingCall call, long deadlineMicros) {
        requireOpen();
        runTo(nanosAt(deadlineMicros), call::isDone);
        return call.isDone();
    }

    @Override
    public Map<String, Long> tcpInfo(int fd) {
        requireOpen();
        OpenFile f = fds.get(fd);
        if (!(f instanceof SocketFile s)) {
            throw new TargetException("TCP_INFO of fd " + fd + ": " + (f == null ? "no such descriptor" : "not a socket"));
        }
        if (s.listener != null) {
            return TcpInfoMap.listener(s.listener);
        }
        if (s.sock == null) {
            return TcpInfoMap.unconnected();
        }
        return TcpInfoMap.connection(s.sock, s.linuxState(), scheduler.nanoTime(), tun.mtu());
    }

    @Override
    public String command(String shellCommand, int line) {
        requireOpen();
        String out = shell.run(shellCommand, line);
        settle();
        return out;
    }

    @Override
    public String describe() {
        return "usnet (preset " + (preset != null ? preset : DEFAULT_PRESET) + ")";
    }

    /** Runs what is due at this instant and retries blocked calls until neither has anything left to do now. */
    private void settle() {
        long now = scheduler.nanoTime();
        do {
            scheduler.runUntil(now);
        } while (retryBlocked() || scheduler.nextEventTime() == now);
    }

    /** Tries every blocked call again, oldest first; true if any returned. */
    private boolean retryBlocked() {
        boolean any = false;
        long now = nowMicros();
        for (BlockedCall b : List.copyOf(blocked)) {
            if (b.retry(now)) {
                blocked.remove(b);
                any = true;
            }
        }
        return any;
    }

    /**
     * Lets virtual time run to {@code deadlineNanos} one instant at a time, stopping early at the first instant
     * after which {@code until} holds.
     */
    private void runTo(long deadlineNanos, BooleanSupplier until) {
        settle();
        while (!until.getAsBoolean()) {
            long next = scheduler.nextEventTime();
            if (next < 0 || next > deadlineNanos) {
                if (deadlineNanos > scheduler.nanoTime()) {
                    scheduler.runUntil(deadlineNanos);
                    settle();
                }
                return;
            }
            scheduler.runUntil(next);
            settle();
        }
    }

    @Override
    public void close() {
        if (stack == null) {
            return;
        }
        try {
            stack.close();
            // Let the receive backlog drain so every buffer goes back to the pool.
            scheduler.runFor(1);
        } finally {
            if (calls != null) {
                calls.close();
            }
            blocked.clear();
            stack = null;
        }
    }
}
