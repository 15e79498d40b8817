package dev.usnet.tools.packetdrill;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Plays one parsed script against a started-or-not {@link Target}: the script's time line, packets in and out,
 * system calls, commands and code blocks, as packetdrill runs them.
 *
 * <p>Time: an absolute time is script time; a relative one counts from the moment the previous event finished
 * (target time then), except that consecutive inbound packets are anchored to each other's script times so they
 * do not drift, and an event after a {@code >} line counts from when that packet was sent. packetdrill counts
 * from the moment its sniffer handed the packet over, which is the send time give or take microseconds; a
 * target whose sniffer is slower (a JVM thread on a loaded machine) would otherwise shift every later event by
 * its latency. The tolerance applies to each event's time so computed, hence relative to the previous event.
 *
 * <p>Packets are compared only at {@code >} lines: what the stack sends meanwhile waits in the target's queue and
 * is the next candidate at the next {@code >} line; packets left when the script ends do not fail it.
 *
 * <p>A system call with an end time ({@code +0...0.1 accept(...)}) may block: the script goes on with the next
 * events and checks its result and return time once it returned (at the latest when the script ends). A call
 * without one must return at once (within the tolerance).
 */
final class Runner {
    /** How long a call waits for a previous blocking call to return, as packetdrill does. */
    private static final long AWAIT_BLOCKING_US = 1_000_000;
    /** How long past its latest time an expected packet is waited for, to report what came late. */
    private static final long LATE_PACKET_GRACE_US = 1_000_000;
    /** A {@code *} packet line waits at most this long. */
    private static final long ANY_TIME_WAIT_US = 600_000_000L;

    private final Script script;
    private final ScriptSettings settings;
    private final ScriptOptions options;
    private final Target target;
    private final PrintWriter verbose;
    private final Flow flow = new Flow();
    private final PacketBuilder builder = new PacketBuilder();
    private final ExprEvaluator evaluator;
    private final OutboundMatcher matcher;
    private final long tolerance;
    private final Map<String, Object> codeVariables = new HashMap<>();
    /** The addresses on the test device's packets: 4 bytes, or 16 over IPv6. */
    private final byte[] localWire;
    private final byte[] remoteWire;
    private final boolean ipv6;

    private Event lastEvent;
    private long lastEventStart;
    /** When the packet the last {@code >} line matched was sent (its last segment's time). */
    private long lastOutboundMicros;
    private boolean firstTimedEvent = true;
    private Integer socketUnderTest;
    private Pending pending;

    /**
     * packetdrill's default --tolerance_percent: an event may also be off by this share of the scripted time since
     * the previous event, so that the kernel's coarser timers for long timeouts (a 1 s SYN retransmission fires
     * tens of ms late at HZ=250, a 4 s one up to 256 ms) pass as they do under packetdrill.
     */
    static final double TOLERANCE_PERCENT = 12.5;

    private record Pending(Event event, SyscallSpec spec, List<Value> args, PendingCall call, long expectedEnd,
                           long startedAt) {
    }

    Runner(Script script, ScriptSettings settings, Target target, PrintWriter verbose) {
        this.script = script;
        this.settings = settings;
        this.options = settings.options();
        this.target = target;
        this.verbose = verbose;
        this.evaluator = new ExprEvaluator(script.file());
        this.tolerance = options.toleranceUs();
        this.matcher = new OutboundMatcher(flow, options.strictSegments(), options.tcpTsTickUs(), tolerance);
        flow.localPort = settings.bindPort();
        this.localWire = options.localWireAddress();
        this.remoteWire = options.remoteWireAddress();
        this.ipv6 = options.ipVersion().ipv6Wire();
    }

    /**
     * Runs the script on an opened target: the commands before the first timed event (the usual
     * {@code `../defaults.sh`}) before the clock starts, as packetdrill runs its init command, then
     * {@link Target#start}, then every event. Throws {@link ScriptFailure} at the first that does not hold.
     */
    void run() {
        List<Event> events = script.events();
        int k = 0;
        for (; k < events.size() && events.get(k).time().kind() == EventTime.Kind.NONE; k++) {
            Event e = events.get(k);
            try {
                log("line " + e.line() + " `" + ((Action.Command) e.action()).text().strip() + "` (before the start)");
                target.command(((Action.Command) e.action()).text(), e.line());
            } catch (TargetException ex) {
                throw fail(e.line(), ex.getMessage());
            }
        }
        target.start();
        for (; k < events.size(); k++) {
            finishPendingIfDone();
            runEvent(events.get(k));
        }
        finishPendingAtEnd();
    }

