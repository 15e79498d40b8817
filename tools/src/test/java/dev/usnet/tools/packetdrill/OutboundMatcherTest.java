package dev.usnet.tools.packetdrill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutboundMatcherTest {
    private static final byte[] LOCAL = {(byte) 198, 18, 0, 1};
    private static final byte[] REMOTE = {(byte) 198, 18, 0, 2};
    private static final long ISN = 3_000_000_000L;

    private final PacketBuilder builder = new PacketBuilder();

    private LivePacket live(long seq, int flags, int len, List<TcpOptionSpec> opts, long micros) {
        byte[] p = builder.tcp(LOCAL, REMOTE, 0, 8080, 48000, seq & 0xFFFFFFFFL, 1, flags, 502, 0, opts, len);
        return LivePacket.decode(p, micros);
    }

    private static PacketSpec.Tcp script(String line) {
        return ((PacketSpec) Parser.parse("t", line).events().get(0).action()).tcp();
    }

    private static OutboundMatcher.PacketSource source(LivePacket... packets) {
        ArrayDeque<LivePacket> q = new ArrayDeque<>(List.of(packets));
        return q::poll;
    }

    private static Flow handshaken() {
        Flow f = new Flow();
        f.learnLocalIsn(0, ISN);
        return f;
    }

    @Test
    void synAckTeachesTheIsnAndLaterSequenceNumbersAreRelative() {
        Flow flow = new Flow();
        OutboundMatcher m = new OutboundMatcher(flow, false, 0, 4000);
        var r = m.match(script("+0 > S. 0:0(0) ack 1 <mss 1460>"),
                source(live(ISN, TcpFlags.SYN | TcpFlags.ACK, 0, List.of(new TcpOptionSpec.Mss(1460)), 0)));
        assertInstanceOf(OutboundMatcher.Matched.class, r);
        var data = m.match(script("+0 > P. 1:1001(1000) ack 1"),
                source(live(ISN + 1, TcpFlags.PSH | TcpFlags.ACK, 1000, null, 10)));
        assertInstanceOf(OutboundMatcher.Matched.class, data);
        var wrong = m.match(script("+0 > P. 1:1001(1000) ack 1"),
                source(live(ISN + 1001, TcpFlags.PSH | TcpFlags.ACK, 1000, null, 10)));
        assertEquals("live packet field tcp_seq: expected: 1 (0x1) vs actual: 1001 (0x3e9)",
                ((OutboundMatcher.Mismatch) wrong).reason());
    }

    @Test
    void consecutiveSegmentsAreJoinedUntilTheScriptLength() {
        OutboundMatcher m = new OutboundMatcher(handshaken(), false, 0, 4000);
        var r = m.match(script("+0 > P. 1:3001(3000) ack 1"), source(
                live(ISN + 1, TcpFlags.ACK, 1000, null, 100),
                live(ISN + 1001, TcpFlags.ACK, 1000, null, 150),
                live(ISN + 2001, TcpFlags.PSH | TcpFlags.ACK, 1000, null, 200)));
        LivePacket joined = ((OutboundMatcher.Matched) r).packet();
        assertEquals(3000, joined.payloadLength());
        assertEquals(200, joined.micros(), "the send time of a joined burst is its last segment's");
        assertEquals(TcpFlags.PSH | TcpFlags.ACK, joined.flags());
    }

    @Test
    void strictSegmentsAreNotJoined() {
        OutboundMatcher m = new OutboundMatcher(handshaken(), true, 0, 4000);
        var r = m.match(script("+0 > P. 1:2001(2000) ack 1"), source(
                live(ISN + 1, TcpFlags.ACK, 1000, null, 100),
                live(ISN + 1001, TcpFlags.PSH | TcpFlags.ACK, 1000, null, 100)));
        assertEquals("live packet field tcp flags: expected: P. vs actual: .",
                ((OutboundMatcher.Mismatch) r).reason());
    }

    @Test
    void aGapOrAnUnevenSplitIsNotAJoin() {
        OutboundMatcher m = new OutboundMatcher(handshaken(), false, 0, 4000);
        var gap = m.match(script("+0 > P. 1:2001(2000) ack 1"), source(
                live(ISN + 1, TcpFlags.ACK, 1000, null, 100),
                live(ISN + 1501, TcpFlags.PSH | TcpFlags.ACK, 1000, null, 100)));
        assertTrue(((OutboundMatcher.Mismatch) gap).reason().startsWith("segment does not continue"));
        var tooMuch = m.match(script("+0 > P. 1:1501(1500) ack 1"), source(
                live(ISN + 1, TcpFlags.ACK, 1000, null, 100),
                live(ISN + 1001, TcpFlags.PSH | TcpFlags.ACK, 1000, null, 100)));
        assertTrue(((OutboundMatcher.Mismatch) tooMuch).reason().startsWith("live packet payload: expected 1500"));
        var none = m.match(script("+0 > P. 1:1001(1000) ack 1"), source());
        assertNull(((OutboundMatcher.Mismatch) none).actual());
    }

    @Test
    void optionsCompareInOrderUnlessAnyAndWindowOnlyWhenWritten() {
        OutboundMatcher m = new OutboundMatcher(new Flow(), false, 0, 4000);
        List<TcpOptionSpec> opts = List.of(new TcpOptionSpec.Mss(1460), new TcpOptionSpec.Nop(),
                new TcpOptionSpec.Nop(), new TcpOptionSpec.SackPermitted(), new TcpOptionSpec.Nop(),
                new TcpOptionSpec.WindowScale(10));
        LivePacket synAck = live(ISN, TcpFlags.SYN | TcpFlags.ACK, 0, opts, 0);
        assertInstanceOf(OutboundMatcher.Matched.class,
                m.match(script("+0 > S. 0:0(0) ack 1 <...>"), source(synAck)));
        var bad = m.match(script("+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 9>"), source(synAck));
        assertEquals("bad value in outbound TCP option (kind=3): expected: wscale 9 actual: wscale 10",
                ((OutboundMatcher.Mismatch) bad).reason());
        var missing = m.match(script("+0 > S. 0:0(0) ack 1"), source(synAck));
        assertTrue(((OutboundMatcher.Mismatch) missing).reason().startsWith("bad outbound TCP options"));
        var win = m.match(script("+0 > S. 0:0(0) ack 1 win 500 <...>"), source(synAck));
        assertEquals("live packet field tcp_window: expected: 500 (0x1f4) vs actual: 502 (0x1f6)",
                ((OutboundMatcher.Mismatch) win).reason());
    }

    @Test
    void timestampValsMapToLiveOnesAndAreCheckedOnlyWithATick() {
        Flow flow = handshaken();
        OutboundMatcher noTick = new OutboundMatcher(flow, false, 0, 4000);
        var first = noTick.match(script("+0 > . 1:1(0) ack 1 <nop,nop,TS val 100 ecr 700>"), source(
                live(ISN + 1, TcpFlags.ACK, 0, List.of(new TcpOptionSpec.Nop(), new TcpOptionSpec.Nop(),
                        new TcpOptionSpec.Timestamp(555_000, 700)), 0)));
        assertInstanceOf(OutboundMatcher.Matched.class, first);
        assertEquals(555_000L, flow.tsEcrScriptToLive(100, false), "script TS val 100 stands for live 555000");
        assertNull(flow.tsEcrScriptToLive(101, false));
        assertEquals(555_001L, flow.tsEcrScriptToLive(101, true), "--tcp_ts_ecr_scaled interpolates");

        // 40 ticks later on the wire, the script says 10 ticks: fine without a tick, a failure with 1 ms ticks.
        LivePacket later = live(ISN + 1, TcpFlags.ACK, 0, List.of(new TcpOptionSpec.Nop(), new TcpOptionSpec.Nop(),
                new TcpOptionSpec.Timestamp(555_040, 700)), 40_000);
        assertInstanceOf(OutboundMatcher.Matched.class,
                noTick.match(script("+0 > . 1:1(0) ack 1 <nop,nop,TS val 110 ecr 700>"), source(later)));
        OutboundMatcher ticked = new OutboundMatcher(flow, false, 1000, 4000);
        var r = ticked.match(script("+0 > . 1:1(0) ack 1 <nop,nop,TS val 110 ecr 700>"), source(later));
        assertTrue(((OutboundMatcher.Mismatch) r).reason().startsWith("bad outbound TCP timestamp value: expected 110"
                + " vs actual 140"), ((OutboundMatcher.Mismatch) r).reason());
        assertInstanceOf(OutboundMatcher.Matched.class,
                ticked.match(script("+0 > . 1:1(0) ack 1 <nop,nop,TS val 137 ecr 700>"), source(later)),
                "3 ticks of 1 ms are within 4 ms");
        var ecr = noTick.match(script("+0 > . 1:1(0) ack 1 <nop,nop,TS val 140 ecr 701>"), source(later));
        assertEquals("bad outbound TCP timestamp echo reply: expected ecr 701 vs actual 700",
                ((OutboundMatcher.Mismatch) ecr).reason());
    }

    @Test
    void outboundSackBlocksAreInTheScriptsOwnSequenceSpace() {
        OutboundMatcher m = new OutboundMatcher(handshaken(), false, 0, 4000);
        LivePacket sack = live(ISN + 1, TcpFlags.ACK, 0, List.of(new TcpOptionSpec.Nop(), new TcpOptionSpec.Nop(),
                new TcpOptionSpec.Sack(List.<long[]>of(new long[] {1001, 2001}))), 0);
        assertInstanceOf(OutboundMatcher.Matched.class,
                m.match(script("+0 > . 1:1(0) ack 1 <nop,nop,sack 1001:2001>"), source(sack)));
        assertInstanceOf(OutboundMatcher.Mismatch.class,
                m.match(script("+0 > . 1:1(0) ack 1 <nop,nop,sack 1001:2002>"), source(sack)));
    }
}
