package dev.usnet.tools.packetdrill.usnet;

import static dev.usnet.tools.packetdrill.usnet.TestPackets.ACK;
import static dev.usnet.tools.packetdrill.usnet.TestPackets.FIN;
import static dev.usnet.tools.packetdrill.usnet.TestPackets.PSH;
import static dev.usnet.tools.packetdrill.usnet.TestPackets.RST;
import static dev.usnet.tools.packetdrill.usnet.TestPackets.SYN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.packetdrill.PendingCall;
import dev.usnet.tools.packetdrill.ScriptOptions;
import dev.usnet.tools.packetdrill.Sniffed;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.SyscallResult;
import dev.usnet.tools.packetdrill.TargetException;
import dev.usnet.tools.packetdrill.Value;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The usnet target driven directly, as the script runner drives it: system calls, hand-built packets injected on
 * tun0, what the stack sent sniffed and parsed. The expected SYN and SYN-ACK options and windows are what this
 * machine's kernel sends from a fresh network namespace (measured over a veth pair: SYN window 64240 with
 * {@code mss 1460,sackOK,TS,nop,wscale 10}; SYN-ACK window 65160, the same options). The options match; the
 * windows are usnet TCP's own (see the handshake tests).
 */
class UsnetTargetTest {
    static final int LOCAL = TestPackets.ip("198.18.0.1");
    static final int REMOTE = TestPackets.ip("198.18.0.2");
    static final int GATEWAY = TestPackets.ip("198.18.0.3");
    static final int REMOTE_PORT = 40_000;
    static final long PEER_ISN = 1_000_000L;

    // Linux numbers, as the runner passes them.
    static final int AF_INET = 2;
    static final int SOCK_STREAM = 1;
    static final int SOL_SOCKET = 1;
    static final int SO_REUSEADDR = 2;
    static final int SO_ERROR = 4;
    static final int IPPROTO_TCP = 6;
    static final int TCP_NODELAY = 1;
    static final int TCP_CORK = 3;
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int O_NONBLOCK = 0x800;
    static final int POLLIN = 1;
    static final int POLLOUT = 4;
    static final int EPOLLIN = 1;
    static final int EPOLL_CTL_ADD = 1;
    static final int EAGAIN = 11;
    static final int EINPROGRESS = 115;
    static final int ECONNREFUSED = 111;
    static final int ECONNRESET = 104;
    static final int EPIPE = 32;

    private final List<UsnetTarget> opened = new ArrayList<>();
    private UsnetTarget t;
    private int line;

    @AfterEach
    void closeTargets() {
        for (UsnetTarget u : opened) {
            u.close();
        }
    }

    static ScriptOptions options(Path dir) {
        return new ScriptOptions(LOCAL, REMOTE, GATEWAY, 24, 1500, 4000, 0, false, null, Map.of(), dir);
    }

    UsnetTarget open(Path dir) {
        UsnetTarget u = new UsnetTarget();
        opened.add(u);
        u.open(options(dir));
        u.start();
        t = u;
        return u;
    }

    UsnetTarget open() {
        return open(null);
    }

    static Value i(long v) {
        return Value.of(v);
    }

    static Value arr(Value... v) {
        return new Value.Array(List.of(v));
    }

    static Value struct(Object... kv) {
        LinkedHashMap<String, Value> m = new LinkedHashMap<>();
        for (int k = 0; k < kv.length; k += 2) {
            Object v = kv[k + 1];
            m.put((String) kv[k], v instanceof Value val ? val : Value.of(((Number) v).longValue()));
        }
        return new Value.Struct(m);
    }

    PendingCall start(String name, Value... args) {
        return t.call(new Syscall(name, List.of(args), ++line));
    }

    /** A call that must return at once. */
    SyscallResult call(String name, Value... args) {
        PendingCall c = start(name, args);
        assertTrue(c.isDone(), name + " blocked");
        return c.result();
    }

    long ok(String name, Value... args) {
        SyscallResult r = call(name, args);
        assertEquals(0, r.errno(), name + " failed with errno " + r.errno());
        return r.ret();
    }

    void inject(int flags, long seq, long ack, int window, TestPackets.Options o, int payload) {
        t.inject(TestPackets.tcp(REMOTE, LOCAL, REMOTE_PORT, 8080, flags, seq, ack, window, o, payload));
    }

