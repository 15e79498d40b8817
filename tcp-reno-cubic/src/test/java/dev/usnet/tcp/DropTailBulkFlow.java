package dev.usnet.tcp;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.LinkEmulation;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.TestNet;

/**
 * One bulk flow through a drop-tail bottleneck in virtual time, the dumbbell ns-3 users build: the sender's veth
 * serialises at {@code rate} into a FIFO of {@code limit} frames (netem rate + limit, no delay, so the limit is
 * the queue plus the frame on the wire), the ACK path carries the whole RTT as delay (netem on the receiver's
 * veth, a limit no ACK burst reaches), optional random loss on the data path. The receiver reads everything at
 * once; the sender always has data.
 */
final class DropTailBulkFlow {
    /** What a run measured: the sender's retransmissions, what the link dropped, what the receiver discarded. */
    record Outcome(long retrans, long queueDrops, long randomLoss, long rcvOldData, long rcvOfoDup, long ofoPruned,
                   long timeouts, long bytesAcked, long dsackRecv, String senderInfo) {
        /** Segments the receiver got twice (below rcv_nxt or already in its out-of-order queue). */
        long rcvDuplicates() {
            return rcvOldData + rcvOfoDup;
        }

        @Override
        public String toString() {
            return String.format("retrans %d, queue drops %d, random loss %d, receiver duplicates %d (old %d, ofo %d), "
                            + "ofo pruned %d, RTOs %d, D-SACKs received %d, %d MB acked; %s",
                    retrans, queueDrops, randomLoss, rcvDuplicates(), rcvOldData, rcvOfoDup, ofoPruned, timeouts,
                    dsackRecv, bytesAcked >> 20, senderInfo);
        }
    }

    long rateBps = 1_000_000_000L;
    long rttNanos = 1_000_000L;
    int limit = 1001;
    double loss;
    long seed = 1;
    long durationNanos = 10_000_000_000L;
    String congestionControl = "cubic";
    /** usnet.tcp.kernel of both ends (null: the default preset). */
    String kernel;
    /** Drop counters of the two namespaces at the end of the last run. */
    java.util.Map<?, Long> receiverDrops;
    java.util.Map<?, Long> senderDrops;

    /**
     * Runs the scenario outside the test JVM (without PARANOID leak tracking, which makes a 10 s run at
     * 1 Gbit/s take many minutes): {@code rateBps lossPercent seconds [cc [kernel]]}.
     */
    public static void main(String[] args) {
        DropTailBulkFlow f = new DropTailBulkFlow();
        f.rateBps = Long.parseLong(args[0]);
        f.loss = Double.parseDouble(args[1]) / 100;
        f.durationNanos = (long) (Double.parseDouble(args[2]) * 1e9);
        if (args.length > 3) {
            f.congestionControl = args[3];
        }
        if (args.length > 4) {
            f.kernel = args[4];
        }
        System.out.println(f.run());
        System.out.println("receiver drops: " + f.receiverDrops);
        System.out.println("sender drops: " + f.senderDrops);
    }

    Outcome run() {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("sender");
            NetStack b = net.ns("receiver");
            a.knobs().set("net.ipv4.tcp_congestion_control", congestionControl);
            if (kernel != null) {
                a.knobs().set("usnet.tcp.kernel", kernel);
                b.knobs().set("usnet.tcp.kernel", kernel);
            }
            VethEnd[] v = net.link(a, "veth0", "198.18.0.1/24", b, "veth0", "198.18.0.2/24");
            v[0].setNetem(NetemParams.NONE.withRate(rateBps).withLimit(limit).withLoss(loss).withSeed(seed));
            v[1].setNetem(NetemParams.NONE.withDelay(rttNanos).withLimit(1 << 20).withSeed(seed + 1));
            Tcp ta = Tcp.install(a);
            Tcp tb = Tcp.install(b);
            tb.listen(0, 5001, 16, c -> c.setCallbacks(new TcpSock.Callbacks() {
                @Override
                public void readable(TcpSock s) {
                    while (s.skip(1 << 20) > 0) {
                        // read everything: the receive queue never limits the window
                    }
                }
            }));
            TcpSock c = ta.connect(TcpPair.SERVER, 5001, new EndlessSender(64 * 1024));
            net.run(durationNanos);
            LinkEmulation ne = v[0].netem();
            receiverDrops = b.drops().snapshot();
            senderDrops = a.drops().snapshot();
            Outcome o = new Outcome(c.totalRetrans(), ne.stats().queueDrops(), ne.stats().lost(),
                    b.mib().get(Mib.TcpExtDelayedACKLost), b.mib().get(Mib.TcpExtTCPOFOMerge),
                    b.mib().get(Mib.TcpExtOfoPruned), c.timeouts(), c.bytesAcked(),
                    a.mib().get(Mib.TcpExtTCPDSACKRecv), c.info().format());
            c.abort();
            net.run(1_000_000_000L);
            ta.close();
            tb.close();
            return o;
        }
    }
}