    private ScriptFailure fail(int line, String reason) {
        return new ScriptFailure(script.file(), line, reason, "");
    }

    private void log(String s) {
        if (verbose != null) {
            verbose.println(s);
            verbose.flush();
        }
    }

    private static boolean isInboundPacket(Event e) {
        return e != null && e.action() instanceof PacketSpec p && p.inbound();
    }

    private void runEvent(Event e) {
        EventTime t = e.time();
        long now = target.nowMicros();
        long start;
        long end;
        switch (t.kind()) {
            case NONE, ANY -> {
                start = now;
                end = now;
            }
            case ABSOLUTE, ABSOLUTE_RANGE -> {
                start = t.startUs();
                end = t.endUs();
            }
            default -> {
                long offset = now;
                if (isInboundPacket(lastEvent) && isInboundPacket(e)) {
                    offset = lastEventStart;
                } else if (lastEvent != null && lastEvent.action() instanceof PacketSpec p && !p.inbound()) {
                    offset = lastOutboundMicros;
                }
                start = offset + t.startUs();
                end = offset + t.endUs();
            }
        }
        if (t.kind() != EventTime.Kind.NONE) {
            if (firstTimedEvent && (t.kind() == EventTime.Kind.ABSOLUTE || t.kind() == EventTime.Kind.ABSOLUTE_RANGE)
                    && t.startUs() != 0) {
                throw fail(e.line(), "first event should be at time 0");
            }
            if (lastEvent != null && !lastEvent.time().relative() && lastEvent.time().kind() != EventTime.Kind.ANY
                    && lastEvent.time().kind() != EventTime.Kind.NONE && !t.relative()
                    && t.kind() != EventTime.Kind.ANY && start < lastEventStart) {
                throw fail(e.line(), "time goes backward in script from " + lastEventStart + " usec to " + start
                        + " usec");
            }
            firstTimedEvent = false;
        }
        try {
            switch (e.action()) {
                case PacketSpec p when p.inbound() -> inbound(e, p, start, end);
                case PacketSpec p -> outbound(e, p, start, end);
                case SyscallSpec s -> syscall(e, s, start, end, now);
                case Action.Command c -> command(e, c, start, end);
                case Action.Code c -> code(e, c, start, end);
            }
        } catch (TargetException ex) {
            throw fail(e.line(), ex.getMessage());
        }
        lastEvent = e;
        lastEventStart = start;
    }

    // ---- time ----

    private void waitUntil(Event e, long start) {
        if (e.time().kind() != EventTime.Kind.NONE && e.time().kind() != EventTime.Kind.ANY
                && start > target.nowMicros()) {
            target.advanceTo(start);
        }
    }

    /** The tolerance for an event scripted at {@code micros}: the fixed one, or 12.5 % of the time since the last event. */
    private long toleranceAt(long micros, long since) {
        if (lastEvent == null) {
            return tolerance;
        }
        return Math.max(tolerance, (long) (TOLERANCE_PERCENT / 100.0 * Math.max(0, micros - since)));
    }

    /** packetdrill's time check: within the tolerance of the time, or of the range. */
    private String timingError(EventTime t, long start, long end, long actual, String what) {
        if (t.kind() == EventTime.Kind.ANY || t.kind() == EventTime.Kind.NONE) {
            return null;
        }
        long tolerance = toleranceAt(start, lastEventStart);
        if (t.range()) {
            if (actual >= start - tolerance && actual <= end + tolerance) {
                return null;
            }
            if (t.kind() == EventTime.Kind.RELATIVE_RANGE) {
                long offset = start - t.startUs();
                return "timing error: expected " + what + " in relative time range +" + Micros.seconds(t.startUs())
                        + "~+" + Micros.seconds(t.endUs()) + " sec but happened at +"
                        + Micros.seconds(actual - offset) + " sec";
            }
            return "timing error: expected " + what + " in time range " + Micros.seconds(start) + "~"
                    + Micros.seconds(end) + " sec but happened at " + Micros.seconds(actual) + " sec";
        }
        if (actual < start - tolerance || actual > start + tolerance) {
            return "timing error: expected " + what + " at " + Micros.seconds(start) + " sec but happened at "
                    + Micros.seconds(actual) + " sec; tolerance " + Micros.seconds(tolerance) + " sec";
        }
        return null;
    }