    /** Sends from the remote port to a local port (a connection the stack opened). */
    void injectTo(int localPort, int flags, long seq, long ack, int window, TestPackets.Options o, int payload) {
        t.inject(TestPackets.tcp(REMOTE, LOCAL, 8080, localPort, flags, seq, ack, window, o, payload));
    }

    TestPackets.Segment sniff(long deadlineUs) {
        Sniffed s = t.sniff(deadlineUs);
        assertNotNull(s, "nothing sent by " + deadlineUs + " us");
        TestPackets.Segment seg = TestPackets.parse(s.ipPacket());
        assertTrue(seg.checksumsOk(), "bad checksum in " + seg);
        return seg;
    }

    static TestPackets.Options linuxSyn(long tsVal) {
        return new TestPackets.Options().mss(1460).sackOk().ts(tsVal, 0).nop().wscale(7);
    }

    /** socket, SO_REUSEADDR, bind, listen: fd 3 listening on 8080. */
    void listening() {
        assertEquals(3, ok("socket", i(AF_INET), i(SOCK_STREAM), i(IPPROTO_TCP)));
        ok("setsockopt", i(3), i(SOL_SOCKET), i(SO_REUSEADDR), arr(i(1)), i(4));
        ok("bind", i(3), Value.ELLIPSIS, Value.ELLIPSIS);
        ok("listen", i(3), i(1));
    }

    /** A passive open completed at script time 0 and accepted: returns the stack's ISN; the connection is fd 4. */
    long established() {
        listening();
        inject(SYN, PEER_ISN, 0, 65535, linuxSyn(100), 0);
        TestPackets.Segment synAck = sniff(0);
        inject(ACK, PEER_ISN + 1, synAck.seq() + 1, 257, new TestPackets.Options().nop().nop().ts(110, synAck.tsVal()), 0);
        assertEquals(4, ok("accept", i(3), Value.ELLIPSIS, Value.ELLIPSIS));
        return synAck.seq();
    }

    @Test
    void passiveOpenAnswersWithTheKernelsSynAckAndAcceptWaitsForTheHandshake() {
        open();
        listening();
        PendingCall accept = start("accept", i(3), Value.ELLIPSIS, Value.ELLIPSIS);
        assertFalse(accept.isDone(), "accept returned before any connection");
        inject(SYN, PEER_ISN, 0, 65535, linuxSyn(100), 0);
        TestPackets.Segment synAck = sniff(0);
        assertEquals(SYN | ACK, synAck.flags());
        assertEquals(PEER_ISN + 1, synAck.ack());
        assertEquals(8080, synAck.sport());
        assertEquals(REMOTE_PORT, synAck.dport());
        assertEquals("mss,sackOK,TS,nop,wscale", synAck.optionOrder());
        assertEquals(1460, synAck.mss());
        assertEquals(10, synAck.wscale());
        assertEquals(100, synAck.tsEcr());
        // The kernel here offers 65160 (64 KiB of buffer in whole 1448-byte segments, Linux 4.20 on), and so does usnet
        // with the target's usnet.tcp.init_rwnd=space. The scale, from tcp_rmem's maximum, is the kernel's.
        assertEquals(45 * 1448, synAck.window(), "the kernel's initial window: 65160");
        t.advanceTo(10_000);
        assertFalse(accept.isDone());
        inject(ACK, PEER_ISN + 1, synAck.seq() + 1, 257, new TestPackets.Options().nop().nop().ts(110, synAck.tsVal()), 0);
        assertTrue(accept.isDone(), "accept did not return when the handshake completed");
        assertEquals(4, accept.result().ret());
        assertEquals(10_000, accept.endMicros());
        assertEquals(1L, t.tcpInfo(4).get("tcpi_state"), "ESTABLISHED");
        assertEquals(10L, t.tcpInfo(4).get("tcpi_rcv_wscale"));
        assertEquals(7L, t.tcpInfo(4).get("tcpi_snd_wscale"));
        assertEquals(10L, t.tcpInfo(3).get("tcpi_state"), "the listener is LISTEN");
        Map<String, Long> info = t.tcpInfo(4);
        assertEquals(7L, info.get("tcpi_options"), "timestamps, SACK and window scaling");
        assertEquals(1448L, info.get("tcpi_snd_mss"), "MSS 1460 less the timestamp option");
        assertEquals(10L, info.get("tcpi_snd_cwnd"));
        assertEquals(0L, info.get("tcpi_ca_state"), "Open");
        // One RTT sample of 10 ms from the SYN-ACK; Linux's RTO is then srtt + max(4 * rttvar, rto_min) = 210 ms.
        assertEquals(10_000L, info.get("tcpi_rtt"));
        assertEquals(210_000L, info.get("tcpi_rto"));
        assertFalse(info.containsKey("tcpi_pacing_rate"), "usnet does not pace: the field is absent, not 0");
    }

