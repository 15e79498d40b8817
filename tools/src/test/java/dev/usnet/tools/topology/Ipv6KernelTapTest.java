package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tap.HostCommand;
import dev.usnet.tools.run.Daemon;
import dev.usnet.tools.topology.file.TopologySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A kernel namespace reaches a usnet namespace over IPv6 through a TAP, in real time: the kernel resolves usnet's
 * address with neighbour discovery and pings it (ping -6), both to its global and its link-local address, and is
 * reached across a usnet router into a second usnet namespace. The kernel namespace is named usnet-v6-PID, the
 * addresses are in 2001:db8::/32, and the daemon deletes everything (and this test again, by name).
 */
class Ipv6KernelTapTest {
    private static final String NS = "usnet-v6-" + ProcessHandle.current().pid();
    private static final String IFNAME = "uv6t" + ProcessHandle.current().pid() % 10000;
    private Daemon daemon;

    @AfterEach
    void cleanUp() {
        if (daemon != null) {
            daemon.stop();
        }
        HostCommand.run(10, "ip", "netns", "del", NS);
    }

    private static void require(boolean present, String what) {
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(present, "CI must provide: " + what);
        } else {
            org.junit.jupiter.api.Assumptions.assumeTrue(present, what);
        }
    }

    private static HostCommand.Result inNs(int timeoutS, String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", NS));
        c.addAll(List.of(cmd));
        return HostCommand.run(timeoutS, c.toArray(new String[0]));
    }

    /**
     * The replies ping counted. With -w it may send more than -c while the first ones wait for neighbour discovery
     * (usnet's address is tentative for a retrans time), and count every reply that then arrives.
     */
    private static int received(HostCommand.Result r) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) received").matcher(r.output());
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    @Test
    void pingSixFromTheKernelReachesAUsnetNamespaceAndOneBehindItsRouter(@TempDir Path out) {
        require(HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip")
                && HostCommand.has("ping"), "root, /dev/net/tun, iproute2 and ping");
        String yaml = """
                version: 1
                name: v6-tap
                kernel:
                  namespaces: [%1$s]
                namespaces:
                  rt:
                    knobs: {net.ipv6.conf.all.forwarding: 1}
                    devices:
                      - name: tap0
                        kind: tap
                        mac: 02:00:00:00:60:01
                        addresses: [2001:db8:60::1/64]
                        kernel:
                          namespace: %1$s
                          name: %2$s
                          mac: 02:00:00:00:60:02
                          addresses: [2001:db8:60::2/64]
                          routes: ["2001:db8:61::/64 via 2001:db8:60::1"]
                      - name: eth1
                        kind: veth
                        mac: 02:00:00:00:61:01
                        addresses: [2001:db8:61::1/64]
                        peer: {namespace: ctr, name: eth0, mac: 02:00:00:00:61:02, addresses: [2001:db8:61::2/64]}
                  ctr:
                    routes: ["default via 2001:db8:61::1 dev eth0"]
                """.formatted(NS, IFNAME);
        TopologySpec spec = TopologyFile.parse("v6-tap.yaml", yaml);
        daemon = Daemon.start(spec, new Daemon.Options(out, 1), Daemon.Providers.forThisBuild());
        // usnet's addresses are tentative for one retrans time (duplicate address detection): ping until answered.
        HostCommand.Result direct = inNs(30, "ping", "-6", "-n", "-c", "3", "-i", "0.3", "-w", "20", "2001:db8:60::1");
        assertTrue(direct.exit() == 0 && received(direct) >= 3, direct.output());
        HostCommand.Result ll = inNs(20, "ping", "-6", "-n", "-c", "2", "-i", "0.3", "-w", "10",
                "fe80::ff:fe00:6001%" + IFNAME);
        assertTrue(ll.exit() == 0 && received(ll) >= 2, "link-local: " + ll.output());
        HostCommand.Result routed = inNs(30, "ping", "-6", "-n", "-c", "3", "-i", "0.3", "-w", "20", "2001:db8:61::2");
        assertTrue(routed.exit() == 0 && received(routed) >= 3, "through the usnet router: " + routed.output());
        assertTrue(routed.output().contains("ttl=63") || routed.output().contains("hlim=63"), "one hop: " + routed.output());
        HostCommand.Result neigh = inNs(10, "ip", "-6", "neigh", "show", "dev", IFNAME);
        assertTrue(neigh.output().contains("2001:db8:60::1 lladdr 02:00:00:00:60:01"), "resolved by ND: " + neigh.output());
    }
}
