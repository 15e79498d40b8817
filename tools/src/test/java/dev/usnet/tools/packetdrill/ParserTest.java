package dev.usnet.tools.packetdrill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ParserTest {

    private static Script parse(String src) {
        return Parser.parse("t.pkt", src);
    }

    private static Event only(String src) {
        List<Event> ev = parse(src).events();
        assertEquals(1, ev.size(), ev.toString());
        return ev.get(0);
    }

    private static ScriptSyntaxException error(String src) {
        return assertThrows(ScriptSyntaxException.class, () -> {
            Script s = parse(src);
            ExprEvaluator ev = new ExprEvaluator(s.file());
            for (Event e : s.events()) {
                if (e.action() instanceof SyscallSpec c) {
                    c.args().forEach(ev::eval);
                }
            }
            ScriptSettings.resolve(s, new ScriptSettings.CommandLine(null, null, java.util.Map.of()), null);
        });
    }

    @Test
    void lexerSplitsBlockingEndTimesRangesAndFlags() {
        List<Token> t = Lexer.tokenize("t", "+0...0.1 +.3~+.31 S. .1 0x2 ...");
        assertEquals(List.of("+", "0", "...", "0.1", "+", ".3", "~", "+", ".31", "S", ".", ".1", "0x2", "...", ""),
                t.stream().map(Token::text).toList());
        assertEquals(Token.Kind.NUMBER, t.get(1).kind());
        assertEquals(Token.Kind.ELLIPSIS, t.get(2).kind());
        assertEquals(Token.Kind.HEX, t.get(12).kind());
    }

    @Test
    void timesAbsoluteRelativeRangesAndAny() {
        Script s = parse("0.100 close(3) = 0\n+.1 close(3) = 0\n+.3~+.31 close(3) = 0\n0.3~0.4 close(3) = 0\n"
                + "* close(3) = 0\n");
        List<EventTime> t = s.events().stream().map(Event::time).toList();
        assertEquals(new EventTime(EventTime.Kind.ABSOLUTE, 100_000, 100_000), t.get(0));
        assertEquals(new EventTime(EventTime.Kind.RELATIVE, 100_000, 100_000), t.get(1));
        assertEquals(new EventTime(EventTime.Kind.RELATIVE_RANGE, 300_000, 310_000), t.get(2));
        assertEquals(new EventTime(EventTime.Kind.ABSOLUTE_RANGE, 300_000, 400_000), t.get(3));
        assertEquals(EventTime.Kind.ANY, t.get(4).kind());
        assertEquals(List.of(1, 2, 3, 4, 5), s.events().stream().map(Event::line).toList());
    }

    @Test
    void blockingCallEndTimeWithAndWithoutPlus() {
        SyscallSpec a = (SyscallSpec) only("+0...0.1 connect(3, ..., ...) = 0").action();
        assertEquals(100_000L, a.endUs());
        SyscallSpec b = (SyscallSpec) only("+0...+.25 accept(3, ..., ...) = 4").action();
        assertEquals(250_000L, b.endUs());
        assertEquals("accept", b.name());
        assertNull(((SyscallSpec) only("+0 close(3) = 0").action()).endUs());
    }

    @Test
    void errnoAndNoteAfterTheResult() {
        Event e = only("+0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n");
        SyscallSpec s = (SyscallSpec) e.action();
        assertEquals("EINPROGRESS", s.errno());
        assertEquals(new Expr.Int(-1, 1), s.result());
        SyscallSpec f = (SyscallSpec) only("+0 fcntl(3, F_GETFL) = 0x2 (flags O_RDWR)").action();
        assertNull(f.errno());
        assertEquals(2L, ((Expr.Int) f.result()).value());
    }

    @Test
    void argumentsEvaluateToLinuxNumbersAndNestedStructs() {
        ExprEvaluator ev = new ExprEvaluator("t");
        SyscallSpec s = (SyscallSpec) only("+0 setsockopt(3, SOL_SOCKET, SO_LINGER, {l_onoff=1, l_linger=0}, 8) = 0")
                .action();
        assertEquals(Value.of(1), ev.eval(s.args().get(1)));
        assertEquals(Value.of(13), ev.eval(s.args().get(2)));
        Value.Struct linger = (Value.Struct) ev.eval(s.args().get(3));
        assertEquals(Value.of(1), linger.fields().get("l_onoff"));
        assertEquals(Value.of(0), linger.fields().get("l_linger"));

        SyscallSpec poll = (SyscallSpec) only("+0...0.010 poll([{fd=3, events=POLLIN|POLLOUT, revents=POLLOUT}], 1,"
                + " 10) = 1").action();
        Value.Array fds = (Value.Array) ev.eval(poll.args().get(0));
        Value.Struct pfd = (Value.Struct) fds.elements().get(0);
        assertEquals(Value.of(5), pfd.fields().get("events"));
        assertEquals(Value.of(4), pfd.fields().get("revents"));

        SyscallSpec msg = (SyscallSpec) only("""
                +0 sendmsg(4, {msg_name(...)=...,
                               msg_iov(2)=[{..., 1000}, {..., 460}],
                               msg_flags=0}, MSG_DONTWAIT) = 1460
                """).action();
        Value.Struct m = (Value.Struct) ev.eval(msg.args().get(1));
        assertEquals(Value.ELLIPSIS, m.fields().get("msg_name"));
        Value.Array iov = (Value.Array) m.fields().get("msg_iov");
        assertEquals(Value.of(460), ((Value.Struct) iov.elements().get(1)).fields().get("iov_len"));
        assertEquals(Value.of(0x40), ev.eval(msg.args().get(2)));

        SyscallSpec ep = (SyscallSpec) only("+0 epoll_ctl(5, EPOLL_CTL_ADD, 4, {events=EPOLLIN|EPOLLET, fd=4}) = 0")
                .action();
        assertEquals(Value.of(0x80000001L), ((Value.Struct) ev.eval(ep.args().get(3))).fields().get("events"));

        SyscallSpec sa = (SyscallSpec) only("+0 bind(3, {sa_family=AF_INET, sin_port=htons(9090), "
                + "sin_addr=inet_addr(\"198.18.0.1\")}, 16) = 0").action();
        Value.Struct addr = (Value.Struct) ev.eval(sa.args().get(1));
        assertEquals(Value.of(9090), addr.fields().get("sin_port"));
        assertEquals(Value.of(0xC6120001L), addr.fields().get("sin_addr"));
        SyscallSpec cc = (SyscallSpec) only("+0 setsockopt(3, IPPROTO_TCP, TCP_CONGESTION, \"reno\", 4) = 0")
                .action();
        assertEquals(new Value.Str("reno"), ev.eval(cc.args().get(3)));
    }

    @Test
    void tcpPacketsWithOptionsSackTimestampsAndAnyOptions() {
        PacketSpec syn = (PacketSpec) only("+0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>")
                .action();
        assertTrue(syn.inbound());
        assertEquals("S", syn.tcp().flags());
        assertEquals(32792, syn.tcp().window());
        assertEquals(List.of(new TcpOptionSpec.Mss(1000), new TcpOptionSpec.SackPermitted(), new TcpOptionSpec.Nop(),
                new TcpOptionSpec.Nop(), new TcpOptionSpec.Nop(), new TcpOptionSpec.WindowScale(7)),
                syn.tcp().options());

        PacketSpec ack = (PacketSpec) only("+.1 < . 1:1(0) ack 1 win 320 <sack 4000:4001 5001:6001,nop,nop>").action();
        TcpOptionSpec.Sack sack = (TcpOptionSpec.Sack) ack.tcp().options().get(0);
        assertEquals(2, sack.blocks().size());
        assertEquals(6001, sack.blocks().get(1)[1]);
        assertEquals(1L, ack.tcp().ack());

        PacketSpec out = (PacketSpec) only("+0 > S. 0:0(0) ack 1 <...>").action();
        assertFalse(out.inbound());
        assertTrue(out.tcp().anyOptions());
        assertEquals("S.", out.tcp().flags());
        assertNull(out.tcp().window());

        PacketSpec ts = (PacketSpec) only("+0 > . 1:1(0) ack 1 <nop,nop,TS val 150 ecr 700>").action();
        assertEquals(new TcpOptionSpec.Timestamp(150, 700), ts.tcp().options().get(2));

        PacketSpec data = (PacketSpec) only("+0 > P. 1:4001(4000) ack 1").action();
        assertEquals(4000, data.tcp().payloadLength());
        assertNull(data.tcp().options());

        PacketSpec ecn = (PacketSpec) only("+0 < [ect0] E. 1:1(0) ack 1 win 257").action();
        assertEquals("ect0", ecn.ecn());
        assertEquals(TcpFlags.ECE | TcpFlags.ACK, TcpFlags.fromLetters(ecn.tcp().flags()));

        PacketSpec big = (PacketSpec) only("+0 < . 4294967290:6(12) ack 1 win 257").action();
        assertEquals(12, big.tcp().payloadLength());
    }

    @Test
    void icmpPacketsQuoteASegment() {
        PacketSpec p = (PacketSpec) only("+0 < icmp unreachable frag_needed mtu 1200 [1:1461(1460)]").action();
        assertEquals(3, p.icmp().type());
        assertEquals(4, p.icmp().code());
        assertEquals(1200, p.icmp().mtu());
        assertEquals(1460, p.icmp().echoed()[2]);
        PacketSpec port = (PacketSpec) only("+0 < icmp unreachable port_unreachable").action();
        assertEquals(3, port.icmp().code());
        assertNull(port.icmp().echoed());
    }

    @Test
    void codeBlocksAndBackticksSpanLines() {
        Script s = parse("""
                `sysctl -q net.ipv4.tcp_sack=1
                sysctl -q net.ipv4.tcp_dsack=1`
                0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0 %{
                assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd
                }%
                +0 close(3) = 0
                """);
        assertEquals(EventTime.Kind.NONE, s.events().get(0).time().kind());
        assertTrue(((Action.Command) s.events().get(0).action()).text().contains("tcp_dsack"));
        assertEquals(3, s.events().get(1).line());
        Action.Code code = (Action.Code) s.events().get(2).action();
        assertEquals(4, code.line());
        assertTrue(code.text().contains("assert tcpi_snd_cwnd == 10"));
        assertEquals(7, s.events().get(3).line());
    }

    @Test
    void optionLinesAtTheTop() {
        Script s = parse("--tolerance_usecs=10000\n--local_ip=192.0.2.1\n--strict_segments\n0 close(3) = 0\n");
        assertEquals(List.of(new ScriptOption("tolerance_usecs", "10000", 1), new ScriptOption("local_ip",
                "192.0.2.1", 2), new ScriptOption("strict_segments", null, 3)), s.options());
        ScriptSettings st = ScriptSettings.resolve(s, new ScriptSettings.CommandLine(null, "6.x", java.util.Map.of()),
                null);
        assertEquals(10_000, st.options().toleranceUs());
        assertEquals(0xC0000201, st.options().localIp());
        assertTrue(st.options().strictSegments());
        // An explicit command-line tolerance wins over the script's.
        ScriptSettings cli = ScriptSettings.resolve(s, new ScriptSettings.CommandLine(25_000L, null,
                java.util.Map.of()), null);
        assertEquals(25_000, cli.options().toleranceUs());
    }

    @Test
    void errorsNameTheLine() {
        assertEquals("t.pkt:2: unknown symbol SO_NOPE",
                error("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 setsockopt(3, SOL_SOCKET, SO_NOPE, [1], 4) = 0")
                        .getMessage());
        assertEquals("t.pkt:1: TCP fast open option (FO) is not supported",
                error("+0 < S 0:0(0) win 100 <mss 1000,FO abcd>").getMessage());
        assertEquals("t.pkt:1: TCP MD5 signature option (md5) is not supported",
                error("+0 < S 0:0(0) win 100 <md5 0011>").getMessage());
        assertEquals("t.pkt:1: --ip_version: unknown IP version ipv7: ipv4, ipv4-mapped-ipv6 or ipv6",
                error("--ip_version=ipv7\n0 close(3) = 0").getMessage());
        assertEquals("t.pkt:2: --local_ip: not an IPv6 address: 198.18.0.9",
                error("--ip_version=ipv6\n--local_ip=198.18.0.9\n0 close(3) = 0").getMessage());
        assertEquals("t.pkt:2: unknown ICMPv6 code frag_needed for unreachable (--ip_version=ipv6)",
                error("--ip_version=ipv6\n+0 < icmp unreachable frag_needed mtu 1200 [1:2(1)]").getMessage());
        assertEquals("t.pkt:1: unknown ICMPv4 type packet_too_big (--ip_version=ipv4)",
                error("+0 < icmp packet_too_big mtu 1280 [1:2(1)]").getMessage());
        assertEquals("t.pkt:1: unknown or unsupported option --speed", error("--speed=10\n").getMessage());
        assertEquals("t.pkt:3: an inbound packet needs a window (win N)",
                error("0 close(3) = 0\n\n+0 < . 1:1(0) ack 1").getMessage());
        assertTrue(error("+0 < . 1:5(3) ack 1 win 10").getMessage().startsWith("t.pkt:1: inconsistent sequence"));
        assertTrue(error("+0 > Z 0:0(0)").getMessage().startsWith("t.pkt:1: unknown TCP flag 'Z'"));
        assertTrue(error("0 close(3) = 0\n+0 %{ assert 1\n").getMessage().startsWith("t.pkt:2: code block %{ not"));
        assertTrue(error("+0 < udp (10)").getMessage().contains("UDP packets are not supported"));
        assertTrue(error("0.1~+.2 close(3) = 0").getMessage().startsWith("t.pkt:1: a time range is either"));
        assertTrue(error("0 close(3) = 0\n+0 frobnicate").getMessage().startsWith("t.pkt:2: expected '('"));
        assertTrue(error("+0 < icmp unreachable frag_needed [1:2(1)] mtu 100").getMessage().startsWith("t.pkt:1:"));
    }

    @Test
    void ipVersionFromTheScriptOrTheCommandLineDecidesAddressesMtuAndFamily() {
        Script s = parse("--ip_version=ipv6\n--remote_ip=2001:db8::7\n--mtu=1500\n0 close(3) = 0\n");
        ScriptOptions o = ScriptSettings.resolve(s, new ScriptSettings.CommandLine(null, null, java.util.Map.of()),
                null).options();
        assertEquals(IpVersion.IPV6, o.ipVersion());
        assertEquals(IpVersion.AF_INET6, o.ipVersion().socketFamily());
        assertEquals("fd00:198:18::1", Ipv6.format(o.localWireAddress()));
        assertEquals("2001:db8::7", Ipv6.format(o.remoteWireAddress()));
        assertEquals("2001:db8::7", Ipv6.format(o.remoteSocketAddress()));
        assertEquals(64, o.ipv6().prefixLength());
        assertEquals(1520, o.mtu(), "20 more than the script's: the MSS stays MTU - 40 of IPv4");

        // The command line wins over the script's --ip_version, as in packetdrill.
        Script v4 = parse("--ip_version=ipv6\n0 close(3) = 0\n");
        ScriptOptions mapped = ScriptSettings.resolve(v4, new ScriptSettings.CommandLine(null, null,
                java.util.Map.of(), IpVersion.IPV4_MAPPED_IPV6), null).options();
        assertEquals(IpVersion.AF_INET6, mapped.ipVersion().socketFamily());
        assertEquals(4, mapped.localWireAddress().length, "IPv4 packets on the wire");
        assertEquals(1500, mapped.mtu());
        assertEquals("::ffff:c612:1", Ipv6.format(mapped.localSocketAddress()));
        assertEquals(null, mapped.ipv6());

        ScriptOptions plain = ScriptSettings.resolve(parse("0 close(3) = 0\n"), new ScriptSettings.CommandLine(null,
                null, java.util.Map.of()), null).options();
        assertEquals(IpVersion.IPV4, plain.ipVersion());
        assertEquals(4, plain.localSocketAddress().length);
    }

    @Test
    void icmpLinesTakeTheNumbersOfTheVersionTheyRunOver() {
        PacketSpec.Icmp port = ((PacketSpec) parse("+0 < icmp unreachable port_unreachable [0:0(0)]").events().get(0)
                .action()).icmp();
        assertEquals(3, IcmpNames.type(port, false));
        assertEquals(3, IcmpNames.code(port, false));
        assertEquals(1, IcmpNames.type(port, true), "ICMPv6 destination unreachable");
        assertEquals(4, IcmpNames.code(port, true), "ICMPv6 port unreachable");
        PacketSpec.Icmp big = ((PacketSpec) parse("+0 < icmp packet_too_big mtu 1280 [1:2(1)]").events().get(0)
                .action()).icmp();
        assertEquals(null, IcmpNames.problem(big, true));
        assertEquals(2, IcmpNames.type(big, true));
        assertEquals(1280, big.mtu());
    }
}
