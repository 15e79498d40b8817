package dev.usnet.tools.packetdrill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.Usnet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The runner end to end through {@code usnet packetdrill}, against {@link FakeTarget}'s scripted peer. */
class RunnerTest {

    @TempDir
    Path tmp;

    private final List<FakeTarget> made = new ArrayList<>();
    private String out;
    private String err;

    static Path resource(String name) {
        try {
            return Path.of(RunnerTest.class.getResource("/packetdrill/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private int run(Consumer<FakeTarget> bug, String... args) {
        PacketdrillCommand cmd = new PacketdrillCommand();
        cmd.targetFactory = () -> {
            FakeTarget t = new FakeTarget();
            bug.accept(t);
            made.add(t);
            return t;
        };
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        CommandLine cl = new CommandLine(cmd);
        cl.setOut(new PrintWriter(o, true));
        cl.setErr(new PrintWriter(e, true));
        int code = cl.execute(args);
        out = o.toString();
        err = e.toString();
        return code;
    }

    private Path script(String name, String text) throws Exception {
        Path p = tmp.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    @Test
    void passiveOpenJoinedSegmentsRtoCodeAndClosePass() {
        int code = run(t -> { }, resource("passive-write.pkt").toString());
        assertEquals(0, code, out + err);
        assertTrue(out.startsWith("PASS " + resource("passive-write.pkt") + " (fake, "), out);
        assertTrue(out.endsWith("1/1 passed\n"), out);
        FakeTarget t = made.get(0);
        assertEquals(List.of("before start: sysctl -q net.ipv4.tcp_sack=1"), t.commands,
                "a command before the first event runs before the clock starts");
        assertEquals(1000, t.options.toleranceUs(), "the script's --tolerance_usecs");
        assertTrue(t.closed);
    }

    @Test
    void eventsAfterAnOutboundPacketCountFromItsSendTimeNotFromASlowSniffer() {
        // The sniffer hands packets over 30 ms late; the RTO retransmission is still expected 200 ms after the
        // data was sent (with a 1 ms tolerance), and the handshake ACK comes 100 ms after the SYN-ACK was sent.
        assertEquals(0, run(t -> t.sniffLatencyUs = 30_000, "-v", resource("passive-write.pkt").toString()), out);
        assertTrue(out.contains("0.100000 line 14 inject < . 1:1(0) ack 1 win 257"), out);
    }

    @Test
    void ipv6PacketsOnTheDeviceAreNotTheScriptsBusiness() {
        assertEquals(0, run(t -> t.ipv6Noise = true, resource("passive-write.pkt").toString()), out);
    }

    @Test
    void activeOpenMapsTimestampEchoesAndWaitsForABlockingRead() {
        int code = run(t -> { }, resource("active-connect.pkt").toString());
        assertEquals(0, code, out + err);
        // The blocking read was started once and finished when the data came, 100 ms later.
        assertEquals(1, made.get(0).calls.stream().filter(c -> c.name().equals("read")).count());
    }

    @Test
    void aWrongWindowFailsAtItsLineWithBothPackets() {
        int code = run(t -> t.advertisedWindow = 64_000 * 2, resource("passive-write.pkt").toString());
        assertEquals(1, code, out);
        String[] lines = out.split("\n");
        assertEquals("FAIL " + resource("passive-write.pkt") + ": " + resource("passive-write.pkt")
                + ":18: error handling packet: live packet field tcp_window: expected: 501 (0x1f5) vs actual: 1000"
                + " (0x3e8)", lines[0]);
        assertEquals("    script packet:  0.100000 P. 1:2001(2000) ack 1 win 501", lines[1]);
        assertEquals("    actual packet:  0.100000 P. 1:2001(2000) ack 1 win 1000", lines[2]);
        assertEquals("0/1 passed", lines[3]);
    }

    @Test
    void aLateRetransmissionIsATimingErrorRelativeToThePreviousEvent() throws Exception {
        int code = run(t -> { }, resource("late-retransmit.pkt").toString());
        assertEquals(1, code, out);
        // The tolerance is the script's 5 ms or, as in packetdrill, 12.5 % of the 100 ms since the previous event.
        assertTrue(out.contains(":13: error handling packet: timing error: expected outbound packet at 0.200000 sec"
                + " but happened at 0.300000 sec; tolerance 0.012500 sec"), out);
        Path range = script("range.pkt", Files.readString(resource("late-retransmit.pkt"))
                .replace("  +.1 > P. 1:1001(1000) ack 1", "+.1~+.15 > P. 1:1001(1000) ack 1"));
        assertEquals(1, run(t -> { }, range.toString()));
        assertTrue(out.contains("range.pkt:13: error handling packet: timing error: expected outbound packet in "
                + "relative time range +0.100000~+0.150000 sec but happened at +0.200000 sec"), out);
        // The user's tolerance overrides the script's: 100 ms late is then in time.
        assertEquals(0, run(t -> { }, "--tolerance-us", "100001", resource("late-retransmit.pkt").toString()),
                out);
    }

    @Test
    void syscallResultsErrnosAndOutParametersAreChecked() throws Exception {
        String head = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n";
        Path ret = script("ret.pkt", head + "+0 fcntl(3, F_GETFL) = 0x802\n");
        assertEquals(1, run(t -> { }, ret.toString()));
        assertTrue(out.contains("ret.pkt:2: runtime error in fcntl call: Expected result 2050 but got 2"), out);

        Path errno = script("errno.pkt", head + "+0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n"
                + "+0 accept(3, ..., ...) = -1 ECONNREFUSED (Connection refused)\n");
        assertEquals(1, run(t -> { }, errno.toString()));
        assertTrue(out.contains("errno.pkt:3: runtime error in accept call: Expected errno 111 (ECONNREFUSED) but got"
                + " EAGAIN (11)"), out);

        Path outArg = script("out.pkt", head + "+0 getsockopt(3, SOL_SOCKET, SO_ERROR, [111], [4]) = 0\n");
        assertEquals(1, run(t -> { }, outArg.toString()));
        assertTrue(out.contains("out.pkt:2: runtime error in getsockopt call: argument 4: element 0: expected 111 but"
                + " got 0"), out);

        Path blocked = script("blocked.pkt", head + "+0 bind(3, ..., ...) = 0\n+0 listen(3, 1) = 0\n"
                + "+0 accept(3, ..., ...) = 4\n");
        assertEquals(1, run(t -> { }, blocked.toString()));
        assertTrue(out.contains("blocked.pkt:4: accept did not return; a call that blocks needs an end time"), out);

        Path never = script("never.pkt", head + "+0 bind(3, ..., ...) = 0\n+0 listen(3, 1) = 0\n"
                + "+0...0.5 accept(3, ..., ...) = 4\n");
        assertEquals(1, run(t -> { }, never.toString()));
        assertTrue(out.contains("never.pkt:4: runtime error: exiting while a blocking accept call is in progress"),
                out);
    }

    @Test
    void icmpErrorsQuoteTheStacksSegmentWithItsLiveSequenceNumber() throws Exception {
        Path icmp = script("icmp.pkt", """
                0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0 bind(3, ..., ...) = 0
                +0 listen(3, 1) = 0
                +0 < S 0:0(0) win 32792 <mss 1000,nop,wscale 7>
                +0 > S. 0:0(0) ack 1 <...>
                +.1 < . 1:1(0) ack 1 win 257
                +0 accept(3, ..., ...) = 4
                +0 write(4, ..., 1000) = 1000
                +0 > P. 1:1001(1000) ack 1
                +.01 < icmp unreachable frag_needed mtu 576 [1:1001(1000)]
                """);
        assertEquals(0, run(t -> { }, icmp.toString()), out);
        assertEquals("icmp 3/4 mtu 576 8080>48000 seq " + (FakeTarget.ISN + 1), made.get(0).commands.get(0));
    }

    @Test
    void aNewSocketStartsANewConnectionAndTheOldOnesPacketsAreSkipped() throws Exception {
        String open = """
                +0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0 bind(3, ..., ...) = 0
                +0 listen(3, 1) = 0
                +0 < S 0:0(0) win 32792 <mss 1000,nop,wscale 7>
                +0 > S. 0:0(0) ack 1 <...>
                +.1 < . 1:1(0) ack 1 win 257
                +0 accept(3, ..., ...) = 4
                """;
        // The first connection's FIN is never acknowledged: its retransmissions (at +.2, +.6) go on while the
        // second connection (a fresh port of the script's) is matched.
        Path two = script("two.pkt", open + "+0 close(4) = 0\n+0 > F. 1:1(0) ack 1\n"
                + "+0 close(3) = 0\n+.3 " + open.strip().substring(3) + "\n+0 write(4, ..., 10) = 10\n"
                + "+0 > P. 1:11(10) ack 1\n");
        int code = run(t -> { }, "-v", two.toString());
        assertEquals(0, code, out);
        assertTrue(out.contains("ignored (another connection 8080>48000): F. "), out);
    }

    @Test
    void codeAssertionsCommandsAndTimeReportTheirLine() throws Exception {
        Path code = script("code.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 %{\n"
                + "assert tcpi_snd_cwnd == 10\nassert tcpi_state == TCP_ESTABLISHED, tcpi_state\n}%\n");
        assertEquals(1, run(t -> { }, code.toString()));
        assertTrue(out.contains("code.pkt:4: assertion failed: tcpi_state == TCP_ESTABLISHED (7); tcpi_state=7"), out);

        Path cmd = script("cmd.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+.5 `please fail`\n");
        assertEquals(1, run(t -> { }, cmd.toString()));
        assertTrue(out.contains("cmd.pkt:2: line 2: fake refuses please fail"), out);

        Path first = script("first.pkt", "0.5 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n");
        assertEquals(1, run(t -> { }, first.toString()));
        assertTrue(out.contains("first.pkt:1: first event should be at time 0"), out);
    }

    @Test
    void anUnreadableScriptStopsTheRunWithExit2AndNothingRuns() throws Exception {
        Path bad = script("bad.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 > S 0:0(0) <md5 00>\n");
        Path junit = tmp.resolve("report.xml");
        int code = run(t -> { }, "--junit", junit.toString(), resource("passive-write.pkt").toString(),
                bad.toString());
        assertEquals(2, code);
        assertTrue(made.isEmpty(), "no target was opened");
        assertTrue(err.contains("bad.pkt:2: TCP MD5 signature option (md5) is not supported"), err);
        String xml = Files.readString(junit);
        assertTrue(xml.contains("<skipped"), xml);
        assertTrue(xml.contains("<error message=\"" + bad + ":2: TCP MD5"), xml);
    }

    @Test
    void anUnknownSymbolOrErrnoIsRefusedBeforeAnythingRuns() throws Exception {
        Path sym = script("sym.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+1 close(3) = 0\n"
                + "+0 setsockopt(3, SOL_SOCKET, SO_NOPE, [1], 4) = 0\n");
        assertEquals(2, run(t -> { }, sym.toString()));
        assertTrue(err.contains("sym.pkt:3: unknown symbol SO_NOPE"), err);
        Path errno = script("errno2.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
                + "+0 close(3) = -1 ENOTANERRNO\n");
        assertEquals(2, run(t -> { }, errno.toString()));
        assertTrue(err.contains("errno2.pkt:2: unknown errno name ENOTANERRNO"), err);
        Path code = script("code2.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 %{\nx = 1\n"
                + "assert x == 1, 'not closed\n}%\n");
        assertEquals(2, run(t -> { }, code.toString()));
        assertTrue(err.contains("code2.pkt:4: in code: string not closed"), err);
        assertTrue(made.isEmpty());
    }

    @Test
    void junitReportHasOneTestcasePerScriptWithTheFailure() throws Exception {
        Path junit = tmp.resolve("junit.xml");
        int code = run(t -> { }, "--junit", junit.toString(), resource("passive-write.pkt").toString(),
                resource("late-retransmit.pkt").toString());
        assertEquals(1, code);
        assertTrue(out.endsWith("1/2 passed\n"), out);
        String xml = Files.readString(junit);
        assertTrue(xml.contains("tests=\"2\" failures=\"1\" errors=\"0\""), xml);
        assertEquals(2, xml.split("<testcase ").length - 1, xml);
        assertTrue(xml.contains("classname=\"packetdrill.usnet\""), xml);
        assertTrue(xml.contains("<property name=\"target\" value=\"fake\"/>"), xml);
        assertTrue(xml.contains("<failure message=\"" + resource("late-retransmit.pkt") + ":13: error handling packet:"
                + " timing error"), xml);
    }

    @Test
    void usageErrorsExitWith2() throws Exception {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        Path s = resource("passive-write.pkt");
        assertEquals(2, Usnet.execute(new String[] {"packetdrill", "--target", "bsd", s.toString()},
                new PrintWriter(o), new PrintWriter(e)));
        assertTrue(e.toString().contains("unknown target 'bsd': use one of usnet, kernel"), e.toString());
        StringWriter e2 = new StringWriter();
        assertEquals(2, Usnet.execute(new String[] {"packetdrill", "--junit", tmp.resolve("no/such/dir/x.xml")
                .toString(), s.toString()}, new PrintWriter(o), new PrintWriter(e2)));
        assertTrue(e2.toString().contains("does not exist"), e2.toString());
        StringWriter e3 = new StringWriter();
        assertEquals(2, Usnet.execute(new String[] {"packetdrill", tmp.resolve("missing.pkt").toString()},
                new PrintWriter(o), new PrintWriter(e3)));
        assertTrue(e3.toString().contains("missing.pkt"), e3.toString());
    }

    @Test
    void scriptsRunOverIpv6WithIpv6PacketsBothWays() {
        int code = run(t -> t.ipv6Noise = true, "--ip-version", "ipv6", resource("passive-write.pkt").toString());
        assertEquals(0, code, out + err);
        FakeTarget t = made.get(0);
        assertEquals(IpVersion.IPV6, t.options.ipVersion());
        assertEquals(1520, t.options.mtu(), "1500 + 20: MSS 1460 as the script wrote");
        assertTrue(!t.injectedVersions.isEmpty() && t.injectedVersions.stream().allMatch(v -> v == 6),
                t.injectedVersions.toString());
    }

    @Test
    void overIpv6ABadTcpChecksumFromTheStackFailsTheScript() {
        int code = run(t -> t.badTcpChecksum = true, "--ip-version", "ipv6", resource("passive-write.pkt").toString());
        assertEquals(1, code, out + err);
        assertTrue(out.contains("the stack sent a packet with a bad checksum"), out);
    }

    @Test
    void icmpLinesBecomeIcmpv6AndScriptsOfTheOtherVersionAreSkipped() throws Exception {
        Path port = script("port.pkt", """
                0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
                +0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
                +0 > S 0:0(0) <...>
                +.05 < icmp packet_too_big mtu 1300 [0:0(0)]
                """);
        Path v4only = script("frag.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
                + "+0 < icmp unreachable frag_needed mtu 700 [1:2(1)]\n");
        Path named = script("only-v4.pkt", "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n");
        assertEquals(0, run(t -> { }, "--ip-version", "ipv6", port.toString(), v4only.toString(), named.toString()),
                out + err);
        assertTrue(out.contains("SKIP " + v4only + ": line 2: unknown ICMPv6 code frag_needed for unreachable"), out);
        assertTrue(out.contains("SKIP " + named + ": an IPv4 script (its name ends in v4.pkt)"), out);
        assertTrue(out.endsWith("1/1 passed, 2 skipped (not for --ip-version ipv6)\n"), out);
        assertEquals(List.of("icmpv6 2/0 mtu 1300"), made.get(0).commands);
        // Over IPv4 the ICMPv6-only script is the one skipped.
        assertEquals(0, run(t -> { }, "--ip-version", "ipv4", port.toString()), out + err);
        assertTrue(out.contains("SKIP " + port + ": line 5: unknown ICMPv4 type packet_too_big"), out);
    }
}
