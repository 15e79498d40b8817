package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.run.VirtualRun;
import org.junit.jupiter.api.Test;

/**
 * Two usnet bridges joined by two veth pairs and no spanning tree, a host on one of them pinging: its ARP broadcast
 * goes round the loop for ever. The virtual run ends with the watchdog's error naming the loop's bridges and links,
 * not with a StackOverflowError from releasing what went round.
 */
class BridgeLoopRunTest {
    private static final String FILE = """
            version: 1
            namespaces:
              sw1:
                devices:
                  - {name: br0, kind: bridge, ports: [l1, l2, ha]}
              sw2:
                devices:
                  - {name: br0, kind: bridge, ports: [l1, l2]}
                  - {name: l1, kind: veth, peer: {namespace: sw1, name: l1}}
                  - {name: l2, kind: veth, peer: {namespace: sw1, name: l2}}
              a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    peer: {namespace: sw1, name: ha}
                apps:
                  - {kind: ping, to: 198.18.0.2}
            """;

    @Test
    void aLoopOfBridgesEndsTheRunWithAnErrorNamingItsBridgesAndLinks() {
        UsageException e = assertThrows(UsageException.class, () -> VirtualRun.run(TopologyFile.parse("t.yaml", FILE),
                new VirtualRun.Options(2_000_000_000L, null, null).withStallLimits(20_000, 5_000)));
        assertInstanceOf(VirtualScheduler.ClockStalled.class, e.getCause());
        String m = e.getMessage();
        assertTrue(m.contains("the same ARP broadcasts keep arriving without end"), m);
        assertTrue(m.contains("break the loop: bridges sw1/br0, sw2/br0 through sw1/l1-sw2/l1, sw2/l2-sw1/l2")
                || m.contains("break the loop: bridges sw2/br0, sw1/br0 through sw2/l1-sw1/l1, sw1/l2-sw2/l2"), m);
    }
}