    private void checkTime(Event e, long start, long end, String what) {
        String err = timingError(e.time(), start, end, target.nowMicros(), what);
        if (err != null) {
            throw fail(e.line(), err);
        }
    }

    // ---- packets ----

    private void inbound(Event e, PacketSpec p, long start, long end) {
        waitUntil(e, start);
        checkTime(e, start, end, "inbound packet");
        byte[] bytes = p.tcp() != null ? inboundTcp(e, p) : inboundIcmp(p.icmp());
        log(Micros.seconds(target.nowMicros()) + " line " + e.line() + " inject " + p.describe());
        target.inject(bytes);
    }

    private static int ecnBits(String ecn) {
        if (ecn == null) {
            return 0;
        }
        return switch (ecn) {
            case "ect0" -> 2;
            case "ect1" -> 1;
            case "ce" -> 3;
            default -> 0;
        };
    }

    private byte[] inboundTcp(Event e, PacketSpec p) {
        PacketSpec.Tcp s = p.tcp();
        int flags = TcpFlags.fromLetters(s.flags());
        boolean ack = (flags & TcpFlags.ACK) != 0;
        if ((flags & TcpFlags.SYN) != 0 && !ack) {
            flow.inboundSynSent = true;
        }
        long liveAck = s.ack() == null ? 0 : ack ? flow.localScriptToLive(s.ack()) : s.ack();
        List<TcpOptionSpec> opts = null;
        if (s.options() != null) {
            opts = new ArrayList<>();
            for (TcpOptionSpec o : s.options()) {
                if (o instanceof TcpOptionSpec.Sack sack) {
                    List<long[]> blocks = new ArrayList<>();
                    for (long[] b : sack.blocks()) {
                        blocks.add(new long[] {flow.localScriptToLive(b[0]), flow.localScriptToLive(b[1])});
                    }
                    o = new TcpOptionSpec.Sack(blocks);
                } else if (o instanceof TcpOptionSpec.Timestamp ts && ack) {
                    Long live = flow.tsEcrScriptToLive(ts.ecr(), settings.tsEcrScaled());
                    if (live == null) {
                        throw fail(e.line(), "error handling packet: unable to infer live TS ecr for script TS ecr "
                                + ts.ecr() + "; no matching or preceding outbound TS val");
                    }
                    o = new TcpOptionSpec.Timestamp(ts.val(), live);
                }
                opts.add(o);
            }
        }
        return builder.tcp(remoteWire, localWire, ecnBits(p.ecn()), flow.remotePort,
                flow.localPort, s.seq(), liveAck, flags, s.window(), s.urg() == null ? 0 : s.urg(), opts,
                s.payloadLength());
    }

    private byte[] inboundIcmp(PacketSpec.Icmp icmp) {
        long seq = icmp.echoed() != null ? icmp.echoed()[0] : 0;
        int len = icmp.echoed() != null ? (int) icmp.echoed()[2] : 0;
        if (ipv6) {
            return builder.icmpv6(remoteWire, localWire, IcmpNames.type(icmp, true), IcmpNames.code(icmp, true),
                    icmp.mtu() == null ? 0 : Integer.toUnsignedLong(icmp.mtu()), localWire, remoteWire,
                    flow.localPort, flow.remotePort, flow.localScriptToLive(seq), len);
        }
        return builder.icmp(options.remoteIp(), options.localIp(), IcmpNames.type(icmp, false),
                IcmpNames.code(icmp, false),
                icmp.mtu() == null ? 0 : icmp.mtu(), options.localIp(), options.remoteIp(), flow.localPort,
                flow.remotePort, flow.localScriptToLive(seq), len);
    }

