package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tap.HostCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet run} against a real kernel: it refuses names that exist and leaves them as they were, a run killed
 * with SIGKILL leaves marked namespaces that a refused start lists and {@code usnet cleanup} removes, SIGTERM during
 * the warm-up or the build ends the run within a second with nothing left, and without CAP_NET_ADMIN it says so
 * before doing anything. Runs as root (required when CI=true); every kernel namespace and link is named
 * usnet-sf-PID..., addresses are in 198.18.0.0/15, and all of them are deleted here by name whatever happens.
 */
class KernelSafetyTest {
    private static final long PID = ProcessHandle.current().pid();
    /** Kernel namespaces: usnet-sf-PID-x. */
    private static final String NS = "usnet-sf-" + PID + "-";
    /** Links (15 characters at most): usnet-sf-NNNNx. */
    private static final String IF = "usnet-sf-" + PID % 10_000;
    private final List<Process> children = new ArrayList<>();

    @BeforeEach
    void prerequisites() {
        boolean ok = HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip");
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(ok, "CI must provide: root, /dev/net/tun and iproute2");
        } else {
            org.junit.jupiter.api.Assumptions.assumeTrue(ok, "root, /dev/net/tun and iproute2");
        }
    }

    @AfterEach
    void deleteEverythingOfOurs() throws IOException {
        for (Process p : children) {
            HostCommand.kill(p);
        }
        for (String ns : ourNamespaces()) {
            HostCommand.run(10, "ip", "netns", "del", ns);
        }
        for (String l : ourLinks()) {
            HostCommand.run(10, "ip", "link", "del", l);
        }
    }

    private static List<String> ourNamespaces() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/run/netns"))) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(NS)).sorted().toList();
        } catch (java.nio.file.NoSuchFileException e) {
            return List.of();
        }
    }

    private static List<String> ourLinks() {
        List<String> l = new ArrayList<>();
        for (String line : HostCommand.run(10, "ip", "-o", "link", "show").output().split("\n")) {
            String[] f = line.split(":\\s+");
            if (f.length > 1 && f[1].split("@")[0].startsWith(IF)) {
                l.add(f[1].split("@")[0]);
            }
        }
        return l;
    }

    private static void ip(String... args) {
        List<String> c = new ArrayList<>(List.of("ip"));
        c.addAll(List.of(args));
        HostCommand.Result r = HostCommand.run(10, c.toArray(new String[0]));
        assertTrue(r.ok(), c + ": " + r.output());
    }

    /** Everything {@code ip -d addr} says about a link: flags, MTU, state, kind, persistence, addresses. */
    private static String state(String link) {
        return HostCommand.run(10, "ip", "-d", "addr", "show", "dev", link).output();
    }

    /** {@code usnet ARGS} as a JVM of its own, so it can be signalled and killed; output merged into {@code log}. */
    private Process usnet(List<String> prefix, Path log, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(List.of(ProcessHandle.current().info().command().orElseThrow(), "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-cp", System.getProperty("java.class.path"), "dev.usnet.tools.Usnet"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        children.add(p);
        return p;
    }

    private static String awaitLine(Path log, String text, Process p, long timeoutMillis) throws Exception {
        long end = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (System.nanoTime() < end) {
            String s = Files.exists(log) ? Files.readString(log) : "";
            if (s.contains(text)) {
                return s;
            }
            assertTrue(p.isAlive(), "usnet ended before printing '" + text + "': " + s);
            Thread.sleep(10);
        }
        throw new AssertionError("no '" + text + "' within " + timeoutMillis + " ms: " + Files.readString(log));
    }

    /** Sends SIGTERM and returns the milliseconds until the process has ended. */
    private static long termAndTime(Process p) throws Exception {
        long t0 = System.nanoTime();
        p.destroy();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS), "usnet did not end within 10 s of SIGTERM");
        return (System.nanoTime() - t0) / 1_000_000;
    }

    @Test
    void existingLinksOfTheFilesNamesAreRefusedAllAtOnceAndLeftExactlyAsTheyWere(@TempDir Path tmp) throws IOException {
        String tap = IF + "t";
        String veth = IF + "v";
        ip("tuntap", "add", tap, "mode", "tap");
        ip("link", "set", "dev", tap, "mtu", "1400", "up");
        ip("addr", "add", "198.18.70.2/24", "dev", tap);
        ip("link", "add", veth, "type", "veth", "peer", "name", IF + "w");
        String tapBefore = state(tap);
        String vethBefore = state(veth);
        Path f = tmp.resolve("collide.yaml");
        Files.writeString(f, """
                namespaces:
                  sw:
                    devices:
                      - {name: br0, kind: bridge, ports: [t0, t1]}
                      - {name: t0, kind: tap, kernel: {name: %s, mtu: 9000, addresses: [198.18.70.3/24]}}
                      - {name: t1, kind: tap, kernel: {name: %s, addresses: [198.18.71.3/24]}}
                """.formatted(tap, veth));
        RunCommandTest.Result r = RunCommandTest.run("run", "--duration", "1", "--warm-up-frames", "0", f.toString());
        assertEquals(2, r.code(), r.out() + r.err());
        assertEquals(List.of(
                "usnet: " + f + ":5: namespaces.sw.devices[1].kernel: interface " + tap
                        + " already exists (not created by usnet); delete it or choose another name",
                "usnet: " + f + ":6: namespaces.sw.devices[2].kernel: interface " + veth
                        + " already exists (not created by usnet); delete it or choose another name"),
                List.of(r.err().split("\n")));
        assertFalse(r.out().contains("ready"), r.out());
        assertEquals(tapBefore, state(tap));
        assertEquals(vethBefore, state(veth));
    }

    @Test
    void aRunKilledWithSigkillLeavesMarkedNamespacesThatARefusedStartListsAndCleanupRemoves(@TempDir Path tmp)
            throws Exception {
        String k1 = NS + "k1";
        String k2 = NS + "k2";
        String k3 = NS + "k3";
        Path f = tmp.resolve("killed.yaml");
        Files.writeString(f, """
                kernel:
                  namespaces: [%s, %s]
                namespaces:
                  sw:
                    devices:
                      - name: t0
                        kind: tap
                        addresses: [198.18.72.1/24]
                        kernel: {namespace: %s, name: %sk, addresses: [198.18.72.2/24]}
                """.formatted(k1, k2, k1, IF));
        Process p = usnet(List.of(), tmp.resolve("killed.log"), "run", "--warm-up-frames", "0", f.toString());
        awaitLine(tmp.resolve("killed.log"), "usnet: ready", p, 60_000);
        p.destroyForcibly();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertEquals(List.of(k1, k2), ourNamespaces());

        // A namespace of the same name that usnet did not make (no mark) is someone else's.
        Files.writeString(f, Files.readString(f).replace("[" + k1 + ", " + k2 + "]", "[" + k1 + ", " + k2 + ", " + k3 + "]"));
        ip("netns", "add", k3);
        RunCommandTest.Result r = RunCommandTest.run("run", "--duration", "1", "--warm-up-frames", "0", f.toString());
        assertEquals(2, r.code(), r.out() + r.err());
        List<String> lines = List.of(r.err().split("\n"));
        assertEquals(4, lines.size(), r.err());
        assertTrue(lines.get(0).contains("kernel namespace " + k1 + " already exists, left over from a usnet run that is gone (pid "
                + p.pid()), r.err());
        assertTrue(lines.get(1).contains("kernel namespace " + k2 + " already exists, left over"), r.err());
        assertTrue(lines.get(2).contains("kernel namespace " + k3 + " already exists (not created by usnet)"), r.err());
        assertEquals("usnet: run: usnet cleanup " + f, lines.get(3));

        r = RunCommandTest.run("cleanup", f.toString());
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("usnet: deleted kernel namespace " + k1 + " (left by usnet pid " + p.pid()), r.out());
        assertTrue(r.out().contains("usnet: deleted kernel namespace " + k2 + " (left by usnet pid " + p.pid()), r.out());
        assertTrue(r.out().contains("usnet: left alone: kernel namespace " + k3 + " already exists (not created by usnet)"), r.out());
        assertEquals(List.of(k3), ourNamespaces());
        assertEquals(List.of(), ourLinks());
    }

    /**
     * A build the kernel refuses half-way: two kernel namespaces and a TAP into the first are made, then the
     * kernel refuses a route of the second TAP's kernel side (its gateway is on no link). The run fails naming
     * the route and the kernel's reason, and removes everything it had created: no namespace, no link left.
     */
    @Test
    void aBuildTheKernelRefusesHalfWayRemovesEverythingItHadCreated(@TempDir Path tmp) throws IOException {
        String k1 = NS + "h1";
        String k2 = NS + "h2";
        Path f = tmp.resolve("halfway.yaml");
        Files.writeString(f, """
                kernel:
                  namespaces: [%s, %s]
                namespaces:
                  sw:
                    devices:
                      - name: t0
                        kind: tap
                        addresses: [198.18.74.1/24]
                        kernel: {namespace: %s, name: %sa, addresses: [198.18.74.2/24]}
                      - name: t1
                        kind: tap
                        addresses: [198.18.75.1/24]
                        kernel:
                          namespace: %s
                          name: %sb
                          addresses: [198.18.75.2/24]
                          routes: [198.18.76.0/24 via 198.18.77.9]
                """.formatted(k1, k2, k1, IF, k2, IF));
        RunCommandTest.Result r = RunCommandTest.run("run", "--duration", "1", "--warm-up-frames", "0", f.toString());
        assertTrue(r.code() != 0, "the run must fail: " + r.out() + r.err());
        assertTrue(r.err().contains("198.18.76.0/24"), "the error names the route: " + r.err());
        assertEquals(List.of(), ourNamespaces(), r.err());
        assertEquals(List.of(), ourLinks(), r.err());
    }

    @Test
    void sigtermDuringTheWarmUpEndsTheRunWithinASecondWithNothingLeft(@TempDir Path tmp) throws Exception {
        Path f = tmp.resolve("warm.yaml");
        Files.writeString(f, """
                kernel:
                  namespaces: [%s]
                namespaces:
                  sw:
                    devices:
                      - name: t0
                        kind: tap
                        kernel: {namespace: %s, name: %sw}
                """.formatted(NS + "w", NS + "w", IF));
        Path log = tmp.resolve("warm.log");
        // Ten million frames a path: an hour of warm-up unless the signal ends it.
        Process p = usnet(List.of(), log, "run", "--warm-up-frames", "10000000", f.toString());
        awaitLine(log, "usnet: warming up the data path", p, 60_000);
        Thread.sleep(500);
        long ms = termAndTime(p);
        String out = Files.readString(log);
        assertTrue(ms < 1000, "ended " + ms + " ms after SIGTERM, exit " + p.exitValue() + ": " + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("usnet: stopping on signal during start-up"), out);
        assertFalse(out.contains("usnet: ready"), out);
        assertEquals(List.of(), ourNamespaces());
        assertEquals(List.of(), ourLinks());
    }

    @Test
    void sigtermDuringTheBuildEndsTheRunWithinASecondAndUndoesIt(@TempDir Path tmp) throws Exception {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            names.add(NS + "b" + i);
        }
        Path f = tmp.resolve("build.yaml");
        Files.writeString(f, "kernel:\n  namespaces: [" + String.join(", ", names) + "]\nnamespaces:\n  sw: {}\n");
        Path log = tmp.resolve("build.log");
        Process p = usnet(List.of(), log, "run", "--warm-up-frames", "0", f.toString());
        // The signal as soon as the first kernel namespace is there: 39 are still to come.
        long end = System.nanoTime() + 60_000_000_000L;
        while (!Files.exists(Path.of("/run/netns", names.get(0))) && System.nanoTime() < end && p.isAlive()) {
            Thread.sleep(2);
        }
        long ms = termAndTime(p);
        String out = Files.readString(log);
        assertTrue(ms < 1000, "ended " + ms + " ms after SIGTERM, exit " + p.exitValue() + ": " + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("usnet: stopping on signal during start-up"), out);
        assertEquals(List.of(), ourNamespaces());
    }

    @Test
    void withoutCapNetAdminTheRunSaysSoAndCreatesNothing(@TempDir Path tmp) throws Exception {
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(HostCommand.has("setpriv"), "CI must provide setpriv (util-linux)");
        } else {
            org.junit.jupiter.api.Assumptions.assumeTrue(HostCommand.has("setpriv"), "setpriv (util-linux)");
        }
        Path f = tmp.resolve("unprivileged.yaml");
        Files.writeString(f, "name: unprivileged\nkernel:\n  namespaces: [" + NS + "u]\nnamespaces:\n  sw: {}\n");
        Path log = tmp.resolve("unprivileged.log");
        // Root, but with CAP_NET_ADMIN and CAP_SYS_ADMIN gone from the bounding set: as in a locked-down container.
        Process p = usnet(List.of("setpriv", "--inh-caps=-all", "--bounding-set=-net_admin,-sys_admin", "--"), log,
                "run", "--duration", "1", f.toString());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = Files.readString(log);
        assertEquals(2, p.exitValue(), out);
        assertEquals("usnet: unprivileged: kernel namespaces (" + NS + "u) need CAP_NET_ADMIN and CAP_SYS_ADMIN, which this"
                + " process does not have (CapEff in /proc/self/status): run as root (sudo)\n", out);
        assertEquals(List.of(), ourNamespaces());
    }
}
