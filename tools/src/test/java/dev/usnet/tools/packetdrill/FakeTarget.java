package dev.usnet.tools.packetdrill;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A test target: a tiny TCP peer in virtual time that reacts to what the runner injects, so runner tests can
 * pass or fail for real. It answers a SYN on a listening socket with a SYN-ACK (mirroring the peer's options), a
 * data segment or FIN with an ACK, sends {@code write}s as MSS-sized segments at once, retransmits the first
 * unacknowledged segment after 200 ms (doubling), sends a FIN on close, and completes blocking accept, connect
 * and read calls when the packets that make them ready arrive. ISN 1000000, TS val 7000 + ms.
 *
 * <p>It also checks the runner: an injected packet with a bad checksum, or an ACK whose TS ecr is not a TS val
 * this peer sent, is refused with a TargetException.
 */
final class FakeTarget implements Target {
    static final long ISN = 1_000_000;
    private static final long RTO_US = 200_000;

    /** Bugs the fake can have, so tests see the runner catch them. */
    int advertisedWindow = 64_240;
    int synAckWscale = 7;
    /** How long after a packet was sent {@link #sniff} hands it over (a slow sniffer thread). */
    long sniffLatencyUs;
    /** Sends an IPv6 packet (as a kernel's router solicitation would be) when the clock starts. */
    boolean ipv6Noise;
    /** Sends every TCP packet with a TCP checksum off by one. */
    boolean badTcpChecksum;
    /** IP versions of the packets injected, in order. */
    final List<Integer> injectedVersions = new ArrayList<>();

    ScriptOptions options;
    boolean started;
    boolean closed;
    long now;
    final List<String> commands = new ArrayList<>();
    final Map<String, String> sysctls = new HashMap<>();
    final List<Syscall> calls = new ArrayList<>();
    private final ArrayDeque<Sniffed> sent = new ArrayDeque<>();
    private final TreeMap<Integer, Sock> fds = new TreeMap<>();
    private final List<Call> blocked = new ArrayList<>();
    private final List<Long> tsValsSent = new ArrayList<>();
    private final PacketBuilder builder = new PacketBuilder();

    private enum State { NEW, LISTEN, SYN_SENT, SYN_RCVD, ESTABLISHED, CLOSED }

    private static final class Sock {
        State state = State.NEW;
        boolean nonblocking;
        int localPort;
        int remotePort;
        long sndUna;
        long sndNxt;
        long rcvNxt;
        int mss = 536;
        boolean ts;
        long peerTsVal;
        long readable;
        long rtoAt = -1;
        long rto = RTO_US;
        int retransmits;
        final List<long[]> unacked = new ArrayList<>(); // {seq, len, flags}
        final ArrayDeque<Sock> acceptQueue = new ArrayDeque<>();
        Sock listener;
    }

    private final class Call implements PendingCall {
        final Syscall syscall;
        SyscallResult result;
        long end;

        Call(Syscall s) {
            syscall = s;
        }

        void done(SyscallResult r) {
            result = r;
            end = now;
        }

        @Override
        public boolean isDone() {
            return result != null;
        }

        @Override
        public SyscallResult result() {
            return result;
        }

        @Override
        public long endMicros() {
            return end;
        }
    }

    @Override
    public void open(ScriptOptions o) {
        options = o;
    }

    @Override
    public void sysctl(String key, String value) {
        sysctls.put(key, value);
    }

    @Override
    public void setTransmitQueueLimit(int packets) {
        commands.add("qlimit " + packets);
    }

    @Override
    public void start() {
        started = true;
        now = 0;
        if (ipv6Noise) {
            byte[] v6 = new byte[48];
            v6[0] = 0x60;
            sent.add(new Sniffed(v6, 0));
        }
    }

    @Override
    public long nowMicros() {
        return now;
    }

    @Override
    public void advanceTo(long micros) {
        runTimersUntil(micros);
        now = Math.max(now, micros);
    }

    private void runTimersUntil(long t) {
        while (true) {
            Sock next = null;
            for (Sock s : fds.values()) {
                if (s.rtoAt >= 0 && s.rtoAt <= t && (next == null || s.rtoAt < next.rtoAt)) {
                    next = s;
                }
            }
            if (next == null) {
                return;
            }
            now = Math.max(now, next.rtoAt);
            retransmit(next);
        }
    }

    private void retransmit(Sock s) {
        long[] seg = s.unacked.get(0);
        s.retransmits++;
        send(s, seg[0], (int) seg[2], (int) Math.min(seg[1], s.mss), null);
        s.rto *= 2;
        s.rtoAt = now + s.rto;
    }

    @Override
    public void inject(byte[] p) {
        if (!started) {
            throw new TargetException("fake: inject before start");
        }
        if (!PacketBuilder.checksumsValid(p)) {
            throw new TargetException("fake: injected packet has a bad checksum");
        }
        injectedVersions.add(p[0] >> 4 & 15);
        LivePacket in = LivePacket.decode(p, now);
        if (in.protocol() == LivePacket.PROTO_ICMPV6) {
            commands.add("icmpv6 " + in.icmpType() + "/" + in.icmpCode() + " mtu " + LivePacket.u32(p, 44));
            return;
        }
        if (in.protocol() == LivePacket.PROTO_ICMP) {
            // type/code, the next-hop MTU, the quoted segment's ports and sequence number
            commands.add("icmp " + in.icmpType() + "/" + in.icmpCode() + " mtu " + LivePacket.u16(p, 26) + " "
                    + LivePacket.u16(p, 48) + ">" + LivePacket.u16(p, 50) + " seq " + LivePacket.u32(p, 52));
            return;
        }
        for (TcpOptionSpec o : in.options()) {
            if (o instanceof TcpOptionSpec.Timestamp t && (in.flags() & TcpFlags.ACK) != 0
                    && !tsValsSent.contains(t.ecr())) {
                throw new TargetException("fake: TS ecr " + t.ecr() + " is no TS val this peer sent " + tsValsSent);
            }
        }
        Sock s = find(in);
        if (s == null) {
            if ((in.flags() & TcpFlags.RST) == 0) {
                Sock tmp = new Sock();
                tmp.localPort = in.dstPort();
                tmp.remotePort = in.srcPort();
                send(tmp, in.ack(), TcpFlags.RST, 0, List.of());
            }
            return;
        }
        if (s.state == State.LISTEN && (in.flags() & TcpFlags.SYN) != 0) {
            Sock c = new Sock();
            c.listener = s;
            c.localPort = in.dstPort();
            c.remotePort = in.srcPort();
            c.state = State.SYN_RCVD;
            c.rcvNxt = in.seq() + 1;
            c.sndUna = ISN;
            c.sndNxt = ISN + 1;
            List<TcpOptionSpec> opts = new ArrayList<>();
            boolean sack = false;
            boolean wscale = false;
            for (TcpOptionSpec o : in.options()) {
                if (o instanceof TcpOptionSpec.Mss m) {
                    c.mss = m.value();
                }
                if (o instanceof TcpOptionSpec.SackPermitted) {
                    sack = true;
                }
                if (o instanceof TcpOptionSpec.WindowScale) {
                    wscale = true;
                }
                if (o instanceof TcpOptionSpec.Timestamp t) {
                    c.ts = true;
                    c.peerTsVal = t.val();
                }
            }
            opts.add(new TcpOptionSpec.Mss(1460));
            if (!c.ts && sack) {
                opts.add(new TcpOptionSpec.Nop());
                opts.add(new TcpOptionSpec.Nop());
                opts.add(new TcpOptionSpec.SackPermitted());
            } else if (sack) {
                opts.add(new TcpOptionSpec.SackPermitted());
            }
            if (c.ts) {
                opts.add(new TcpOptionSpec.Timestamp(0, c.peerTsVal));
            }
            if (wscale) {
                opts.add(new TcpOptionSpec.Nop());
                opts.add(new TcpOptionSpec.WindowScale(synAckWscale));
            }
            // A child socket lives in the fd table only once accepted; park it under a negative key.
            fds.put(-(fds.size() + 100), c);
            send(c, ISN, TcpFlags.SYN | TcpFlags.ACK, 0, opts);
            return;
        }
        int synAck = TcpFlags.SYN | TcpFlags.ACK;
        if (s.state == State.SYN_SENT && (in.flags() & synAck) == synAck) {
            if (in.ack() != ISN + 1) {
                return;
            }
            s.state = State.ESTABLISHED;
            s.sndUna = ISN + 1;
            s.rcvNxt = in.seq() + 1;
            s.rtoAt = -1;
            s.unacked.clear();
            for (TcpOptionSpec o : in.options()) {
                if (o instanceof TcpOptionSpec.Mss m) {
                    s.mss = m.value();
                }
                if (o instanceof TcpOptionSpec.Timestamp t) {
                    s.peerTsVal = t.val();
                }
            }
            send(s, s.sndNxt, TcpFlags.ACK, 0, null);
            wake();
            return;
        }
        if ((in.flags() & TcpFlags.ACK) != 0) {
            if (s.state == State.SYN_RCVD && in.ack() == ISN + 1) {
                s.state = State.ESTABLISHED;
                s.sndUna = ISN + 1;
                s.listener.acceptQueue.add(s);
            }
            if (in.ack() > s.sndUna && in.ack() <= s.sndNxt) {
                s.sndUna = in.ack();
                s.unacked.removeIf(seg -> seg[0] + seg[1] <= in.ack());
                s.rto = RTO_US;
                s.rtoAt = s.unacked.isEmpty() ? -1 : now + s.rto;
            }
        }
        for (TcpOptionSpec o : in.options()) {
            if (o instanceof TcpOptionSpec.Timestamp t) {
                s.peerTsVal = t.val();
            }
        }
        int len = in.payloadLength() + ((in.flags() & TcpFlags.FIN) != 0 ? 1 : 0);
        if (len > 0 && in.seq() == s.rcvNxt) {
            s.rcvNxt += len;
            s.readable += in.payloadLength();
            send(s, s.sndNxt, TcpFlags.ACK, 0, null);
        }
        wake();
    }

    private Sock find(LivePacket in) {
        Sock listener = null;
        for (Sock s : fds.values()) {
            if (s.localPort != in.dstPort()) {
                continue;
            }
            if (s.state == State.LISTEN) {
                listener = s;
            } else if (s.remotePort == in.srcPort() && s.state != State.CLOSED) {
                return s;
            }
        }
        return listener;
    }

    private void send(Sock s, long seq, int flags, int len, List<TcpOptionSpec> synOptions) {
        List<TcpOptionSpec> opts = synOptions;
        long tsVal = 7000 + now / 1000;
        if (opts == null && s.ts) {
            opts = List.of(new TcpOptionSpec.Nop(), new TcpOptionSpec.Nop(),
                    new TcpOptionSpec.Timestamp(tsVal, s.peerTsVal));
        }
        if (opts != null) {
            List<TcpOptionSpec> withTs = new ArrayList<>();
            for (TcpOptionSpec o : opts) {
                if (o instanceof TcpOptionSpec.Timestamp t) {
                    o = new TcpOptionSpec.Timestamp(tsVal, t.ecr());
                    tsValsSent.add(tsVal);
                }
                withTs.add(o);
            }
            opts = withTs;
        }
        byte[] p = builder.tcp(options.localWireAddress(), options.remoteWireAddress(), 0, s.localPort, s.remotePort, seq & 0xFFFFFFFFL,
                (flags & TcpFlags.ACK) != 0 ? s.rcvNxt : 0, flags, (flags & TcpFlags.SYN) != 0 ? 65535
                        : advertisedWindow >> 7, 0, opts, len);
        if (badTcpChecksum) {
            int csum = p.length - len - PacketBuilder.optionsLength(opts) - 20 + 16;
            p[csum + 1] ^= 1;
        }
        sent.add(new Sniffed(p, now));
    }

    @Override
    public Sniffed sniff(long deadlineMicros) {
        while (sent.isEmpty()) {
            long next = nextTimer();
            if (next < 0 || next > deadlineMicros) {
                now = Math.max(now, deadlineMicros);
                return null;
            }
            runTimersUntil(next);
        }
        Sniffed p = sent.poll();
        advanceTo(p.micros() + sniffLatencyUs);
        return p;
    }

    private long nextTimer() {
        long best = -1;
        for (Sock s : fds.values()) {
            if (s.rtoAt >= 0 && (best < 0 || s.rtoAt < best)) {
                best = s.rtoAt;
            }
        }
        return best;
    }

    @Override
    public PendingCall call(Syscall c) {
        calls.add(c);
        Call call = new Call(c);
        Sock s = c.args().isEmpty() || !(c.arg(0) instanceof Value.Int fd) ? null : fds.get((int) fd.value());
        switch (c.name()) {
            case "socket" -> {
                int fd = 3;
                while (fds.containsKey(fd)) {
                    fd++;
                }
                fds.put(fd, new Sock());
                call.done(SyscallResult.ok(fd));
            }
            case "setsockopt", "bind" -> {
                if (s == null) {
                    call.done(SyscallResult.error(9));
                    return call;
                }
                if (c.name().equals("bind")) {
                    s.localPort = Flow.DEFAULT_PORT;
                }
                call.done(SyscallResult.ok(0));
            }
            case "getsockopt" -> call.done(new SyscallResult(0, 0, Map.of(3, new Value.Array(List.of(Value.of(0))))));
            case "listen" -> {
                s.state = State.LISTEN;
                call.done(SyscallResult.ok(0));
            }
            case "fcntl" -> {
                long cmd = c.intArg(1);
                if (cmd == 3) {
                    call.done(SyscallResult.ok(2 | (s.nonblocking ? 04000 : 0)));
                } else {
                    s.nonblocking = (c.intArg(2) & 04000) != 0;
                    call.done(SyscallResult.ok(0));
                }
            }
            case "connect" -> {
                s.localPort = 40_000;
                s.remotePort = Flow.DEFAULT_PORT;
                s.state = State.SYN_SENT;
                s.ts = true;
                s.sndUna = ISN;
                s.sndNxt = ISN + 1;
                s.unacked.add(new long[] {ISN, 0, TcpFlags.SYN});
                s.rtoAt = now + 1_000_000;
                send(s, ISN, TcpFlags.SYN, 0, List.of(new TcpOptionSpec.Mss(1460), new TcpOptionSpec.SackPermitted(),
                        new TcpOptionSpec.Timestamp(0, 0), new TcpOptionSpec.Nop(), new TcpOptionSpec.WindowScale(7)));
                if (s.nonblocking) {
                    call.done(SyscallResult.error(115));
                } else {
                    blocked.add(call);
                }
            }
            case "close" -> {
                if (s == null) {
                    call.done(SyscallResult.error(9));
                } else if (s.state == State.ESTABLISHED) {
                    doWriteOrClose(call, s);
                } else {
                    s.state = State.CLOSED;
                    fds.values().remove(s);
                    call.done(SyscallResult.ok(0));
                }
            }
            case "accept", "read", "write" -> {
                blocked.add(call);
                wake();
                if (c.name().equals("write")) {
                    blocked.remove(call);
                    doWriteOrClose(call, s);
                } else if (!call.isDone() && s.nonblocking) {
                    blocked.remove(call);
                    call.done(SyscallResult.error(11));
                }
            }
            default -> throw new TargetException("fake: no " + c.name());
        }
        return call;
    }

    private void doWriteOrClose(Call call, Sock s) {
        if (call.syscall.name().equals("close")) {
            send(s, s.sndNxt, TcpFlags.FIN | TcpFlags.ACK, 0, null);
            s.unacked.add(new long[] {s.sndNxt, 1, TcpFlags.FIN | TcpFlags.ACK});
            s.sndNxt++;
            if (s.rtoAt < 0) {
                s.rtoAt = now + s.rto;
            }
            fds.values().remove(s);
            fds.put(-(fds.size() + 1000), s);
            call.done(SyscallResult.ok(0));
            return;
        }
        long n = call.syscall.intArg(2);
        for (long off = 0; off < n; off += s.mss) {
            int len = (int) Math.min(s.mss, n - off);
            int flags = TcpFlags.ACK | (off + len == n ? TcpFlags.PSH : 0);
            send(s, s.sndNxt, flags, len, null);
            s.unacked.add(new long[] {s.sndNxt, len, flags});
            s.sndNxt += len;
        }
        if (s.rtoAt < 0) {
            s.rtoAt = now + s.rto;
        }
        call.done(SyscallResult.ok(n));
    }

    /** Completes blocked calls that can complete now. */
    private void wake() {
        for (Call c : new ArrayList<>(blocked)) {
            Sock s = fds.get((int) c.syscall.intArg(0));
            if (s == null) {
                continue;
            }
            switch (c.syscall.name()) {
                case "accept" -> {
                    if (!s.acceptQueue.isEmpty()) {
                        Sock child = s.acceptQueue.poll();
                        fds.values().remove(child);
                        int fd = 3;
                        while (fds.containsKey(fd)) {
                            fd++;
                        }
                        fds.put(fd, child);
                        c.done(SyscallResult.ok(fd));
                        blocked.remove(c);
                    }
                }
                case "read" -> {
                    if (s.readable > 0) {
                        long n = Math.min(s.readable, c.syscall.intArg(2));
                        s.readable -= n;
                        c.done(SyscallResult.ok(n));
                        blocked.remove(c);
                    }
                }
                case "connect" -> {
                    if (s.state == State.ESTABLISHED) {
                        c.done(SyscallResult.ok(0));
                        blocked.remove(c);
                    }
                }
                default -> {
                }
            }
        }
    }

    @Override
    public boolean awaitCall(PendingCall call, long deadlineMicros) {
        if (!call.isDone()) {
            advanceTo(deadlineMicros);
        }
        return call.isDone();
    }

    @Override
    public Map<String, Long> tcpInfo(int fd) {
        Sock s = fds.get(fd);
        if (s == null) {
            throw new TargetException("fake: no socket " + fd);
        }
        return Map.of("tcpi_snd_cwnd", 10L, "tcpi_state", s.state == State.ESTABLISHED ? 1L : 7L,
                "tcpi_retransmits", (long) s.retransmits, "tcpi_unacked",
                (long) s.unacked.size(), "tcpi_snd_mss", (long) s.mss);
    }

    @Override
    public String command(String shellCommand, int line) {
        if (shellCommand.contains("fail")) {
            throw new TargetException("line " + line + ": fake refuses " + shellCommand.strip());
        }
        commands.add((started ? "" : "before start: ") + shellCommand.strip());
        return "";
    }

    @Override
    public String describe() {
        return "fake";
    }

    @Override
    public void close() {
        closed = true;
    }
}