    /** ICMPv6 types 130-143 (MLD queries and reports, router/neighbour solicitation and advertisement, redirect). */
    private static boolean neighbourDiscoveryOrMld(byte[] p) {
        if (p.length <= PacketBuilder.IPV6_HEADER_LEN || (p[6] & 255) != LivePacket.PROTO_ICMPV6) {
            return false;
        }
        int type = p[PacketBuilder.IPV6_HEADER_LEN] & 255;
        return type >= 130 && type <= 143;
    }

    /** The next packet the stack sent on this connection by {@code deadline}, skipping others. */
    private LivePacket nextLive(long deadline, PacketSpec.Tcp expecting, int line) {
        while (true) {
            Sniffed s = target.sniff(deadline);
            if (s == null) {
                return null;
            }
            int version = s.ipPacket().length == 0 ? 0 : s.ipPacket()[0] >> 4 & 15;
            if (version != (ipv6 ? 6 : 4)) {
                // IPv6 the kernel may send on its own while the script runs over IPv4: not the script's business.
                log(Micros.seconds(s.micros()) + " ignored (not IPv" + (ipv6 ? 6 : 4) + ", " + s.ipPacket().length
                        + " bytes)");
                continue;
            }
            if (ipv6 && neighbourDiscoveryOrMld(s.ipPacket())) {
                // A stack's own NDP and MLD (RFC 4861, RFC 3810): link business, not the script's.
                log(Micros.seconds(s.micros()) + " ignored (ICMPv6 type " + (s.ipPacket()[40] & 255) + ")");
                continue;
            }
            LivePacket lp;
            try {
                lp = LivePacket.decode(s.ipPacket(), s.micros());
            } catch (IllegalArgumentException ex) {
                throw fail(line, "the stack sent a packet that cannot be decoded: " + ex.getMessage());
            }
            if (!PacketBuilder.checksumsValid(s.ipPacket())) {
                throw fail(line, "the stack sent a packet with a bad checksum: " + matcher.describe(lp));
            }
            if (expecting == null) {
                return lp;
            }
            if (!lp.tcp() || !java.util.Arrays.equals(lp.src(), localWire)) {
                log(Micros.seconds(lp.micros()) + " ignored (not TCP from the local address): "
                        + matcher.describe(lp));
                continue;
            }
            boolean newActiveOpen = expecting.has('S') && !expecting.has('.') && (lp.flags() & TcpFlags.SYN) != 0;
            boolean known = flow.portsFromWire || flow.inboundSynSent;
            if (known && !newActiveOpen && (lp.srcPort() != flow.localPort || lp.dstPort() != flow.remotePort)) {
                log(Micros.seconds(lp.micros()) + " ignored (another connection " + lp.srcPort() + ">"
                        + lp.dstPort() + "): " + matcher.describe(lp));
                continue;
            }
            return lp;
        }
    }

    private void outbound(Event e, PacketSpec p, long start, long end) {
        long deadline = e.time().kind() == EventTime.Kind.ANY ? target.nowMicros() + ANY_TIME_WAIT_US
                : Math.max(start, end) + tolerance + LATE_PACKET_GRACE_US;
        String scriptLine = "script packet:  " + Micros.seconds(start) + " " + p.describe().substring(2);
        if (p.icmp() != null) {
            LivePacket lp = nextLive(deadline, null, e.line());
            int type = IcmpNames.type(p.icmp(), ipv6);
            int code = IcmpNames.code(p.icmp(), ipv6);
            if (lp == null || !lp.icmp() || lp.icmpType() != type || lp.icmpCode() != code) {
                String why = lp == null ? "expected ICMP packet was not sent"
                        : "expected an ICMP" + (ipv6 ? "v6" : "") + " type " + type + " code " + code;
                String actual = lp == null ? "" : "\nactual packet:  " + Micros.seconds(lp.micros()) + " "
                        + matcher.describe(lp);
                throw new ScriptFailure(script.file(), e.line(), "error handling packet: " + why, scriptLine + actual);
            }
            timing(e, start, end, lp, scriptLine);
            lastOutboundMicros = lp.micros();
            return;
        }
        OutboundMatcher.Result r = matcher.match(p.tcp(), () -> nextLive(deadline, p.tcp(), e.line()));
        switch (r) {
            case OutboundMatcher.Mismatch m -> {
                String details = scriptLine + (m.actual() == null ? "\nactual packet: none by "
                        + Micros.seconds(deadline) + " sec" : "\nactual packet:  " + Micros.seconds(m.actual().micros())
                        + " " + matcher.describe(m.actual()));
                throw new ScriptFailure(script.file(), e.line(), "error handling packet: " + m.reason(), details);
            }
            case OutboundMatcher.Matched m -> {
                log(Micros.seconds(m.packet().micros()) + " line " + e.line() + " matched "
                        + matcher.describe(m.packet()));
                timing(e, start, end, m.packet(), scriptLine);
                lastOutboundMicros = m.packet().micros();
            }
        }
    }

