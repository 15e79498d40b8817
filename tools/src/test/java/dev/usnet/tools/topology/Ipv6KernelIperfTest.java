package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.core.device.Device;
import dev.usnet.tap.HostCommand;
import dev.usnet.tap.TapDevice;
import dev.usnet.tools.run.Daemon;
import dev.usnet.tools.topology.file.TopologySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * TCP over IPv6 between two kernel namespaces through usnet, as {@link KernelEndToEndTest} does for IPv4: ping -6
 * and a 5 s iperf3 -6 stream across a usnet router (IPv6 forwarding) and across a usnet bridge, each with and
 * without vnet_hdr. With vnet_hdr the kernel hands usnet 64 KB TCPv6 super-frames (VIRTIO_NET_HDR_GSO_TCPV6) that
 * usnet forwards whole; iperf3's byte count is checked against what usnet wrote towards the receiver. Kernel
 * namespaces are named usnet-v6e-PID-*, addresses are in 2001:db8::/32, and everything is deleted by the daemon
 * (and again here, by name, if a test fails half-way).
 */
class Ipv6KernelIperfTest {
    private static final String P = "usnet-v6e-" + ProcessHandle.current().pid() + "-";
    private final List<String> kernelNs = new ArrayList<>();
    private Daemon daemon;

    @AfterEach
    void cleanUp() {
        if (daemon != null) {
            daemon.stop();
        }
        for (String ns : kernelNs) {
            HostCommand.run(10, "ip", "netns", "del", ns);
        }
    }

    private static void require(boolean present, String what) {
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(present, "CI must provide: " + what);
        } else {
            org.junit.jupiter.api.Assumptions.assumeTrue(present, what);
        }
    }

    private static HostCommand.Result inNs(String ns, int timeoutS, String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        c.addAll(List.of(cmd));
        return HostCommand.run(timeoutS, c.toArray(new String[0]));
    }

    private static String tap(String name, boolean gso, String usnetCidr, String ns, String ifname, String kernelCidr,
                              String route) {
        return "      - name: " + name + "\n        kind: tap\n        vnet_hdr: " + gso + "\n"
                + (usnetCidr == null ? "" : "        addresses: [" + usnetCidr + "]\n")
                + "        kernel:\n          namespace: " + ns + "\n          name: " + ifname + "\n"
                + "          addresses: [" + kernelCidr + "]\n"
                + (route == null ? "" : "          routes: [\"" + route + "\"]\n");
    }

    private String routerYaml(boolean gso, String a, String b) {
        String pid = Long.toString(ProcessHandle.current().pid() % 10000);
        return "version: 1\nname: v6-e2e-router\nkernel:\n  namespaces: [" + a + ", " + b + "]\nnamespaces:\n  rt:\n"
                + "    knobs:\n      net.ipv6.conf.all.forwarding: 1\n    devices:\n"
                + tap("tap-a", gso, "2001:db8:71::1/64", a, "u6r" + pid + "a", "2001:db8:71::2/64",
                        "default via 2001:db8:71::1")
                + tap("tap-b", gso, "2001:db8:72::1/64", b, "u6r" + pid + "b", "2001:db8:72::2/64",
                        "default via 2001:db8:72::1");
    }

    private String bridgeYaml(boolean gso, String a, String b) {
        String pid = Long.toString(ProcessHandle.current().pid() % 10000);
        return "version: 1\nname: v6-e2e-bridge\nkernel:\n  namespaces: [" + a + ", " + b + "]\nnamespaces:\n  sw:\n"
                + "    devices:\n      - name: br0\n        kind: bridge\n        ports: [tap0, tap1]\n"
                + tap("tap0", gso, null, a, "u6b" + pid + "a", "2001:db8:70::1/64", null)
                + tap("tap1", gso, null, b, "u6b" + pid + "b", "2001:db8:70::2/64", null);
    }

    /** iperf3 -6 from {@code client} to {@code server}'s {@code dst} for 5 s: the JSON summary ({@code end}). */
    private static JsonNode iperf(String client, String server, String dst) throws Exception {
        HostCommand.Result srv = inNs(server, 5, "iperf3", "-s", "-1", "-D", "-p", "5302");
        assertEquals(0, srv.exit(), srv.output());
        Thread.sleep(300);
        HostCommand.Result r = inNs(client, 30, "iperf3", "-6", "-c", dst, "-p", "5302", "-t", "5", "-J");
        assertEquals(0, r.exit(), r.output());
        return new ObjectMapper().readTree(r.output()).path("end");
    }

    @ParameterizedTest(name = "{0}, vnet_hdr={1}")
    @CsvSource({"router, true", "router, false", "bridge, true", "bridge, false"})
    void iperf3OverIpv6AcrossUsnetWithByteCountsMatching(String kind, boolean gso, @TempDir Path out)
            throws Exception {
        require(HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip"),
                "root, /dev/net/tun and iproute2");
        require(HostCommand.has("ping") && HostCommand.has("iperf3"),
                "ping and iperf3 (apt-get install iputils-ping iperf3)");
        String a = P + kind.charAt(0) + (gso ? "g" : "n") + "a";
        String b = P + kind.charAt(0) + (gso ? "g" : "n") + "b";
        kernelNs.add(a);
        kernelNs.add(b);
        String yaml = kind.equals("router") ? routerYaml(gso, a, b) : bridgeYaml(gso, a, b);
        String dst = kind.equals("router") ? "2001:db8:72::2" : "2001:db8:70::2";
        TopologySpec spec = TopologyFile.parse("v6-e2e.yaml", yaml);
        daemon = Daemon.start(spec, new Daemon.Options(out, 1), Daemon.Providers.forThisBuild());
        // Addresses on both sides are tentative for a while (duplicate address detection): ping until answered.
        HostCommand.Result ping = inNs(a, 40, "ping", "-6", "-n", "-c", "3", "-i", "0.3", "-w", "30", dst);
        assertTrue(ping.exit() == 0, ping.output());
        Device egress = daemon.topology().device(kind.equals("router") ? "rt" : "sw",
                kind.equals("router") ? "tap-b" : "tap1");
        long before = egress.stats().txBytes;
        JsonNode end = iperf(a, b, dst);
        JsonNode sum = end.path("sum_received");
        long received = sum.path("bytes").asLong();
        long sent = egress.stats().txBytes - before;
        System.out.printf(Locale.ROOT, "iperf3 -6 across the usnet %s, vnet_hdr=%s: %.2f Gbit/s (%d bytes, %d"
                + " retransmitted segments)%n", kind, gso, sum.path("bits_per_second").asDouble() / 1e9, received,
                end.path("sum_sent").path("retransmits").asLong());
        assertTrue(received > 5_000_000L, "the stream flowed through usnet: " + received + " bytes");
        // Payload plus IPv6 and TCP headers (at most ~6 % for 1428-byte segments, far less with GSO) plus the
        // control connection: never less than iperf3 received.
        assertTrue(sent >= received, "usnet wrote " + sent + " bytes, iperf3 received " + received);
        assertTrue(sent <= received * 1.08 + 1_000_000, "usnet wrote " + sent + " bytes, iperf3 received " + received);
        if (gso) {
            TapDevice t = (TapDevice) egress;
            assertTrue(t.tapStats().txFrames < sent / 2000, "TCPv6 super-frames passed whole: " + t.tapStats());
        }
    }
}