    @Test
    void blockingConnectSendsTheKernelsSynAndReturnsWhenTheSynAckArrives() {
        open();
        assertEquals(3, ok("socket", i(AF_INET), i(SOCK_STREAM), i(IPPROTO_TCP)));
        PendingCall connect = start("connect", i(3), Value.ELLIPSIS, Value.ELLIPSIS);
        assertFalse(connect.isDone());
        TestPackets.Segment syn = sniff(0);
        assertEquals(SYN, syn.flags());
        assertEquals(8080, syn.dport());
        assertEquals(REMOTE, syn.dst());
        assertEquals(LOCAL, syn.src());
        assertEquals("mss,sackOK,TS,nop,wscale", syn.optionOrder());
        assertEquals(1460, syn.mss());
        assertEquals(10, syn.wscale());
        // The kernel here, and usnet with usnet.tcp.init_rwnd=space: 64240, whole 1460-byte segments below 64 KiB.
        assertEquals(44 * 1460, syn.window(), "the kernel's initial window: 64240");
        t.advanceTo(5_000);
        injectTo(syn.sport(), SYN | ACK, PEER_ISN, syn.seq() + 1, 65535, linuxSyn(200).nop(), 0);
        assertTrue(connect.isDone());
        assertEquals(0, connect.result().ret());
        assertEquals(5_000, connect.endMicros());
        TestPackets.Segment ack = sniff(5_000);
        assertEquals(ACK, ack.flags());
        assertEquals(PEER_ISN + 1, ack.ack());
    }

    @Test
    void nonBlockingConnectIsInProgressAndARefusalShowsInSoError() {
        open();
        ok("socket", i(AF_INET), i(SOCK_STREAM), i(IPPROTO_TCP));
        assertEquals(2, ok("fcntl", i(3), i(F_GETFL)), "O_RDWR");
        ok("fcntl", i(3), i(F_SETFL), i(O_NONBLOCK));
        assertEquals(2 | O_NONBLOCK, ok("fcntl", i(3), i(F_GETFL)));
        SyscallResult r = call("connect", i(3), Value.ELLIPSIS, Value.ELLIPSIS);
        assertEquals(-1, r.ret());
        assertEquals(EINPROGRESS, r.errno());
        TestPackets.Segment syn = sniff(0);
        PendingCall poll = start("poll", arr(struct("fd", 3, "events", POLLOUT)), i(1), i(1000));
        assertFalse(poll.isDone(), "poll saw a connecting socket writable");
        t.advanceTo(2_000);
        injectTo(syn.sport(), RST | ACK, 0, syn.seq() + 1, 0, null, 0);
        assertTrue(poll.isDone());
        assertEquals(2_000, poll.endMicros());
        Value.Struct pfd = (Value.Struct) ((Value.Array) poll.result().outArgs().get(0)).elements().get(0);
        long revents = ((Value.Int) pfd.fields().get("revents")).value();
        assertEquals(POLLOUT | 0x8 | 0x10, revents, "POLLOUT|POLLERR|POLLHUP after the refusal");
        SyscallResult err = call("getsockopt", i(3), i(SOL_SOCKET), i(SO_ERROR), arr(i(0)), arr(i(4)));
        assertEquals(arr(i(ECONNREFUSED)), err.outArgs().get(3));
        SyscallResult again = call("getsockopt", i(3), i(SOL_SOCKET), i(SO_ERROR), arr(i(0)), arr(i(4)));
        assertEquals(arr(i(0)), again.outArgs().get(3), "SO_ERROR clears the error");
    }

