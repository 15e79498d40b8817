package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.tap.HostCommand;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * As root with a TAP into a kernel namespace: {@code usnet run} (a process of its own, started as through sudo)
 * gives up root once set up (CapEff and CapPrm 0 in /proc/PID/status, the invoking user's uid), {@code usnet ctl
 * link set tap-a down} is carrier loss on the kernel side, and at the stop the kernel namespace still goes. Needs
 * root, /dev/net/tun and iproute2: skipped without them, a failure when CI=true. Deletes its namespace by name.
 */
class PrivilegeDropTest {
    @Test
    void theDaemonDropsRootAndALinkTakenDownIsCarrierLossOnTheKernelSide() throws Exception {
        dev.usnet.tools.KernelTapFixtureAccess.requireTapAndNetns();
        String k = "usnet-t-" + ProcessHandle.current().pid() + "-priv";
        Path out = Files.createTempDirectory("usnet-priv");
        Files.setPosixFilePermissions(out, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path file = out.resolve("priv.yaml");
        Files.writeString(file, """
                name: priv
                kernel:
                  namespaces: [%s]
                namespaces:
                  r:
                    devices:
                      - name: tap-a
                        kind: tap
                        addresses: [198.18.5.1/24]
                        kernel:
                          namespace: %s
                          name: upriv0
                          addresses: [198.18.5.2/24]
                """.formatted(k, k));
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                "-cp", System.getProperty("java.class.path"), "dev.usnet.tools.Usnet", "run", "--warm-up-frames", "0",
                "--out", out.resolve("o").toString(), file.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("SUDO_UID", "65534");
        pb.environment().put("SUDO_GID", "65534");
        Process p = pb.start();
        List<String> lines = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                }
            } catch (Exception ignored) {
                // The process ended.
            }
        });
        reader.start();
        try {
            assertTrue(LiveDaemon.eventually(60_000, () -> lines.stream().anyMatch(l -> l.startsWith("usnet: ready"))
                    || !p.isAlive()), "never ready: " + lines);
            assertTrue(p.isAlive(), "the daemon ended: " + lines);
            String status = Files.readString(Path.of("/proc/" + p.pid() + "/status"));
            assertTrue(status.contains("CapEff:\t0000000000000000"), status);
            assertTrue(status.contains("CapPrm:\t0000000000000000"), status);
            assertTrue(status.lines().anyMatch(l -> l.startsWith("Uid:\t65534\t65534\t65534")), status);
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("usnet: dropped root: now uid 65534")), lines.toString());
            for (String task : Files.list(Path.of("/proc/" + p.pid() + "/task")).map(t -> t.getFileName().toString()).toList()) {
                String ts = Files.readString(Path.of("/proc/" + p.pid() + "/task/" + task + "/status"));
                assertTrue(ts.contains("CapEff:\t0000000000000000"), "thread " + task + " kept capabilities");
            }
            Path sock = out.resolve("o/ctl.sock");
            assertFalse(ip(k).contains("NO-CARRIER"), ip(k));
            JsonNode r;
            try (CtlClient c = CtlClient.connect(sock)) {
                r = c.request("r", List.of("link", "set", "tap-a", "down"));
            }
            assertTrue(r.path("ok").asBoolean(), r.toString());
            assertTrue(LiveDaemon.eventually(3000, () -> ip(k).contains("NO-CARRIER")), ip(k));
            try (CtlClient c = CtlClient.connect(sock)) {
                r = c.request("r", List.of("link", "set", "tap-a", "up"));
            }
            assertTrue(r.path("ok").asBoolean(), r.toString());
            assertTrue(LiveDaemon.eventually(3000, () -> !ip(k).contains("NO-CARRIER")), ip(k));
            // Nothing kept for a TAP added live: refused, saying why, and no kernel namespace made.
            try (CtlClient c = CtlClient.connect(sock)) {
                r = c.request("r", List.of("link", "add", "tap-b", "type", "tap", "kernel-netns", k + "b"));
            }
            assertFalse(r.path("ok").asBoolean(), r.toString());
            assertTrue(r.path("error").asText().contains("which this daemon gave up once it was running (started through"
                    + " sudo, it became uid 65534 after its start)"), r.toString());
            assertFalse(Files.exists(Path.of("/run/netns", k + "b")));
            p.destroy();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            reader.join(5000);
            assertEquals(0, p.exitValue(), String.join("\n", lines));
            assertFalse(Files.exists(Path.of("/run/netns", k)), "the kernel namespace outlived the daemon: " + lines);
            assertTrue(lines.stream().anyMatch(l -> l.contains("kernel namespaces " + k)), lines.toString());
        } finally {
            if (p.isAlive()) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            if (Files.exists(Path.of("/run/netns", k))) {
                HostCommand.run(10, "ip", "netns", "del", k);
            }
            try (var all = Files.walk(out)) {
                for (Path f : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }

    private static String ip(String ns) {
        return HostCommand.run(10, "ip", "-n", ns, "link", "show", "upriv0").output();
    }
}
