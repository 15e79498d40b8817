package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tap.HostCommand;
import dev.usnet.tools.run.Daemon;
import dev.usnet.tools.kernel.KernelNet;
import dev.usnet.tools.kernel.PcapProvider;
import dev.usnet.tools.kernel.TapProvider;
import dev.usnet.tools.topology.TopologyFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet ctl link add NAME type tap kernel-netns KNS} on a running daemon: a TAP into a kernel namespace,
 * made when absent, so the kernel can ping usnet without a restart; {@code link del} takes the namespace it made
 * with it. Needs root and /dev/net/tun (skipped without). Kernel namespaces are named usnet-ctltap-PID-*, addresses
 * are in 198.18.0.0/15, and every namespace is deleted again here, by name, when a test fails half-way.
 */
class CtlTapTest {
    private static final String P = "usnet-ctltap-" + ProcessHandle.current().pid() + "-";
    private final List<String> kernelNs = new ArrayList<>();
    private LiveDaemon daemon;

    @AfterEach
    void cleanUp() {
        try {
            if (daemon != null) {
                daemon.close();
            }
        } finally {
            for (String ns : kernelNs) {
                if (Files.exists(Path.of("/run/netns", ns))) {
                    HostCommand.run(10, "ip", "netns", "del", ns);
                }
            }
        }
    }

    private String kernelNs(String suffix) {
        String n = P + suffix;
        kernelNs.add(n);
        return n;
    }

    private static HostCommand.Result run(String... cmd) {
        return HostCommand.run(20, cmd);
    }

    private static boolean exists(String ns) {
        return Files.exists(Path.of("/run/netns", ns));
    }

    @Test
    void aTapAddedToANamespaceAddedLiveLetsTheKernelPingUsnetAndLinkDelTakesItsKernelNamespace(@TempDir Path dir)
            throws Exception {
        Assumptions.assumeTrue(HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip")
                && HostCommand.has("ping"), "root, /dev/net/tun, ip and ping");
        String kns = kernelNs("k");
        daemon = LiveDaemon.start("name: ctltap\nnamespaces:\n  u1: {}\n", dir);
        daemon.ok(null, "ns", "add", "lab1");
        String added = daemon.text("lab1", "link", "add", "tap0", "type", "tap", "kernel-netns", kns, "kernel-name", "uct0");
        assertEquals("added tap lab1/tap0 <-> kernel uct0 in kernel namespace " + kns + " (created); usnet side down,"
                + " kernel side up", added);
        assertTrue(exists(kns));
        HostCommand.Result link = run("ip", "-n", kns, "-d", "link", "show", "uct0");
        assertTrue(link.ok() && link.output().contains("tun type tap") && link.output().contains("alias usnet pid "
                + ProcessHandle.current().pid()), link.output());
        // The kernel name is this run's now; another TAP cannot take it, whichever namespace it names.
        assertEquals("link add tap1 type tap: kernel name uct0 is taken by TAP lab1/tap0 (TAP kernel names are unique in"
                + " a run)", daemon.error("lab1", "link", "add", "tap1", "type", "tap", "kernel-netns", kns,
                "kernel-name", "uct0"));
        assertTrue(daemon.error("lab1", "link", "add", "tap0", "type", "tap", "kernel-netns", kns, "kernel-name", "uct9")
                .contains("device tap0 already exists in namespace lab1"));

        assertTrue(run("ip", "-n", kns, "addr", "add", "198.18.40.1/24", "dev", "uct0").ok());
        daemon.ok("lab1", "addr", "add", "198.18.40.2/24", "dev", "tap0");
        daemon.ok("lab1", "link", "set", "tap0", "up");
        HostCommand.Result ping = run("ip", "netns", "exec", kns, "ping", "-n", "-c", "3", "-i", "0.2", "-W", "2",
                "198.18.40.2");
        assertTrue(ping.ok() && ping.output().contains("3 received"), ping.output());
        long rx = daemon.ok("lab1", "link", "show", "tap0").get(0).path("stats64").path("rx").path("packets").asLong();
        assertTrue(rx >= 4, "ARP and three echoes reached usnet: " + rx);

        assertEquals("deleted tap lab1/tap0 and kernel namespace " + kns, daemon.text("lab1", "link", "del", "tap0"));
        assertFalse(exists(kns), "the kernel namespace made for the TAP went with it");
    }

    @Test
    void aKernelNamespaceThatExistedStaysAndANameTakenThereIsRefused(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip"),
                "root, /dev/net/tun and ip");
        String kns = kernelNs("x");
        assertTrue(run("ip", "netns", "add", kns).ok());
        // Someone else's interface of the name usnet is asked for (a veth pair: no module needed).
        assertTrue(run("ip", "-n", kns, "link", "add", "uctd", "type", "veth", "peer", "name", "uctp").ok());
        daemon = LiveDaemon.start("name: ctltap\nnamespaces:\n  u1: {}\n", dir);
        assertEquals("link add t0 type tap: interface uctd already exists in kernel namespace " + kns + " (not created"
                + " by usnet); delete it or choose another name (kernel-name NAME)",
                daemon.error("u1", "link", "add", "t0", "type", "tap", "kernel-netns", kns, "kernel-name", "uctd"));
        assertEquals(List.of("lo"), daemon.names(daemon.ok("u1", "link", "show"), "ifname"), "nothing was added");
        assertEquals("added tap u1/t0 <-> kernel uct1 in kernel namespace " + kns + "; usnet side down, kernel side up",
                daemon.text("u1", "link", "add", "t0", "type", "tap", "kernel-netns", kns, "kernel-name", "uct1"));
        assertEquals("deleted tap u1/t0", daemon.text("u1", "link", "del", "t0"));
        assertTrue(exists(kns), "a namespace usnet did not make is not usnet's to delete");
        assertFalse(run("ip", "-n", kns, "link", "show", "uct1").ok(), "the TAP's kernel end went with its fd");
    }

    @Test
    void aDaemonWithoutTheCapabilitiesRefusesNamingThem(@TempDir Path dir) {
        // Real providers, but a process that has no capabilities: refused before anything is touched.
        Daemon d = Daemon.start(TopologyFile.parse("t.yaml", "name: nocaps\nnamespaces:\n  u1: {}\n"),
                new Daemon.Options(dir, 1), new Daemon.Providers(TapProvider.forThisBuild(), PcapProvider.forThisBuild(),
                        KernelNet.iproute2(), () -> 0L));
        try {
            NetStack u1 = d.topology().stack("u1");
            CtlException e = assertThrows(CtlException.class, () -> d.kernelTaps().open(
                    new KernelTaps.Request("t0", "uct2", P + "never", false, 0x02_00_00_00_00_01L), u1));
            assertEquals("link add t0 type tap: a TAP into kernel namespace " + P + "never needs CAP_NET_ADMIN and"
                    + " CAP_SYS_ADMIN, which this daemon does not have (CapEff in /proc/self/status): start usnet run"
                    + " as root (sudo)", e.getMessage());
            assertFalse(exists(P + "never"));
        } finally {
            d.stop();
        }
    }
}