    @Test
    void writeSendsADataSegmentAndReadReturnsInjectedData() {
        open();
        long iss = established();
        t.advanceTo(20_000);
        assertEquals(1000, ok("write", i(4), Value.ELLIPSIS, i(1000)));
        TestPackets.Segment data = sniff(20_000);
        assertEquals(ACK | PSH, data.flags());
        assertEquals(iss + 1, data.seq());
        assertEquals(1000, data.payload());
        PendingCall read = start("read", i(4), Value.ELLIPSIS, i(4000));
        assertFalse(read.isDone(), "read returned with nothing received");
        t.advanceTo(30_000);
        inject(ACK | PSH, PEER_ISN + 1, iss + 1001, 257, new TestPackets.Options().nop().nop().ts(140, data.tsVal()), 600);
        assertTrue(read.isDone());
        assertEquals(600, read.result().ret());
        inject(ACK | PSH, PEER_ISN + 601, iss + 1001, 257, new TestPackets.Options().nop().nop().ts(150, data.tsVal()), 300);
        assertEquals(arr(i(300)), call("ioctl", i(4), i(0x541B), arr(i(0))).outArgs().get(2), "SIOCINQ");
        assertEquals(300, ok("read", i(4), Value.ELLIPSIS, i(4000)));
        assertEquals(30_000, read.endMicros());
        SyscallResult empty = call("recv", i(4), Value.ELLIPSIS, i(100), i(0x40));
        assertEquals(EAGAIN, empty.errno(), "MSG_DONTWAIT read of an empty socket");
    }

    @Test
    void closeSendsAFinAndAPeerResetThenFailsTheNextWrite() {
        open();
        long iss = established();
        inject(RST | ACK, PEER_ISN + 1, iss + 1, 0, null, 0);
        SyscallResult w = call("write", i(4), Value.ELLIPSIS, i(10));
        assertEquals(ECONNRESET, w.errno(), "the first write after a reset reports it");
        assertEquals(EPIPE, call("write", i(4), Value.ELLIPSIS, i(10)).errno(), "then EPIPE");
        assertEquals(0, call("read", i(4), Value.ELLIPSIS, i(10)).ret(), "then end of stream");
        ok("close", i(4));

        // A second connection, closed in order.
        inject(SYN, PEER_ISN + 5000, 0, 65535, linuxSyn(300), 0);
        TestPackets.Segment synAck = sniff(0);
        inject(ACK, PEER_ISN + 5001, synAck.seq() + 1, 257, new TestPackets.Options().nop().nop().ts(310, synAck.tsVal()), 0);
        assertEquals(4, ok("accept", i(3), Value.ELLIPSIS, Value.ELLIPSIS), "the lowest free descriptor again");
        t.advanceTo(1_000);
        ok("close", i(4));
        TestPackets.Segment fin = sniff(1_000);
        // Linux sends a bare FIN as F. (FIN|ACK); usnet's TCP adds PSH, a difference noted for its owners.
        assertTrue(fin.has(FIN) && fin.has(ACK), "FIN|ACK expected: " + fin);
        assertEquals(0, fin.payload());
        assertEquals(synAck.seq() + 1, fin.seq());
        assertEquals(1_000, t.nowMicros());
    }

    @Test
    void aSynToAClosedPortIsAnsweredWithAReset() {
        open();
        inject(SYN, PEER_ISN, 0, 65535, linuxSyn(100), 0);
        TestPackets.Segment rst = sniff(0);
        assertEquals(RST | ACK, rst.flags());
        assertEquals(0, rst.seq());
        assertEquals(PEER_ISN + 1, rst.ack());
        assertNull(t.sniff(100_000), "a single reset");
    }

