package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.app.Pinger;
import dev.usnet.tools.run.VirtualRun;
import org.junit.jupiter.api.Test;

/**
 * An echo whose reply is still on its way when a ping stops is neither received nor lost: it is counted apart, as
 * ping does at its end, and the loss is that of the echoes that had their time.
 */
class PingUnansweredAtEndTest {
    /** a -- b with 1 ms each way on a's end (RTT 2 ms), a pinging {@code TO} once a second. */
    private static final String FILE = """
            version: 1
            namespaces:
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    netem: {delay: 1ms}
                    peer: {namespace: b, name: eth0, addresses: [198.18.0.2/24], netem: {delay: 1ms}}
                apps:
                  - {kind: ping, to: TO}
              b: {}
            """;

    private static Pinger run(String to, long durationNanos) {
        VirtualRun.RunResult r = VirtualRun.run(TopologyFile.parse("t.yaml", FILE.replace("TO", to)),
                new VirtualRun.Options(durationNanos, null, null));
        return (Pinger) r.apps().getFirst();
    }

    @Test
    void anEchoSentJustBeforeTheEndIsUnansweredAtTheEndNotLost() {
        // Echoes at 0, 1, ..., 5 s; the run stops at 5 s, when the last has just left.
        Pinger p = run("198.18.0.2", 5_000_000_000L);
        assertEquals(6, p.sent());
        assertEquals(5, p.received());
        assertEquals(1, p.unansweredAtEnd());
        assertTrue(p.summary().startsWith("a: ping 198.18.0.2: 6 sent, 5 received, 1 unanswered at the end (sent within"
                + " two round trips of it), 0% loss, rtt p50 "), p.summary());
        // Half a second more and it is answered.
        p = run("198.18.0.2", 5_500_000_000L);
        assertEquals(6, p.received());
        assertEquals(0, p.unansweredAtEnd());
        assertTrue(p.summary().startsWith("a: ping 198.18.0.2: 6 sent, 6 received, 0% loss"), p.summary());
    }

    @Test
    void echoesNobodyAnswersAreLost() {
        Pinger p = run("198.18.0.9", 3_000_000_000L);
        assertEquals(4, p.sent());
        assertEquals(0, p.unansweredAtEnd());
        assertTrue(p.summary().startsWith("a: ping 198.18.0.9: 4 sent, 0 received, 100% loss"), p.summary());
    }
}
