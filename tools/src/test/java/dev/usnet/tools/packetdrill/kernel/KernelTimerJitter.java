package dev.usnet.tools.packetdrill.kernel;

import dev.usnet.tools.packetdrill.PendingCall;
import dev.usnet.tools.packetdrill.ScriptOptions;
import dev.usnet.tools.packetdrill.Sniffed;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.Value;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A measurement, not a test: how late this machine's kernel fires TCP timers against the time a script expects
 * them, and what the kernel target itself adds, as seen through {@link KernelTarget} (root). Prints min, median,
 * p95 and max per quantity, in µs. Run (after {@code mvn -pl tools -am test-compile}):
 * <pre>
 * sudo java --enable-native-access=ALL-UNNAMED -cp tools/target/test-classes:tools/target/classes:tap-bridge/target/classes:stack-core/target/classes \
 *     dev.usnet.tools.packetdrill.kernel.KernelTimerJitter [rounds]
 * </pre>
 * docs/packetdrill-kernel-target.md has the numbers measured here and the tolerance they lead to.
 */
public final class KernelTimerJitter {
    static final int LOCAL = 0xC6120001;
    static final int REMOTE = 0xC6120002;

    private KernelTimerJitter() {}

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        Map<String, List<Long>> samples = new java.util.LinkedHashMap<>();
        for (int r = 0; r < rounds; r++) {
            synAckRetransmits(samples);
            dataRetransmits(samples);
        }
        System.out.printf("%-44s %6s %8s %8s %8s %8s%n", "quantity (µs)", "n", "min", "median", "p95", "max");
        samples.forEach((k, v) -> {
            List<Long> s = new ArrayList<>(v);
            s.sort(null);
            System.out.printf("%-44s %6d %8d %8d %8d %8d%n", k, s.size(), s.getFirst(), s.get(s.size() / 2),
                    s.get(Math.min(s.size() - 1, (int) Math.ceil(s.size() * 0.95) - 1)), s.getLast());
        });
    }

    static void add(Map<String, List<Long>> m, String k, long v) {
        m.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
    }

    static KernelTarget open() {
        KernelTarget t = new KernelTarget();
        t.open(new ScriptOptions(LOCAL, REMOTE, 0xC6120003, 24, 1500, 20000, 0, false, null, Map.of(),
                Path.of(".")));
        t.start();
        return t;
    }

    static Syscall sc(String name, Value... args) {
        return new Syscall(name, List.of(args), 0);
    }

    static void listen(KernelTarget t, int backlog) {
        t.call(sc("socket", Value.ELLIPSIS, Value.of(1), Value.of(6)));
        t.call(sc("bind", Value.of(3), Value.ELLIPSIS, Value.ELLIPSIS));
        t.call(sc("listen", Value.of(3), Value.of(backlog)));
    }

    static byte[] syn(int port, long isn) {
        return TcpPackets.tcp(REMOTE, LOCAL, port, KernelSyscalls.SCRIPT_PORT, isn, 0, TcpPackets.SYN, 65535,
                new TcpPackets.Options().mss(1460).bytes(), 0);
    }

    /**
     * 20 SYNs 53 ms apart (so their timers start at different phases of the kernel's timer wheel), never ACKed: the
     * SYN-ACK is retransmitted 1 s, 2 s and 4 s apart. Also: how long after an injected SYN
     * the SYN-ACK is read (the target's inject-to-sniff path plus the kernel's processing), how late advanceTo wakes.
     */
    static void synAckRetransmits(Map<String, List<Long>> m) {
        try (KernelTarget t = open()) {
            listen(t, 64);
            Map<Integer, List<Long>> seen = new HashMap<>();
            long next = t.nowMicros() + 10_000;
            for (int i = 0; i < 20; i++) {
                t.advanceTo(next);
                add(m, "advanceTo lateness", t.nowMicros() - next);
                long at = t.nowMicros();
                t.inject(syn(41000 + i, 1000 * i));
                Sniffed s = t.sniff(at + 100_000);
                while (s != null) {
                    // A retransmission of an earlier SYN-ACK may come first: only this port's first one counts.
                    int port = record(seen, s);
                    if (port == 41000 + i) {
                        add(m, "inject SYN -> SYN-ACK read", s.micros() - at);
                        break;
                    }
                    s = t.sniff(at + 100_000);
                }
                next += 53_000;
            }
            long end = t.nowMicros() + 7_300_000;
            Sniffed s;
            while ((s = t.sniff(end)) != null) {
                record(seen, s);
            }
            for (List<Long> times : seen.values()) {
                if (times.size() >= 2) {
                    add(m, "SYN-ACK retransmit 1 s timer lateness", times.get(1) - times.get(0) - 1_000_000);
                }
                if (times.size() >= 3) {
                    add(m, "SYN-ACK retransmit 2 s timer lateness", times.get(2) - times.get(1) - 2_000_000);
                }
                if (times.size() >= 4) {
                    add(m, "SYN-ACK retransmit 4 s timer lateness", times.get(3) - times.get(2) - 4_000_000);
                }
            }
        }
    }

    /** Files the packet's time under its destination port, which it returns. */
    static int record(Map<Integer, List<Long>> seen, Sniffed s) {
        TcpPackets.Tcp p = TcpPackets.parse(s.ipPacket());
        seen.computeIfAbsent(p.dstPort(), x -> new ArrayList<>()).add(s.micros());
        return p.dstPort();
    }

    /**
     * One connection, one 100-byte write never ACKed: retransmissions after RTO, 2 RTO, ... 32 RTO (RTO as
     * tcp_info reported it right after the write). Also the time a non-blocking call takes through the target.
     */
    static void dataRetransmits(Map<String, List<Long>> m) {
        try (KernelTarget t = open()) {
            listen(t, 4);
            t.inject(syn(42000, 5000));
            TcpPackets.Tcp synAck = TcpPackets.parse(t.sniff(t.nowMicros() + 1_000_000).ipPacket());
            t.inject(TcpPackets.tcp(REMOTE, LOCAL, 42000, KernelSyscalls.SCRIPT_PORT, 5001, synAck.seq() + 1,
                    TcpPackets.ACK, 65535, new byte[0], 0));
            t.advanceTo(t.nowMicros() + 20_000);
            long before = t.nowMicros();
            PendingCall a = t.call(sc("accept", Value.of(3), Value.ELLIPSIS, Value.ELLIPSIS));
            add(m, "non-blocking call round trip (accept)", t.nowMicros() - before);
            if (!a.isDone() || a.result().ret() != 4) {
                throw new IllegalStateException("accept did not return 4");
            }
            t.call(sc("write", Value.of(4), Value.ELLIPSIS, Value.of(100)));
            long rto = t.tcpInfo(4).get("tcpi_rto");
            Sniffed first = t.sniff(t.nowMicros() + 1_000_000);
            long prev = first.micros();
            long expected = rto;
            for (int k = 0; k < 6; k++) {
                Sniffed re = t.sniff(prev + expected + 500_000);
                if (re == null) {
                    break;
                }
                add(m, "data RTO #" + (k + 1) + " (" + rto / 1000 + " ms << " + k + ") lateness",
                        re.micros() - prev - expected);
                prev = re.micros();
                expected *= 2;
            }
        }
    }
}