    @Test
    void pollAndEpollReportReadinessAsTcpPollDoes() {
        open();
        listening();
        long fresh = ok("socket", i(AF_INET), i(SOCK_STREAM), i(IPPROTO_TCP));
        SyscallResult p = call("poll", arr(struct("fd", fresh, "events", POLLIN | POLLOUT)), i(1), i(0));
        Value.Struct pfd = (Value.Struct) ((Value.Array) p.outArgs().get(0)).elements().get(0);
        assertEquals(POLLOUT | 0x10, ((Value.Int) pfd.fields().get("revents")).value(),
                "an unconnected socket: POLLOUT|POLLHUP");
        ok("close", i(fresh));

        long ep = ok("epoll_create", i(1));
        assertEquals(4, ep);
        ok("epoll_ctl", i(ep), i(EPOLL_CTL_ADD), i(3), struct("events", EPOLLIN, "fd", 3));
        PendingCall wait = start("epoll_wait", i(ep), Value.ELLIPSIS, i(4), i(-1));
        assertFalse(wait.isDone());
        t.advanceTo(7_000);
        inject(SYN, PEER_ISN, 0, 65535, linuxSyn(100), 0);
        TestPackets.Segment synAck = sniff(7_000);
        assertFalse(wait.isDone(), "a SYN alone makes nothing acceptable");
        inject(ACK, PEER_ISN + 1, synAck.seq() + 1, 257, new TestPackets.Options().nop().nop().ts(110, synAck.tsVal()), 0);
        assertTrue(wait.isDone());
        assertEquals(1, wait.result().ret());
        assertEquals(arr(struct("events", EPOLLIN, "fd", 3)), wait.result().outArgs().get(1));
        assertEquals(7_000, wait.endMicros());

        SyscallResult timedOut = null;
        long conn = ok("accept", i(3), Value.ELLIPSIS, Value.ELLIPSIS);
        PendingCall p2 = start("poll", arr(struct("fd", conn, "events", POLLIN)), i(1), i(50));
        assertTrue(t.awaitCall(p2, 1_000_000));
        timedOut = p2.result();
        assertEquals(0, timedOut.ret(), "nothing to read: poll times out");
        assertEquals(57_000, p2.endMicros(), "after its 50 ms");
    }

    @Test
    void unknownAndUnsupportedSettingsFailNamingThemselves() {
        open();
        TargetException e = assertThrows(TargetException.class, () -> t.sysctl("net.ipv4.tcp_no_such_knob", "1"));
        assertTrue(e.getMessage().contains("net.ipv4.tcp_no_such_knob"), e.getMessage());
        // A key under a declared per-device family is the knobs' to judge: the message names the nearest knob.
        TargetException d = assertThrows(TargetException.class, () -> t.sysctl("net.ipv4.conf.tun0.proxyarp", "1"));
        assertEquals("sysctl net.ipv4.conf.tun0.proxyarp=1: unknown knob 'net.ipv4.conf.tun0.proxyarp' (did you mean"
                + " 'net.ipv4.conf.tun0.proxy_arp'?)", d.getMessage());
        t.sysctl("net.ipv4.neigh.tun0.ucast_solicit", "5");
        TargetException v = assertThrows(TargetException.class, () -> t.sysctl("net.ipv4.tcp_ecn", "1"));
        assertTrue(v.getMessage().contains("net.ipv4.tcp_ecn"), v.getMessage());
        t.sysctl("net/ipv4/tcp_sack", "0");
        ok("socket", i(AF_INET), i(SOCK_STREAM), i(IPPROTO_TCP));
        TargetException o = assertThrows(TargetException.class,
                () -> call("setsockopt", i(3), i(IPPROTO_TCP), i(TCP_CORK), arr(i(1)), i(4)));
        assertTrue(o.getMessage().contains("TCP_CORK"), o.getMessage());
        ok("setsockopt", i(3), i(IPPROTO_TCP), i(TCP_NODELAY), arr(i(1)), i(4));
        assertEquals(arr(i(1)), call("getsockopt", i(3), i(IPPROTO_TCP), i(TCP_NODELAY), arr(i(0)), arr(i(4)))
                .outArgs().get(3));
        // tcp_sack=0 reached the SYN.
        start("connect", i(3), Value.ELLIPSIS, Value.ELLIPSIS);
        assertFalse(sniff(0).sackOk());
    }

    @Test
    void thePresetAndKnobsOfTheOptionsReachTheNamespace() {
        UsnetTarget u = new UsnetTarget();
        opened.add(u);
        u.open(new ScriptOptions(LOCAL, REMOTE, GATEWAY, 24, 1500, 4000, 0, false, "3.19",
                Map.of("net.ipv4.tcp_timestamps", "0", "net/ipv4/tcp_ecn", "0"), null));
        u.start();
        t = u;
        assertEquals("usnet (preset 3.19)", u.describe());
        ok("socket", i(AF_INET), i(SOCK_STREAM), i(IPPROTO_TCP));
        start("connect", i(3), Value.ELLIPSIS, Value.ELLIPSIS);
        TestPackets.Segment syn = sniff(0);
        assertFalse(syn.hasTs(), "--set net.ipv4.tcp_timestamps=0 reached the SYN");
        assertEquals(22, call("listen", i(3), i(5)).errno(), "EINVAL: listen on a connecting socket");
    }