    private void timing(Event e, long start, long end, LivePacket lp, String scriptLine) {
        String err = timingError(e.time(), start, end, lp.micros(), "outbound packet");
        if (err != null) {
            throw new ScriptFailure(script.file(), e.line(), "error handling packet: " + err,
                    scriptLine + "\nactual packet:  " + Micros.seconds(lp.micros()) + " " + matcher.describe(lp));
        }
    }

    // ---- system calls ----

    private void syscall(Event e, SyscallSpec s, long start, long end, long offsetNow) {
        waitUntil(e, start);
        // The start time is checked before the arguments are evaluated: on a real clock the first evaluation can
        // load classes for tens of ms, which is the runner's time, not the call's.
        checkTime(e, start, end, "system call start");
        List<Value> args = new ArrayList<>();
        for (Expr a : s.args()) {
            args.add(evaluator.eval(a));
        }
        if (s.errno() != null && Symbols.errno(s.errno()) == null) {
            throw new ScriptSyntaxException(script.file(), e.line(), "unknown errno name " + s.errno());
        }
        evaluator.eval(s.result());
        boolean blocking = s.endUs() != null;
        if (pending != null) {
            target.awaitCall(pending.call(), target.nowMicros() + AWAIT_BLOCKING_US);
            finishPendingIfDone();
            if (pending != null && blocking) {
                throw fail(e.line(), "blocking system call while another blocking system call (line "
                        + pending.event().line() + ") is already in progress");
            }
        }
        notePorts(s.name(), args);
        if (verbose != null) {
            StringBuilder b = new StringBuilder();
            args.forEach(a -> b.append(b.isEmpty() ? "" : ", ").append(a));
            log(Micros.seconds(target.nowMicros()) + " line " + e.line() + " " + s.name() + "(" + b + ")");
        }
        PendingCall call = target.call(new Syscall(s.name(), List.copyOf(args), e.line()));
        if (blocking) {
            long base = e.time().relative() ? start - e.time().startUs() : 0;
            if (e.time().kind() == EventTime.Kind.ANY) {
                base = offsetNow;
            }
            long expectedEnd = base + s.endUs();
            Pending pc = new Pending(e, s, args, call, expectedEnd, start);
            if (call.isDone()) {
                finish(pc);
            } else {
                pending = pc;
            }
            return;
        }
        if (!call.isDone() && !target.awaitCall(call, target.nowMicros() + tolerance)) {
            throw fail(e.line(), s.name() + " did not return; a call that blocks needs an end time, e.g. "
                    + "+0...0.100 " + s.name() + "(...)");
        }
        verifyResult(e, s, args, call.result());
    }

    /** The ports of a {@code bind}/{@code connect} with a spelled-out address replace packetdrill's defaults. */
    private void notePorts(String name, List<Value> args) {
        if (args.size() < 2 || !(args.get(1) instanceof Value.Struct sa)
                || !(sa.fields().get("sin_port") instanceof Value.Int port)) {
            if (name.equals("connect")) {
                flow.remotePort = settings.connectPort();
            }
            return;
        }
        if (name.equals("bind")) {
            flow.localPort = (int) port.value();
        } else if (name.equals("connect")) {
            flow.remotePort = (int) port.value();
        }
    }

