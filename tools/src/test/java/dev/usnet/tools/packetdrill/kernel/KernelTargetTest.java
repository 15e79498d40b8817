package dev.usnet.tools.packetdrill.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tap.HostCommand;
import dev.usnet.tools.packetdrill.PendingCall;
import dev.usnet.tools.packetdrill.ScriptOptions;
import dev.usnet.tools.packetdrill.Sniffed;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.SyscallResult;
import dev.usnet.tools.packetdrill.TargetException;
import dev.usnet.tools.packetdrill.Value;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel target against this machine's kernel: needs root and /dev/net/tun (skipped otherwise). Every test
 * checks that its namespace is gone afterwards; {@link #cleanUp} deletes any left by name, also after a failure.
 */
class KernelTargetTest {
    static final int LOCAL = 0xC6120001;   // 198.18.0.1
    static final int REMOTE = 0xC6120002;  // 198.18.0.2
    static final int GATEWAY = 0xC6120003; // 198.18.0.3
    static final int REMOTE_PORT = 40000;
    static final int SO_REUSEADDR = 2;
    static final int SOL_SOCKET = 1;
    static final int SO_ERROR = 4;
    static final int F_SETFL = 4;
    static final int O_NONBLOCK = 0x800;
    static final int EINPROGRESS = 115;
    static final int EAGAIN = 11;
    static final int POLLOUT = 4;
    static final int SOCK_STREAM = 1;
    static final int IPPROTO_TCP = 6;

    @TempDir
    Path scriptDir;

    private final List<KernelTarget> opened = new ArrayList<>();

    @BeforeAll
    static void requireRoot() {
        Assumptions.assumeTrue(HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip"),
                "needs root, /dev/net/tun and iproute2");
    }

    ScriptOptions options(int mtu) {
        return new ScriptOptions(LOCAL, REMOTE, GATEWAY, 24, mtu, 20000, 0, false, null, Map.of(), scriptDir);
    }

    KernelTarget open(int mtu) {
        KernelTarget t = new KernelTarget();
        opened.add(t);
        t.open(options(mtu));
        return t;
    }

    @AfterEach
    void cleanUp() throws IOException {
        for (KernelTarget t : opened) {
            t.close();
        }
        for (String ns : ourNamespaces()) {
            TestNamespace.deleteByName(ns);
        }
        assertEquals(List.of(), ourNamespaces(), "namespaces left behind");
    }

    /** Names in /var/run/netns this process created. */
    static List<String> ourNamespaces() throws IOException {
        Path dir = Path.of("/var/run/netns");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        String prefix = "usnet-pd-" + ProcessHandle.current().pid() + "-";
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix)).sorted().toList();
        }
    }

    static Syscall sc(String name, Value... args) {
        return new Syscall(name, List.of(args), 1);
    }

    static Value i(long v) {
        return Value.of(v);
    }

    static final Value ANY = Value.ELLIPSIS;

    static SyscallResult done(KernelTarget t, Syscall s) {
        PendingCall c = t.call(s);
        assertTrue(c.isDone(), s.name() + " should not block");
        return c.result();
    }

    static Value.Array arr(Value... v) {
        return new Value.Array(List.of(v));
    }

    static Value.Struct struct(Object... kv) {
        LinkedHashMap<String, Value> m = new LinkedHashMap<>();
        for (int k = 0; k < kv.length; k += 2) {
            m.put((String) kv[k], (Value) kv[k + 1]);
        }
        return new Value.Struct(m);
    }

    /** The next TCP packet tun0 sends within 2 s. */
    static TcpPackets.Tcp sniffTcp(KernelTarget t) {
        Sniffed s = t.sniff(t.nowMicros() + 2_000_000);
        assertNotNull(s, "the kernel sent nothing within 2 s");
        TcpPackets.Tcp p = TcpPackets.parse(s.ipPacket());
        assertTrue(p.checksumsOk(), "checksums of " + p);
        return p;
    }

    static byte[] syn(long isn) {
        byte[] opts = new TcpPackets.Options().mss(1000).sackOk().timestamp(100, 0).nop().wscale(7).bytes();
        return TcpPackets.tcp(REMOTE, LOCAL, REMOTE_PORT, KernelSyscalls.SCRIPT_PORT, isn, 0, TcpPackets.SYN, 32792,
                opts, 0);
    }

    /** socket, SO_REUSEADDR, bind, listen: the listener is script fd 3. */
    static void listen(KernelTarget t) {
        assertEquals(3, done(t, sc("socket", ANY, i(SOCK_STREAM), i(IPPROTO_TCP))).ret());
        SyscallResult r = done(t, sc("setsockopt", i(3), i(SOL_SOCKET), i(SO_REUSEADDR), arr(i(1)), i(4)));
        assertEquals(0, r.ret(), "setsockopt errno " + r.errno());
        assertEquals(0, done(t, sc("bind", i(3), ANY, ANY)).ret());
        assertEquals(0, done(t, sc("listen", i(3), i(1))).ret());
    }

    /** Injects a SYN, checks the SYN-ACK, injects the ACK; returns the kernel's ISN. */
    static long handshake(KernelTarget t, long isn) {
        t.inject(syn(isn));
        TcpPackets.Tcp synAck = sniffTcp(t);
        assertTrue(synAck.has(TcpPackets.SYN | TcpPackets.ACK) && !synAck.has(TcpPackets.RST), "SYN-ACK: " + synAck);
        assertEquals(LOCAL, synAck.srcIp());
        assertEquals(REMOTE, synAck.dstIp());
        assertEquals(KernelSyscalls.SCRIPT_PORT, synAck.srcPort());
        assertEquals(REMOTE_PORT, synAck.dstPort());
        assertEquals(isn + 1, synAck.ack());
        // tun0's MTU 1500 less 40 bytes of IPv4 and TCP headers; every option of the SYN answered.
        assertEquals(1460, synAck.mss());
        assertTrue(synAck.sackOk(), "SACK permitted in " + synAck);
        assertEquals(100, synAck.tsEcr(), "TS ecr echoes the SYN's TS val");
        assertTrue(synAck.wscale() >= 0 && synAck.wscale() <= 14, "wscale in " + synAck);
        byte[] opts = new TcpPackets.Options().nop().nop().timestamp(110, synAck.tsVal()).bytes();
        t.inject(TcpPackets.tcp(REMOTE, LOCAL, REMOTE_PORT, KernelSyscalls.SCRIPT_PORT, isn + 1, synAck.seq() + 1,
                TcpPackets.ACK, 257, opts, 0));
        return synAck.seq();
    }

    @Test
    void openCreatesTun0InAFreshNamespaceAndCloseRemovesIt() throws IOException {
        KernelTarget t = open(1400);
        String ns = t.namespaceName();
        assertTrue(ns.startsWith("usnet-pd-" + ProcessHandle.current().pid() + "-"), ns);
        assertEquals(List.of(ns), ourNamespaces());
        String link = NamespaceShell.run(ns, null, List.of("ip", "-o", "link", "show", "tun0")).output();
        assertTrue(link.contains("mtu 1400") && link.contains("UP"), link);
        String addr = NamespaceShell.run(ns, null, List.of("ip", "-o", "-4", "addr", "show", "dev", "tun0")).output();
        assertTrue(addr.contains("198.18.0.1/24"), addr);
        String route = NamespaceShell.run(ns, null, List.of("ip", "route", "show", "default")).output();
        assertTrue(route.contains("default via 198.18.0.3 dev tun0"), route);
        String lo = NamespaceShell.run(ns, null, List.of("ip", "-o", "link", "show", "lo")).output();
        assertTrue(lo.contains("UP"), lo);
        assertTrue(t.describe().startsWith("kernel " + KernelTarget.kernelRelease()), t.describe());
        t.close();
        assertEquals(List.of(), ourNamespaces());
        assertFalse(Files.exists(Path.of("/var/run/netns", ns)));
        t.close(); // idempotent
    }

    @Test
    void openFailingHalfwayLeavesNoNamespace() throws IOException {
        // The kernel refuses an IPv4 device MTU below 68: open fails after the namespace and tun0 exist.
        TargetException e = assertThrows(TargetException.class, () -> open(40));
        assertTrue(e.getMessage().contains("MTU") && e.getMessage().contains("40"), e.getMessage());
        assertEquals(List.of(), ourNamespaces());
    }

    @Test
    void passiveHandshakeAcceptWriteAndTcpInfo() {
        KernelTarget t = open(1500);
        t.start();
        listen(t);
        long isn = 1_000_000;
        long kernelIsn = handshake(t, isn);
        SyscallResult acc = done(t, sc("accept", i(3), ANY, ANY));
        assertEquals(4, acc.ret(), "the accepted socket is the script's next free fd (3 is the listener)");
        // One full segment: the peer's MSS 1000 less 12 bytes of timestamp option.
        assertEquals(988, done(t, sc("write", i(4), ANY, i(988))).ret());
        TcpPackets.Tcp data = sniffTcp(t);
        assertEquals(988, data.payloadLen());
        assertEquals(kernelIsn + 1, data.seq());
        assertEquals(isn + 1, data.ack());
        assertTrue(data.has(TcpPackets.ACK | TcpPackets.PSH), "data segment flags " + data);
        Map<String, Long> info = t.tcpInfo(4);
        assertEquals(1L, info.get("tcpi_state"), "TCP_ESTABLISHED");
        assertEquals(10L, info.get("tcpi_snd_cwnd"), "Linux's initial window of 10 segments");
        assertEquals(988L, info.get("tcpi_snd_mss"), "the peer's MSS 1000 less 12 bytes of timestamps");
        assertEquals(1L, info.get("tcpi_unacked"));
        assertEquals(7L, info.get("tcpi_snd_wscale"));
        assertTrue(info.containsKey("tcpi_delivered") && info.containsKey("tcpi_bytes_sent"), info.keySet().toString());
        assertEquals(988L, info.get("tcpi_bytes_sent"));
        // The listener's tcp_info reads too: state LISTEN (10).
        assertEquals(10L, t.tcpInfo(3).get("tcpi_state"));
        assertThrows(TargetException.class, () -> t.tcpInfo(9));
    }

    @Test
    void blockingAcceptCompletesWhenTheHandshakeDoes() {
        KernelTarget t = open(1500);
        t.start();
        listen(t);
        PendingCall accept = t.call(sc("accept", i(3), ANY, ANY));
        assertFalse(accept.isDone(), "accept with nothing queued blocks");
        assertFalse(t.awaitCall(accept, t.nowMicros() + 50_000), "and stays blocked without a connection");
        long before = t.nowMicros();
        handshake(t, 5000);
        assertTrue(t.awaitCall(accept, t.nowMicros() + 2_000_000), "accept returns once the handshake completed");
        assertEquals(4, accept.result().ret());
        assertTrue(accept.endMicros() >= before, accept.endMicros() + " vs " + before);
        // Non-blocking calls still go through while nothing is pending.
        assertEquals(0, done(t, sc("close", i(4))).ret());
        assertEquals(4, done(t, sc("socket", ANY, i(SOCK_STREAM), i(IPPROTO_TCP))).ret(), "fd 4 is reused");
    }

    @Test
    void nonBlockingConnectSaysEinprogressThenCompletes() {
        KernelTarget t = open(1500);
        t.start();
        assertEquals(3, done(t, sc("socket", ANY, i(SOCK_STREAM), i(IPPROTO_TCP))).ret());
        assertEquals(0, done(t, sc("fcntl", i(3), i(F_SETFL), i(O_NONBLOCK))).ret());
        SyscallResult r = done(t, sc("connect", i(3), ANY, ANY));
        assertEquals(-1, r.ret());
        assertEquals(EINPROGRESS, r.errno());
        TcpPackets.Tcp syn = sniffTcp(t);
        assertTrue(syn.has(TcpPackets.SYN) && !syn.has(TcpPackets.ACK), "SYN: " + syn);
        assertEquals(REMOTE, syn.dstIp());
        assertEquals(KernelSyscalls.SCRIPT_PORT, syn.dstPort());
        assertEquals(1460, syn.mss());
        // Not writable yet: poll says nothing within 0 ms.
        Value pollfds = arr(struct("fd", i(3), "events", i(POLLOUT)));
        SyscallResult p0 = done(t, sc("poll", pollfds, i(1), i(0)));
        assertEquals(0, p0.ret());
        byte[] opts = new TcpPackets.Options().mss(1200).bytes();
        t.inject(TcpPackets.tcp(REMOTE, LOCAL, KernelSyscalls.SCRIPT_PORT, syn.srcPort(), 777, syn.seq() + 1,
                TcpPackets.SYN | TcpPackets.ACK, 5000, opts, 0));
        TcpPackets.Tcp ack = sniffTcp(t);
        assertTrue(ack.has(TcpPackets.ACK) && !ack.has(TcpPackets.SYN), "ACK: " + ack);
        assertEquals(778, ack.ack());
        SyscallResult p1 = done(t, sc("poll", pollfds, i(1), i(1000)));
        assertEquals(1, p1.ret());
        Value.Struct out = (Value.Struct) ((Value.Array) p1.outArgs().get(0)).elements().getFirst();
        assertEquals(i(3), out.fields().get("fd"), "the script's fd, not the kernel's");
        assertEquals(i(POLLOUT), out.fields().get("revents"));
        SyscallResult err = done(t, sc("getsockopt", i(3), i(SOL_SOCKET), i(SO_ERROR), arr(i(0)), arr(i(4))));
        assertEquals(0, err.ret());
        assertEquals(arr(i(0)), err.outArgs().get(3));
        assertEquals(arr(i(4)), err.outArgs().get(4));
        // Nothing to read: EAGAIN on the non-blocking socket.
        SyscallResult rd = done(t, sc("read", i(3), ANY, i(100)));
        assertEquals(-1, rd.ret());
        assertEquals(EAGAIN, rd.errno());
        assertEquals(1200L - 0, t.tcpInfo(3).get("tcpi_snd_mss"));
    }

    @Test
    void blockingConnectSendsItsSynAtOnceAndReturnsWhatTheHandshakeGives() {
        KernelTarget t = open(1500);
        t.start();
        assertEquals(3, done(t, sc("socket", ANY, i(SOCK_STREAM), i(IPPROTO_TCP))).ret());
        long at = t.nowMicros();
        PendingCall connect = t.call(sc("connect", i(3), ANY, ANY));
        assertFalse(connect.isDone(), "a blocking connect waits for the handshake");
        Sniffed synPacket = t.sniff(t.nowMicros() + 1_000_000);
        assertNotNull(synPacket);
        TcpPackets.Tcp syn = TcpPackets.parse(synPacket.ipPacket());
        assertTrue(syn.has(TcpPackets.SYN), "SYN: " + syn);
        // Sent from the runner's thread within the call (a loaded machine may still preempt it for a few ms).
        assertTrue(synPacket.micros() - at < 50_000, "SYN sent " + (synPacket.micros() - at) + " µs after the call");
        t.inject(TcpPackets.tcp(REMOTE, LOCAL, KernelSyscalls.SCRIPT_PORT, syn.srcPort(), 4000, syn.seq() + 1,
                TcpPackets.SYN | TcpPackets.ACK, 5000, new TcpPackets.Options().mss(1000).bytes(), 0));
        assertTrue(t.awaitCall(connect, t.nowMicros() + 2_000_000));
        assertEquals(0, connect.result().ret());
        assertEquals(0, connect.result().errno());
        // The socket is still in blocking mode afterwards: a read with no data blocks.
        PendingCall read = t.call(sc("read", i(3), ANY, i(10)));
        assertFalse(read.isDone());
        // A write that fits the send buffer completes at once even on a blocking socket.
        SyscallResult w = done(t, sc("write", i(3), ANY, i(500)));
        assertEquals(500, w.ret());

        // A refused blocking connect reports ECONNREFUSED, as the real call does.
        assertEquals(4, done(t, sc("socket", ANY, i(SOCK_STREAM), i(IPPROTO_TCP))).ret());
        PendingCall refused = t.call(sc("connect", i(4), ANY, ANY));
        TcpPackets.Tcp syn2 = null;
        for (int k = 0; k < 5 && syn2 == null; k++) {
            TcpPackets.Tcp p = sniffTcp(t);
            if (p.has(TcpPackets.SYN) && p.srcPort() != syn.srcPort()) {
                syn2 = p;
            }
        }
        assertNotNull(syn2, "the second connect's SYN");
        t.inject(TcpPackets.tcp(REMOTE, LOCAL, KernelSyscalls.SCRIPT_PORT, syn2.srcPort(), 0, syn2.seq() + 1,
                TcpPackets.RST | TcpPackets.ACK, 0, new byte[0], 0));
        assertTrue(t.awaitCall(refused, t.nowMicros() + 2_000_000));
        assertEquals(-1, refused.result().ret());
        assertEquals(111, refused.result().errno(), "ECONNREFUSED");
    }

    @Test
    void blockingReadReturnsTheInjectedDataAndRecordsItsEndTime() {
        KernelTarget t = open(1500);
        t.start();
        listen(t);
        long kernelIsn = handshake(t, 9000);
        assertEquals(4, done(t, sc("accept", i(3), ANY, ANY)).ret());
        PendingCall read = t.call(sc("read", i(4), ANY, i(2000)));
        assertFalse(read.isDone(), "read without data blocks");
        t.advanceTo(t.nowMicros() + 30_000);
        long injectedAt = t.nowMicros();
        byte[] opts = new TcpPackets.Options().nop().nop().timestamp(200, 0).bytes();
        t.inject(TcpPackets.tcp(REMOTE, LOCAL, REMOTE_PORT, KernelSyscalls.SCRIPT_PORT, 9001, kernelIsn + 1,
                TcpPackets.ACK | TcpPackets.PSH, 257, opts, 500));
        assertTrue(t.awaitCall(read, t.nowMicros() + 1_000_000));
        assertEquals(500, read.result().ret());
        long lag = read.endMicros() - injectedAt;
        // The end time is stamped when the kernel returned, not when the runner asked (awaitCall came later and
        // waited up to 1 s); a call thread's wake-up on a loaded machine can take tens of ms.
        assertTrue(lag >= 0 && lag < 100_000, "read returned " + lag + " µs after the injection");
    }

    @Test
    void commandRunsInTheNamespaceFromTheScriptDirectory() throws IOException {
        KernelTarget t = open(1500);
        Files.writeString(scriptDir.resolve("marker.txt"), "here");
        String out = t.command("cat marker.txt; ip -o link show tun0; pwd", 7);
        assertTrue(out.contains("here") && out.contains("tun0") && out.contains(scriptDir.toString()), out);
        TargetException e = assertThrows(TargetException.class, () -> t.command("echo oops; exit 3", 12));
        assertTrue(e.getMessage().contains("line 12") && e.getMessage().contains("exited 3")
                && e.getMessage().contains("oops"), e.getMessage());
    }

    @Test
    void sysctlIsPerNamespaceAndUnknownKeysAreNamed() {
        KernelTarget t = open(1500);
        String host = NamespaceSysctl.read("net.ipv4.tcp_sack");
        String flipped = host.equals("1") ? "0" : "1";
        t.sysctl("net.ipv4.tcp_sack", flipped);
        String inside = NamespaceShell.run(t.namespaceName(), null, List.of("cat", "/proc/sys/net/ipv4/tcp_sack"))
                .output().trim();
        assertEquals(flipped, inside);
        assertEquals(host, NamespaceSysctl.read("net.ipv4.tcp_sack"), "the host's value is untouched");
        t.sysctl("net/ipv4/tcp_timestamps", "0");
        TargetException e = assertThrows(TargetException.class, () -> t.sysctl("net.ipv4.tcp_no_such_knob", "1"));
        assertTrue(e.getMessage().contains("net.ipv4.tcp_no_such_knob"), e.getMessage());
        TargetException global = assertThrows(TargetException.class, () -> t.sysctl("kernel.hostname", "x"));
        assertTrue(global.getMessage().contains("kernel.hostname"), global.getMessage());
    }

    @Test
    void cubicNotAllowedInTheRootNamespaceFailsSayingHowToAllowIt() {
        String allowed = NamespaceSysctl.readAllowed();
        Assumptions.assumeFalse(Arrays.asList(allowed.split("\\s+")).contains("cubic"),
                "cubic is allowed here: the kernel accepts it");
        KernelTarget t = open(1500);
        TargetException e = assertThrows(TargetException.class,
                () -> t.sysctl("net.ipv4.tcp_congestion_control", "cubic"));
        assertTrue(e.getMessage().contains("EPERM"), e.getMessage());
        assertTrue(e.getMessage().contains("sysctl -w net.ipv4.tcp_allowed_congestion_control=\"" + allowed
                + " cubic\""), e.getMessage());
        // The same through a backtick command: sysctl's own error, and the way out.
        TargetException c = assertThrows(TargetException.class,
                () -> t.command("sysctl -q -w net.ipv4.tcp_congestion_control=cubic", 5));
        assertTrue(c.getMessage().contains("line 5") && c.getMessage().contains("sysctl -w "
                + "net.ipv4.tcp_allowed_congestion_control=\"" + allowed + " cubic\""), c.getMessage());
        // reno is always allowed: the same sysctl works for it.
        t.sysctl("net.ipv4.tcp_congestion_control", "reno");
    }

    @Test
    void epollReportsTheScriptFd() {
        KernelTarget t = open(1500);
        t.start();
        listen(t);
        assertEquals(4, done(t, sc("epoll_create", i(1))).ret());
        int epollIn = 1;
        int ctlAdd = 1;
        assertEquals(0, done(t, sc("epoll_ctl", i(4), i(ctlAdd), i(3), struct("events", i(epollIn), "fd", i(3))))
                .ret());
        PendingCall wait = t.call(sc("epoll_wait", i(4), struct("events", i(epollIn), "fd", i(3)), i(1), i(5000)));
        assertFalse(wait.isDone(), "epoll_wait blocks until a connection is queued");
        handshake(t, 42);
        assertTrue(t.awaitCall(wait, t.nowMicros() + 2_000_000));
        assertEquals(1, wait.result().ret());
        assertEquals(struct("events", i(epollIn), "fd", i(3)), wait.result().outArgs().get(1));
    }

    @Test
    void sniffReturnsNullWhenNothingIsSent() {
        KernelTarget t = open(1500);
        t.start();
        long from = t.nowMicros();
        assertNull(t.sniff(from + 30_000));
        assertTrue(t.nowMicros() >= from + 30_000);
        assertEquals(0, t.nonIpv4Dropped(), "IPv6 is off: tun0 sends nothing of its own");
    }

    @Test
    void sniffedPacketsCarryTheKernelsTransmitStamp() {
        KernelTarget t = open(1500);
        t.start();
        listen(t);
        long at = t.nowMicros();
        t.inject(syn(77));
        // Wait before reading: the packet's time must still be when the kernel sent it, not when it was taken.
        t.advanceTo(at + 100_000);
        Sniffed s = t.sniff(t.nowMicros() + 1_000_000);
        assertNotNull(s);
        long lag = s.micros() - at;
        assertTrue(lag >= 0 && lag < 50_000, "SYN-ACK stamped " + lag + " µs after the SYN was injected");
        assertEquals(0, t.unstampedPackets(), "every packet carries the kernel's stamp");
    }
}