    @Test
    void aPresetUsnetDoesNotHaveFailsNamingIt() {
        UsnetTarget u = new UsnetTarget();
        TargetException e = assertThrows(TargetException.class, () -> u.open(new ScriptOptions(LOCAL, REMOTE, GATEWAY,
                24, 1500, 4000, 0, false, "2.6", Map.of(), null)));
        assertTrue(e.getMessage().contains("usnet.tcp.kernel") && e.getMessage().contains("2.6"), e.getMessage());
        u.close();
        UsnetTarget v = new UsnetTarget();
        TargetException s = assertThrows(TargetException.class, () -> v.open(new ScriptOptions(LOCAL, REMOTE, GATEWAY,
                24, 1500, 4000, 0, false, null, Map.of("net.ipv4.tcp_ecn", "1"), null)));
        assertTrue(s.getMessage().startsWith("--set net.ipv4.tcp_ecn=1"), s.getMessage());
        v.close();
    }

    @Test
    void backtickCommandsSetSysctlsAndRefuseAnythingElse(@TempDir Path dir) throws Exception {
        Path common = Files.createDirectories(dir.resolve("common"));
        Files.writeString(common.resolve("defaults.sh"), """
                #!/bin/bash
                # settings
                ip tcp_metrics flush all > /dev/null 2>&1
                sysctl -q net.ipv4.tcp_rmem="4096 540000 $((15*1024*1024))"
                sysctl -q net.ipv4.tcp_timestamps=1 net.ipv4.tcp_sack=1
                echo 0 > /proc/sys/net/ipv4/tcp_window_scaling
                tc qdisc add dev tun0 root pfifo
                """);
        Path scripts = Files.createDirectories(dir.resolve("tcp"));
        open(scripts);
        t.command("../common/defaults.sh", 1);
        assertEquals("4096 540000 15728640", t.command("sysctl net.ipv4.tcp_rmem", 2).trim()
                .replaceFirst("^net.ipv4.tcp_rmem = ", ""));
        t.command("sysctl -q net.ipv4.tcp_slow_start_after_idle=0; sysctl -q -w net.ipv4.tcp_dsack=0", 3);
        TargetException e = assertThrows(TargetException.class, () -> t.command("rm -rf /tmp/x", 7));
        assertTrue(e.getMessage().startsWith("line 7: usnet target does not run shell commands"), e.getMessage());
        // The window scale echo in defaults.sh reached new connections.
        ok("socket", i(AF_INET), i(SOCK_STREAM), i(IPPROTO_TCP));
        start("connect", i(3), Value.ELLIPSIS, Value.ELLIPSIS);
        assertEquals(-1, sniff(0).wscale());
        t.command("tc qdisc replace dev tun0 root pfifo limit 0", 9);
        ok("socket", i(AF_INET), i(SOCK_STREAM), i(IPPROTO_TCP));
        start("connect", i(4), Value.ELLIPSIS, Value.ELLIPSIS);
        assertNull(t.sniff(0), "pfifo limit 0 drops what is sent");
    }

    /** A short exchange with a retransmission timeout in it, as (time, flags, seq) of everything sent. */
    private List<String> scriptedExchange() {
        open();
        long iss = established();
        ok("write", i(4), Value.ELLIPSIS, i(3000));
        List<String> sent = new ArrayList<>();
        Sniffed s;
        while ((s = t.sniff(2_000_000)) != null) {
            TestPackets.Segment g = TestPackets.parse(s.ipPacket());
            sent.add(s.micros() + " " + g.flags() + " " + (g.seq() - iss) + " " + g.payload() + " " + g.tsVal());
        }
        return sent;
    }

    @Test
    void virtualTimeIsDeterministic() {
        List<String> first = scriptedExchange();
        List<String> second = scriptedExchange();
        assertTrue(first.size() >= 3, "data and at least one retransmission: " + first);
        assertEquals(first, second);
        long lastAt = Long.parseLong(first.get(first.size() - 1).split(" ")[0]);
        assertTrue(lastAt >= 200_000, "a retransmission after the RTO floor: " + first);
    }

