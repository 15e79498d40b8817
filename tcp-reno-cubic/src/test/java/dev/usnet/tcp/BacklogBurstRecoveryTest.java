package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The perf test's usnet-1448 collapse in virtual time ({@link BacklogBurstFlow}): slow start fills the 6 MiB window
 * (4342 segments) and the receiver's 1000-packet backlog drops the tail of every burst that is larger. The sender
 * must mark the holes below the SACKed data lost (FACK) and PRR must resend them within a few round trips.
 *
 * <p>It did so only for half of all connections: FACK's "marked up to" sequence started at 0 instead of the ISS
 * and was never brought along with snd_una, so with an ISS in the upper half of the sequence space (or after
 * 2 GiB without a loss) it read as lying ahead of every segment and nothing was marked lost; the sender sat in
 * Recovery with {@code unacked:3435 sacked:3380 retrans:0} until the RTO. Label "a" gives such an ISS, "b" one in
 * the lower half; both must behave alike.
 */
class BacklogBurstRecoveryTest {

    @ParameterizedTest(name = "namespaces {0}")
    @ValueSource(strings = {"a", "b"})
    void backlogOverflowIsRepairedWithinAFewRoundTrips(String label) {
        BacklogBurstFlow f = new BacklogBurstFlow();
        f.label = label;
        f.durationNanos = 3_000_000L;
        BacklogBurstFlow.Outcome o = f.run();
        System.out.println("backlog burst, namespaces " + label + ": " + o);
        boolean upperHalf = o.iss() >= 1L << 31;
        assertEquals(label.equals("a"), upperHalf, "the label picks the ISS half this test is about: " + o);
        assertTrue(o.backlogDrops() > 100, "bursts overflowed the backlog: " + o);
        assertEquals(0, o.timeouts(), "no RTO: " + o);
        assertTrue(o.longestStallNanos() <= 1_000_000L, "snd_una never stood still for 10 RTTs: " + o);
        assertTrue(o.retrans() <= o.backlogDrops() + 2, "one retransmission per drop: " + o);
        assertTrue(o.bytesAcked() > 15L << 20, "the window kept flowing: " + o);
    }
}
