package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.tcp.TcpPair.BulkSender;
import dev.usnet.tcp.TcpPair.HashingSink;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Transfers over usnet's own link emulation (netem on both veth ends) with 2 % loss, reordering and
 * duplication, for seeds drawn anew on every run (printed, so a failure can be replayed with
 * -Dusnet.test.seed=N): the data always arrives byte-exact.
 */
class TcpOverNetemTest {

    static LongStream seeds() {
        String fixed = System.getProperty("usnet.test.seed");
        if (fixed != null) {
            return LongStream.of(Long.parseLong(fixed));
        }
        long base = System.nanoTime();
        System.out.println("TcpOverNetemTest seeds from base " + base + " (replay one with -Dusnet.test.seed=N)");
        return new SplittableRandom(base).longs(5);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void lossyReorderingDuplicatingLinkKeepsDataExact(long seed) {
        transfer(seed, null);
    }

    /** The same with the 6.x preset on both ends: RACK, its reordering timer, F-RTO and D-SACK undo at work. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void lossyReorderingDuplicatingLinkKeepsDataExactWithThe6xPreset(long seed) {
        transfer(seed, "6.x");
    }

    private static void transfer(long seed, String kernel) {
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a-" + seed);
            NetStack b = net.ns("b-" + seed);
            if (kernel != null) {
                a.knobs().set("usnet.tcp.kernel", kernel);
                b.knobs().set("usnet.tcp.kernel", kernel);
            }
            VethEnd[] v = net.link(a, "veth0", "198.18.0.1/24", b, "veth0", "198.18.0.2/24");
            NetemParams impaired = NetemParams.NONE.withRate(1_000_000_000L).withDelay(100_000L).withLoss(0.02)
                    .withReorder(0.02).withDuplicate(0.02).withLimit(1000).withSeed(seed);
            v[0].setNetem(impaired);
            v[1].setNetem(impaired.withSeed(seed + 1));
            Tcp ta = Tcp.install(a);
            Tcp tb = Tcp.install(b);
            byte[] data = TcpPair.randomBytes(1 << 20, seed);
            HashingSink sink = new HashingSink();
            tb.listen(0, 5001, 16, c -> c.setCallbacks(sink));
            TcpSock c = ta.connect(TcpPair.SERVER, 5001,
                    new BulkSender(data, 32 * 1024));
            long deadline = net.sched.nanoTime() + 600_000_000_000L;
            while (!sink.eof && net.sched.nanoTime() < deadline) {
                long next = net.sched.nextEventTime();
                if (next < 0) {
                    break;
                }
                net.sched.runUntil(next);
            }
            assertTrue(sink.eof, "transfer finished (seed " + seed + ")");
            assertEquals(TcpPair.sha256(data), sink.hash(), "seed " + seed);
            assertTrue(v[0].netem().stats().lost() > 0 && v[0].netem().stats().duplicated() > 0
                    && v[0].netem().stats().reordered() > 0, "the link did lose, duplicate and reorder (seed " + seed + ")");
            assertTrue(c.totalRetrans() > 0);
            net.run(200_000_000_000L);
            ta.close();
            tb.close();
        }
    }
}
