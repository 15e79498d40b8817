package dev.usnet.tcp;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.TestNet;

/**
 * The perf test's usnet-1448 path in virtual time: two namespaces over a veth with a 50 us hop each way and no
 * rate limit, the default 6 MiB buffers (4342 segments of 1448 bytes in flight), the receiver's 1000-packet
 * backlog (net.core.netdev_max_backlog) the only queue. Every burst larger than the backlog loses its tail at
 * once: dozens of consecutive segments below a window of SACKed data. The connection's namespaces are named
 * after {@code label}, which fixes its initial sequence number.
 */
final class BacklogBurstFlow {
    record Outcome(long iss, long bytesAcked, long retrans, long backlogDrops, long timeouts, long longestStallNanos,
                   String info) {
        @Override
        public String toString() {
            return String.format("iss %08x: %d MB acked, retrans %d, backlog drops %d, RTOs %d, longest stall %.1f ms; "
                            + "%s",
                    iss, bytesAcked >> 20, retrans, backlogDrops, timeouts, longestStallNanos / 1e6, info);
        }
    }

    String label = "a";
    long durationNanos = 200_000_000L;

    public static void main(String[] args) {
        BacklogBurstFlow f = new BacklogBurstFlow();
        f.durationNanos = (long) (Double.parseDouble(args[0]) * 1e9);
        for (int i = 1; i < args.length; i++) {
            f.label = args[i];
            System.out.println(f.run());
        }
    }

    Outcome run() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("snd-" + label);
            NetStack b = net.ns("rcv-" + label);
            // buffers=max: the scenario needs a window that lets slow start burst past the 1000-packet backlog at
            // once; autotuned, window_clamp and the send buffer keep the bursts below it (no drops to repair).
            a.knobs().set("usnet.tcp.buffers", "max");
            b.knobs().set("usnet.tcp.buffers", "max");
            VethEnd[] v = net.link(a, "veth0", "198.18.0.1/24", b, "veth0", "198.18.0.2/24");
            v[0].setNetem(NetemParams.NONE.withDelay(50_000L).withLimit(1 << 20));
            v[1].setNetem(NetemParams.NONE.withDelay(50_000L).withLimit(1 << 20));
            Tcp ta = Tcp.install(a);
            Tcp tb = Tcp.install(b);
            tb.listen(0, 5001, 16, c -> c.setCallbacks(new TcpSock.Callbacks() {
                @Override
                public void readable(TcpSock s) {
                    while (s.skip(1 << 20) > 0) {
                        // read everything
                    }
                }
            }));
            TcpSock c = ta.connect(TcpPair.SERVER, 5001, new EndlessSender(128 * 1024));
            long iss = c.initialSendSequence();
            // Watch progress: the longest time snd_una did not move while data was outstanding.
            long step = 100_000L;
            long lastAcked = -1;
            long lastMove = 0;
            long longest = 0;
            for (long t = 0; t < durationNanos; t += step) {
                net.run(step);
                long acked = c.bytesAcked();
                if (acked != lastAcked) {
                    lastAcked = acked;
                    lastMove = t;
                }
                longest = Math.max(longest, t - lastMove);
            }
            Outcome o = new Outcome(iss, c.bytesAcked(), c.totalRetrans(), b.drops().get(DropReason.BACKLOG_FULL),
                    c.timeouts(), longest, c.info().format());
            c.abort();
            net.run(1_000_000_000L);
            ta.close();
            tb.close();
            return o;
        }
    }
}
