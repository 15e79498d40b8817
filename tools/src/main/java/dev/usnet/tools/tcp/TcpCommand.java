package dev.usnet.tools.tcp;

import dev.usnet.tcp.cc.AdditiveIncrease;
import dev.usnet.tcp.cc.CwndState;
import dev.usnet.tcp.cc.KernelPreset;
import dev.usnet.tcp.cc.RenoCongAvoid;
import dev.usnet.tools.UsageException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code usnet tcp ...}: calculators for the kernel-version congestion-avoidance variants. */
@Command(name = "tcp", mixinStandardHelpOptions = true,
        description = "Calculators for Linux's congestion avoidance per kernel version (usnet.tcp.kernel).",
        subcommands = {TcpCommand.Ai.class, TcpCommand.Reno.class})
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

        @Option(names = "--cwnd", required = true)
        long cwnd;

        @Option(names = "--cnt", required = true)
        long cnt;

        @Option(names = "--ssthresh", required = true)
        long ssthresh;

        @Option(names = "--acked", required = true)
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
}
