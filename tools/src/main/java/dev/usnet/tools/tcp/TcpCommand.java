package dev.usnet.tools.tcp;

import dev.usnet.core.knob.Knobs;
import dev.usnet.tcp.cc.AdditiveIncrease;
import dev.usnet.tcp.cc.CaState;
import dev.usnet.tcp.cc.CcSock;
import dev.usnet.tcp.cc.CcSwitches;
import dev.usnet.tcp.cc.Cubic;
import dev.usnet.tcp.cc.CwndState;
import dev.usnet.tcp.cc.KernelPreset;
import dev.usnet.tcp.cc.RenoCongAvoid;
import dev.usnet.tools.cli.UsageException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code usnet tcp ...}: calculators for the kernel-version congestion-avoidance variants. */
@Command(name = "tcp", mixinStandardHelpOptions = true,
        description = "Calculators for Linux's congestion avoidance per kernel version (the presets of"
                + " usnet.tcp.kernel).",
        subcommands = {TcpCommand.Ai.class, TcpCommand.Reno.class, TcpCommand.CubicCurve.class})
public final class TcpCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    static KernelPreset kernel(String k) {
        try {
            return KernelPreset.parse(k);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--kernel: " + e.getMessage());
        }
    }

    /**
     * {@code --hz} by the rule of the {@code usnet.hz} knob it stands for, so that every command taking it
     * accepts the same values with the same message.
     */
    public static int hz(int hz) {
        try {
            new Knobs().set("usnet.hz", Integer.toString(hz));
        } catch (IllegalArgumentException e) {
            throw new UsageException("--hz: " + e.getMessage());
        }
        return hz;
    }

    static void positive(String opt, long v) {
        if (v < 0) {
            throw new UsageException(opt + " must not be negative, got " + v);
        }
    }

    /** {@code usnet tcp ai}: tcp_cong_avoid_ai call by call. */
    @Command(name = "ai", mixinStandardHelpOptions = true,
            description = "tcp_cong_avoid_ai(w, acked) call by call; prints cwnd/cnt after each call.")
    public static final class Ai implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--kernel", required = true, description = "3.18, 3.19, 4.0 or 4.3")
        String kernel;

        @Option(names = "--cwnd", required = true, description = "snd_cwnd before the first call")
        long cwnd;

        @Option(names = "--cnt", required = true, description = "snd_cwnd_cnt before the first call")
        long cnt;

        @Option(names = "--clamp", description = "snd_cwnd_clamp (default 2^32-1)")
        long clamp = 0xffff_ffffL;

        @Option(names = "--calls", required = true, split = ",", paramLabel = "W:ACKED",
                description = "comma-separated calls, each w:acked")
        String[] calls;

        @Override
        public Integer call() {
            KernelPreset k = kernel(kernel);
            positive("--cwnd", cwnd);
            positive("--cnt", cnt);
            CwndState s = new CwndState(cwnd, cnt, 0);
            s.sndCwndClamp = clamp;
            PrintWriter o = spec.commandLine().getOut();
            for (String c : calls) {
                String[] wa = c.split(":");
                long w;
                long acked;
                try {
                    if (wa.length != 2) {
                        throw new NumberFormatException();
                    }
                    w = Long.parseLong(wa[0].trim());
                    acked = Long.parseLong(wa[1].trim());
                } catch (NumberFormatException e) {
                    throw new UsageException("--calls: '" + c + "' is not w:acked (two integers)");
                }
                if (w <= 0 || acked < 0) {
                    throw new UsageException("--calls: '" + c + "': w must be positive and acked not negative");
                }
                AdditiveIncrease.apply(s, w, acked, k.switches().ai());
                o.println(s);
            }
            return 0;
        }
    }

    /** {@code usnet tcp reno}: one tcp_reno_cong_avoid call. */
    @Command(name = "reno", mixinStandardHelpOptions = true,
            description = "One tcp_reno_cong_avoid call of a cwnd-limited flow; prints cwnd/cnt.")
    public static final class Reno implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--kernel", required = true, description = "3.18, 3.19, 4.0 or 4.3")
        String kernel;

        @Option(names = "--cwnd", required = true, paramLabel = "N", description = "snd_cwnd before the call, in packets")
        long cwnd;

        @Option(names = "--cnt", required = true, paramLabel = "N",
                description = "snd_cwnd_cnt before the call: packets acknowledged toward the next increment")
        long cnt;

        @Option(names = "--ssthresh", required = true, paramLabel = "N",
                description = "snd_ssthresh: below it the call is slow start, at or above it additive increase")
        long ssthresh;

        @Option(names = "--acked", required = true, paramLabel = "N", description = "packets this ACK acknowledges")
        long acked;

        @Option(names = "--clamp", description = "snd_cwnd_clamp (default 2^32-1)")
        long clamp = 0xffff_ffffL;

        @Override
        public Integer call() {
            KernelPreset k = kernel(kernel);
            positive("--cwnd", cwnd);
            positive("--cnt", cnt);
            positive("--ssthresh", ssthresh);
            positive("--acked", acked);
            CwndState s = new CwndState(cwnd, cnt, ssthresh);
            s.sndCwndClamp = clamp;
            RenoCongAvoid.congAvoid(s, acked, k.switches());
            spec.commandLine().getOut().println(s);
            return 0;
        }
    }

    /** {@code usnet tcp cubic}: K, target and cnt of CUBIC's bictcp_update at a time into an epoch. */
    @Command(name = "cubic", mixinStandardHelpOptions = true,
            description = {
                "CUBIC's bictcp_update of a kernel version at --at-ms into an epoch that started at 0 ms, after a loss at"
                        + " --wmax (0: no loss yet), with cwnd held at --cwnd. Prints one line: K target cnt"
                        + " (K in 1/1024 s; target in packets; cnt = packets acknowledged per cwnd increment).",
                "It drives usnet's Cubic itself: the loss (ssthresh, Wmax), one RTT sample of --delay-min-ms taken"
                        + " during recovery, then one update of one acknowledged packet at 0 ms and one at --at-ms."
                        + " TCP friendliness therefore sees two packets and only matters for cwnd 1.",
                "Version effects: 3.18 divides cnt by its delayed-ACK ratio at the initial 2 packets per ACK (cnt / 2),"
                        + " and skips updates while cwnd is unchanged for up to HZ/32 jiffies, so --at-ms that close to 0"
                        + " shows the epoch-start values; 3.19+ recompute at most once per jiffy; the cnt floor is 1"
                        + " before 4.0 and 2 from 4.0. Time is counted in jiffies of --hz, and delay_min is cut to whole"
                        + " ms and then rounded up to whole jiffies, as those kernels do.",
                "Example: --kernel 4.0 --hz 1000 --wmax 100 --cwnd 70 --delay-min-ms 1 --at-ms 500 prints 4316 80 7."})
    public static final class CubicCurve implements Callable<Integer> {
        /** CubicRoot and the u32 fields make anything above this meaningless. */
        private static final long U32_MAX = 0xffff_ffffL;
        /** Keeps jiffies since the epoch within the kernel's s32 difference at every --hz. */
        private static final long AT_MS_MAX = 2_000_000_000L;
        /** rtt_us is an s32 shifted left by 3 in the kernel; RTTs beyond the maximum RTO make no sense anyway. */
        private static final BigDecimal DELAY_MIN_MS_MAX = BigDecimal.valueOf(120_000);

        @Spec
        CommandSpec spec;

        @Option(names = "--kernel", required = true, description = "3.18, 3.19, 4.0 or 4.3")
        String kernel;

        @Option(names = "--hz", description = "CONFIG_HZ, 100..1000 like usnet.hz (default 1000)")
        int hz = 1000;

        @Option(names = "--wmax", required = true, description = "cwnd at the loss (last_max_cwnd); 0 = no loss yet")
        long wmax;

        @Option(names = "--cwnd", required = true, description = "cwnd during the epoch (held)")
        long cwnd;

        @Option(names = "--delay-min-ms", required = true, paramLabel = "MS",
                description = "minimum RTT in ms (to the µs, e.g. 0.05); 0 = no RTT sample yet")
        String delayMinMs;

        @Option(names = "--at-ms", required = true, description = "time since the epoch started, in ms")
        long atMs;

        @Option(names = "--set", paramLabel = "KEY=VALUE",
                description = {"override one switch of the preset (repeatable); the ones that matter here:",
                        "usnet.tcp.cubic_per_packet,", "usnet.tcp.cubic_jiffy_update,", "usnet.tcp.cubic_cnt_floor,",
                        "usnet.tcp.cubic_hystart_us"})
        List<String> overrides = List.of();

        @Override
        public Integer call() {
            CcSwitches sw = kernel(kernel).switches();
            for (String o : overrides) {
                int eq = o.indexOf('=');
                if (eq <= 0) {
                    throw new UsageException("--set: '" + o + "' is not KEY=VALUE");
                }
                try {
                    sw = sw.withOverride(o.substring(0, eq).trim(), o.substring(eq + 1));
                } catch (IllegalArgumentException e) {
                    throw new UsageException("--set: " + e.getMessage());
                }
            }
            hz(hz);
            if (cwnd < 1 || cwnd > U32_MAX) {
                throw new UsageException("--cwnd must be between 1 and " + U32_MAX + ", got " + cwnd);
            }
            if (wmax < 0 || wmax > U32_MAX) {
                throw new UsageException("--wmax must be between 0 and " + U32_MAX + ", got " + wmax);
            }
            if (atMs < 0 || atMs > AT_MS_MAX) {
                throw new UsageException("--at-ms must be between 0 and " + AT_MS_MAX + ", got " + atMs);
            }
            long rttUs = delayMinUs(delayMinMs);

            CcSock.Standalone sk = new CcSock.Standalone(sw, wmax > 0 ? wmax : cwnd, 0x7fff_ffffL);
            sk.hz = hz;
            Cubic cubic = new Cubic();
            cubic.init(sk);
            if (wmax > 0) {
                sk.sndSsthresh = cubic.ssthresh(sk); // the loss: Wmax = cwnd at the loss, epoch ended
            }
            sk.sndCwnd = cwnd;
            // The RTT sample arrives during fast recovery: delay_min is set, 3.18's delayed-ACK ratio stays at 2.
            sk.caState = CaState.RECOVERY;
            if (rttUs > 0) {
                cubic.pktsAcked(sk, 1, rttUs);
            }
            sk.caState = CaState.OPEN;
            cubic.update(sk, 1); // 0 ms: the epoch starts
            sk.nowNanos = atMs * 1_000_000L;
            cubic.update(sk, 1);
            spec.commandLine().getOut().println(cubic.bicK() + " " + cubic.target() + " " + cubic.cnt());
            return 0;
        }

        private static long delayMinUs(String s) {
            BigDecimal ms;
            try {
                ms = new BigDecimal(s.trim());
            } catch (NumberFormatException e) {
                throw new UsageException("--delay-min-ms: '" + s + "' is not a number of milliseconds");
            }
            if (ms.signum() < 0 || ms.compareTo(DELAY_MIN_MS_MAX) > 0) {
                throw new UsageException("--delay-min-ms must be between 0 and " + DELAY_MIN_MS_MAX + ", got " + s);
            }
            BigDecimal us = ms.movePointRight(3);
            if (us.stripTrailingZeros().scale() > 0) {
                throw new UsageException("--delay-min-ms: '" + s + "' is finer than the 1 µs RTT samples have");
            }
            return us.longValueExact();
        }
    }
}
