package dev.usnet.tools.packetdrill;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Checks packets the stack sent against a {@code >} line. It takes the next sniffed packet of the connection;
 * unless segments are strict it joins following segments (a TSO/GSO burst the script writes as one) until the
 * payload reaches the script's length, each continuing the previous one's sequence with the same header. Then
 * flags, seq (relative to the stack's ISN), ack, window, urgent pointer, length and options are compared; TS val
 * only with a tick ({@code --tcp_ts_tick_usecs}), within the tolerance; TS ecr exactly (it echoes what the
 * script sent). Timing is the runner's.
 */
final class OutboundMatcher {

    /** The next packet of the connection, or null when none came by the deadline. */
    interface PacketSource {
        LivePacket next();
    }

    sealed interface Result permits Matched, Mismatch {
    }

    /** The (joined) packet, send time that of the last segment. */
    record Matched(LivePacket packet) implements Result {
    }

    /** Why not, and the (joined) packet seen, or null when none came. */
    record Mismatch(String reason, LivePacket actual) implements Result {
    }

    private final Flow flow;
    private final boolean strictSegments;
    private final long tsTickUs;
    private final long toleranceUs;

    OutboundMatcher(Flow flow, boolean strictSegments, long tsTickUs, long toleranceUs) {
        this.flow = flow;
        this.strictSegments = strictSegments;
        this.tsTickUs = tsTickUs;
        this.toleranceUs = toleranceUs;
    }

    Result match(PacketSpec.Tcp script, PacketSource source) {
        LivePacket first = source.next();
        if (first == null) {
            return new Mismatch("expected packet was not sent", null);
        }
        int scriptFlags = TcpFlags.fromLetters(script.flags());
        boolean liveSyn = (first.flags() & TcpFlags.SYN) != 0;
        if ((scriptFlags & TcpFlags.SYN) != 0 && liveSyn) {
            if ((first.flags() & TcpFlags.ACK) == 0) {
                flow.learnPorts(first.srcPort(), first.dstPort());
            }
            flow.learnLocalIsn(script.seq(), first.seq());
        }
        List<LivePacket> frags = new ArrayList<>();
        frags.add(first);
        int total = first.payloadLength();
        while (total < script.payloadLength() && !strictSegments) {
            LivePacket next = source.next();
            if (next == null) {
                break;
            }
            LivePacket prev = frags.get(frags.size() - 1);
            String bad = fragmentMismatch(prev, next, first.payloadLength(), total, script.payloadLength());
            frags.add(next);
            if (bad != null) {
                return new Mismatch(bad + "; " + frags.size() + " segments: " + describeAll(frags), join(frags));
            }
            total += next.payloadLength();
        }
        LivePacket actual = join(frags);
        String bad = compare(script, scriptFlags, actual);
        if (bad != null) {
            return new Mismatch(bad, actual);
        }
        return new Matched(actual);
    }

    private static String fragmentMismatch(LivePacket prev, LivePacket next, int firstLen, int sofar, int expected) {
        int same = ~(TcpFlags.FIN | TcpFlags.PSH | TcpFlags.CWR);
        if ((prev.flags() & same) != (next.flags() & same)) {
            return "segment flags " + TcpFlags.toLetters(next.flags()) + " do not continue "
                    + TcpFlags.toLetters(prev.flags());
        }
        if (next.seq() != ((prev.seq() + prev.payloadLength()) & 0xFFFF_FFFFL)) {
            return "segment does not continue the previous one's sequence";
        }
        if (next.ack() != prev.ack()) {
            return "segment ack differs from the previous one's";
        }
        if (prev.payloadLength() != firstLen) {
            return "fragment payload: expected " + firstLen + " bytes vs actual " + prev.payloadLength()
                    + " bytes before the last segment";
        }
        if (sofar + next.payloadLength() > expected) {
            return "live packet payload: expected " + expected + " bytes vs actual " + (sofar + next.payloadLength())
                    + " bytes";
        }
        return null;
    }

    /** Segments joined: the first's sequence number, the last's header and send time, the payloads summed. */
    private static LivePacket join(List<LivePacket> frags) {
        if (frags.size() == 1) {
            return frags.get(0);
        }
        LivePacket f = frags.get(0);
        LivePacket l = frags.get(frags.size() - 1);
        int total = 0;
        int flags = 0;
        for (LivePacket p : frags) {
            total += p.payloadLength();
            flags |= p.flags();
        }
        return new LivePacket(l.src(), l.dst(), l.protocol(), l.ecn(), l.srcPort(), l.dstPort(), f.seq(), l.ack(),
                flags, l.window(), l.urg(), l.options(), total, -1, -1, l.micros());
    }

    private String compare(PacketSpec.Tcp s, int scriptFlags, LivePacket a) {
        if (!a.tcp()) {
            return "expected a TCP packet, got IP protocol " + a.protocol();
        }
        if (scriptFlags != a.flags()) {
            return "live packet field tcp flags: expected: " + TcpFlags.toLetters(scriptFlags) + " vs actual: "
                    + TcpFlags.toLetters(a.flags());
        }
        String f = field("tcp_seq", s.seq(), flow.localLiveToScript(a.seq()));
        if (f == null && s.ack() != null) {
            f = field("tcp_ack_seq", s.ack(), a.ack());
        }
        if (f == null && s.window() != null) {
            f = field("tcp_window", s.window(), a.window());
        }
        if (f == null && s.urg() != null) {
            f = field("tcp_urg_ptr", s.urg(), a.urg());
        }
        if (f == null && s.payloadLength() != a.payloadLength()) {
            f = "live packet payload: expected " + s.payloadLength() + " bytes vs actual " + a.payloadLength()
                    + " bytes";
        }
        if (f == null && !s.anyOptions()) {
            f = compareOptions(s.options() == null ? List.of() : s.options(), a.options());
        }
        return f;
    }

    private String compareOptions(List<TcpOptionSpec> script, List<TcpOptionSpec> live) {
        if (script.size() != live.size()) {
            return "bad outbound TCP options: expected <" + list(script) + "> vs actual <" + list(live) + ">";
        }
        for (int k = 0; k < script.size(); k++) {
            TcpOptionSpec so = script.get(k);
            TcpOptionSpec lo = live.get(k);
            if (so.kind() != lo.kind()) {
                return "bad outbound TCP options: expected <" + list(script) + "> vs actual <" + list(live) + ">";
            }
            if (so instanceof TcpOptionSpec.Timestamp st && lo instanceof TcpOptionSpec.Timestamp lt) {
                flow.recordTsVal(st.val(), lt.val());
                long normalized = flow.tsValLiveToScript(lt.val());
                long diff = Math.abs((int) (normalized - st.val()));
                if (tsTickUs > 0 && diff * tsTickUs > toleranceUs) {
                    return "bad outbound TCP timestamp value: expected " + st.val() + " vs actual " + normalized
                            + " (live " + lt.val() + "), tick " + tsTickUs + " us, tolerance " + toleranceUs + " us";
                }
                if (st.ecr() != lt.ecr()) {
                    return "bad outbound TCP timestamp echo reply: expected ecr " + st.ecr() + " vs actual "
                            + lt.ecr();
                }
            } else if (so instanceof TcpOptionSpec.Sack ss && lo instanceof TcpOptionSpec.Sack ls) {
                if (!sackEquals(ss, ls)) {
                    return "bad value in outbound TCP option (kind=5): expected: " + ss + " actual: " + ls;
                }
            } else if (!so.equals(lo)) {
                return "bad value in outbound TCP option (kind=" + so.kind() + "): expected: " + so + " actual: " + lo;
            }
        }
        return null;
    }

    private static boolean sackEquals(TcpOptionSpec.Sack a, TcpOptionSpec.Sack b) {
        if (a.blocks().size() != b.blocks().size()) {
            return false;
        }
        for (int k = 0; k < a.blocks().size(); k++) {
            if (a.blocks().get(k)[0] != b.blocks().get(k)[0] || a.blocks().get(k)[1] != b.blocks().get(k)[1]) {
                return false;
            }
        }
        return true;
    }

    private static String field(String name, long expected, long actual) {
        if (expected == actual) {
            return null;
        }
        return String.format(Locale.ROOT, "live packet field %s: expected: %d (0x%x) vs actual: %d (0x%x)", name,
                expected, expected, actual, actual);
    }

    private static String list(List<TcpOptionSpec> l) {
        StringBuilder b = new StringBuilder();
        for (int k = 0; k < l.size(); k++) {
            b.append(k > 0 ? "," : "").append(l.get(k));
        }
        return b.toString();
    }

    /** A live packet as a script line would write it, local sequence numbers relative, TS val in script terms. */
    String describe(LivePacket a) {
        if (!a.tcp()) {
            return a.icmp() ? (a.ipv6() ? "icmpv6" : "icmp") + " type " + a.icmpType() + " code " + a.icmpCode()
                    : "IP protocol " + a.protocol() + " (" + a.payloadLength() + " bytes)";
        }
        long seq = flow.localIsnKnown() ? flow.localLiveToScript(a.seq()) : a.seq();
        StringBuilder b = new StringBuilder(TcpFlags.toLetters(a.flags())).append(' ').append(seq).append(':')
                .append((seq + a.payloadLength()) & 0xFFFF_FFFFL).append('(').append(a.payloadLength()).append(')');
        if ((a.flags() & TcpFlags.ACK) != 0) {
            b.append(" ack ").append(a.ack());
        }
        b.append(" win ").append(a.window());
        if (!a.options().isEmpty()) {
            b.append(" <");
            for (int k = 0; k < a.options().size(); k++) {
                TcpOptionSpec o = a.options().get(k);
                if (o instanceof TcpOptionSpec.Timestamp t) {
                    o = new TcpOptionSpec.Timestamp(flow.tsValLiveToScript(t.val()), t.ecr());
                }
                b.append(k > 0 ? "," : "").append(o);
            }
            b.append('>');
        }
        return b.toString();
    }

    private String describeAll(List<LivePacket> l) {
        StringBuilder b = new StringBuilder();
        for (LivePacket p : l) {
            b.append(b.isEmpty() ? "" : " | ").append(describe(p));
        }
        return b.toString();
    }
}