    @Test
    void aBlockingWriteReturnsWhenAcksMadeRoomAndANonBlockingOneTakesWhatFits() {
        open();
        long iss = established();
        PendingCall w = start("write", i(4), Value.ELLIPSIS, i(200_000));
        assertFalse(w.isDone(), "200 kB do not fit a fresh send buffer");
        long acked = 0;
        long at = 0;
        while (!w.isDone() && at < 2_000_000) {
            at += 10_000;
            t.advanceTo(at);
            Sniffed s;
            while ((s = t.sniff(at)) != null) {
                TestPackets.Segment g = TestPackets.parse(s.ipPacket());
                acked = Math.max(acked, g.seq() - iss - 1 + g.payload());
            }
            inject(ACK, PEER_ISN + 1, iss + 1 + acked, 65535, null, 0);
        }
        assertTrue(w.isDone(), "the write never completed; acked " + acked);
        assertEquals(200_000, w.result().ret());
        assertEquals(at, w.endMicros(), "returned at the ACK that made the last room");

        ok("fcntl", i(4), i(F_SETFL), i(O_NONBLOCK));
        long n = ok("write", i(4), Value.ELLIPSIS, i(10_000_000));
        assertTrue(n > 0 && n < 10_000_000, "a non-blocking write takes what fits: " + n);
        assertEquals(EAGAIN, call("write", i(4), Value.ELLIPSIS, i(1000)).errno(), "then nothing fits");
        SyscallResult p = call("poll", arr(struct("fd", 4, "events", POLLOUT)), i(1), i(0));
        assertEquals(0, p.ret(), "a full send buffer is not writable");
    }

    @Test
    void edgeTriggeredEpollReportsOnlyNewArrivals() {
        open();
        long iss = established();
        long ep = ok("epoll_create1", i(0));
        ok("epoll_ctl", i(ep), i(EPOLL_CTL_ADD), i(4), struct("events", EPOLLIN | (1L << 31), "u64", 99));
        inject(ACK | PSH, PEER_ISN + 1, iss + 1, 257, null, 100);
        SyscallResult first = call("epoll_wait", i(ep), Value.ELLIPSIS, i(1), i(0));
        assertEquals(1, first.ret());
        assertEquals(arr(struct("events", EPOLLIN, "u64", 99)), first.outArgs().get(1));
        assertEquals(0, call("epoll_wait", i(ep), Value.ELLIPSIS, i(1), i(0)).ret(),
                "the same unread data is not reported twice");
        inject(ACK | PSH, PEER_ISN + 101, iss + 1, 257, null, 100);
        assertEquals(1, call("epoll_wait", i(ep), Value.ELLIPSIS, i(1), i(0)).ret(), "new data is");
        assertEquals(200, ok("read", i(4), Value.ELLIPSIS, i(1000)));
    }

    @Test
    void shutdownSendsAFinAndLingerZeroCloseAResetAndDescriptorsAreReused() {
        open();
        long iss = established();
        ok("shutdown", i(4), i(1));
        TestPackets.Segment fin = sniff(0);
        assertTrue(fin.has(FIN), "shutdown(SHUT_WR) sends a FIN: " + fin);
        assertEquals(EPIPE, call("write", i(4), Value.ELLIPSIS, i(10)).errno());
        inject(ACK | PSH, PEER_ISN + 1, iss + 2, 257, null, 50);
        assertEquals(50, ok("read", i(4), Value.ELLIPSIS, i(1000)), "the read side is still open");

        ok("close", i(3));
        assertEquals(3, ok("socket", Value.ELLIPSIS, i(SOCK_STREAM), Value.ELLIPSIS), "the lowest free descriptor");
        ok("setsockopt", i(4), i(SOL_SOCKET), i(13), struct("l_onoff", 1, "l_linger", 0), i(8));
        while (t.sniff(0) != null) {
            // the ACK of the data above
        }
        ok("close", i(4));
        TestPackets.Segment rst = sniff(0);
        assertTrue(rst.has(RST), "SO_LINGER 0 closes with a reset: " + rst);
    }
}