    private void finishPendingIfDone() {
        if (pending != null && pending.call().isDone()) {
            Pending p = pending;
            pending = null;
            finish(p);
        }
    }

    private void finishPendingAtEnd() {
        if (pending == null) {
            return;
        }
        Pending p = pending;
        if (!target.awaitCall(p.call(), p.expectedEnd() + tolerance + AWAIT_BLOCKING_US)) {
            throw fail(p.event().line(), "runtime error: exiting while a blocking " + p.spec().name()
                    + " call is in progress (expected to return at " + Micros.seconds(p.expectedEnd()) + " sec)");
        }
        pending = null;
        finish(p);
    }

    private void finish(Pending p) {
        long actual = p.call().endMicros();
        long tolerance = Math.max(this.tolerance,
                (long) (TOLERANCE_PERCENT / 100.0 * Math.max(0, p.expectedEnd() - p.startedAt())));
        if (Math.abs(actual - p.expectedEnd()) > tolerance) {
            throw fail(p.event().line(), "timing error: expected system call return at "
                    + Micros.seconds(p.expectedEnd()) + " sec but happened at " + Micros.seconds(actual)
                    + " sec; tolerance " + Micros.seconds(tolerance) + " sec");
        }
        verifyResult(p.event(), p.spec(), p.args(), p.call().result());
    }

    private void verifyResult(Event e, SyscallSpec s, List<Value> args, SyscallResult r) {
        String where = "runtime error in " + s.name() + " call: ";
        Value expected = evaluator.eval(s.result());
        if (expected instanceof Value.Int want && want.value() != r.ret()) {
            throw fail(e.line(), where + "Expected result " + want.value() + " but got " + r.ret()
                    + (r.ret() < 0 ? " with errno " + r.errno() + " (" + Symbols.errnoName(r.errno()) + ")" : ""));
        }
        if (s.errno() != null) {
            int want = Symbols.errno(s.errno());
            if (r.errno() != want) {
                throw fail(e.line(), where + "Expected errno " + want + " (" + s.errno() + ") but got "
                        + (r.errno() == 0 ? "none" : Symbols.errnoName(r.errno()) + " (" + r.errno() + ")"));
            }
        }
        for (Map.Entry<Integer, Value> out : new java.util.TreeMap<>(r.outArgs()).entrySet()) {
            int idx = out.getKey();
            if (idx < 0 || idx >= args.size()) {
                continue;
            }
            String m = ValueMatcher.mismatch(args.get(idx), out.getValue());
            if (m != null) {
                throw fail(e.line(), where + "argument " + (idx + 1) + ": " + m);
            }
        }
        if ((s.name().equals("socket") || s.name().startsWith("accept")) && r.ret() >= 0) {
            socketUnderTest = (int) r.ret();
            if (s.name().equals("socket") && flow.used()) {
                flow.startNew(settings.bindPort());
            }
        }
    }

    // ---- commands and code ----

    private void command(Event e, Action.Command c, long start, long end) {
        waitUntil(e, start);
        checkTime(e, start, end, "command");
        log(Micros.seconds(target.nowMicros()) + " line " + e.line() + " `" + c.text().strip() + "`");
        target.command(c.text(), e.line());
    }

    private void code(Event e, Action.Code c, long start, long end) {
        waitUntil(e, start);
        checkTime(e, start, end, "data collection for code");
        var names = CodeBlock.tcpInfoNames(c.text());
        if (!names.isEmpty()) {
            if (socketUnderTest == null) {
                throw fail(e.line(), "code reads " + names.iterator().next() + " but the script has no socket yet");
            }
            codeVariables.keySet().removeIf(k -> k.startsWith("tcpi_"));
            codeVariables.putAll(target.tcpInfo(socketUnderTest));
        }
        try {
            CodeBlock.run(c.text(), c.line(), codeVariables);
        } catch (CodeBlock.AssertionFailed ex) {
            throw fail(ex.line, ex.getMessage());
        } catch (CodeBlock.CodeException ex) {
            throw fail(ex.line, "error in code: " + ex.getMessage());
        } catch (ArithmeticException ex) {
            throw fail(e.line(), "error in code: " + ex.getMessage());
        }
    }
}
