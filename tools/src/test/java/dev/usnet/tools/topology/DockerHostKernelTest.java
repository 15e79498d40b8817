package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.tap.HostCommand;
import dev.usnet.tools.app.HttpGet;
import dev.usnet.tools.run.Daemon;
import dev.usnet.tools.topology.file.TopologySpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * examples/docker-host-kernel.yaml in real time against a Linux namespace on the far side of a TAP: curl from the
 * kernel namespace to the host's published port 8080 is answered by container c1, which saw the kernel's own
 * address (DNAT); container c2 fetching from a server in the kernel namespace arrives from the host's address
 * (MASQUERADE). The example file is run as it is, with the kernel namespace and TAP renamed per process
 * (usnet-dh-PID, dh-PID) so the test never meets a user's run; the daemon deletes both, and this test again by name.
 */
class DockerHostKernelTest {
    private static final String NS = "usnet-dh-" + ProcessHandle.current().pid();
    private static final String IFNAME = "dh" + ProcessHandle.current().pid() % 100000;
    private Daemon daemon;
    private Process server;

    @AfterEach
    void cleanUp() {
        if (server != null) {
            HostCommand.kill(server);
        }
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

    private static Path example() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path p = d.resolve("examples/docker-host-kernel.yaml");
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        throw new AssertionError("examples/docker-host-kernel.yaml not found above " + Path.of("").toAbsolutePath());
    }

    @Test
    void curlReachesThePublishedPortAndContainersLeaveWithTheHostsAddress(@TempDir Path out) throws Exception {
        require(HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip")
                && HostCommand.has("curl") && Files.isExecutable(Path.of("/usr/bin/python3")),
                "root, /dev/net/tun, iproute2, curl and python3");
        String yaml = Files.readString(example())
                .replace("usnet-outside", NS)
                .replace("name: eth0\n          addresses: [198.19.0.2/24]", "name: " + IFNAME
                        + "\n          addresses: [198.19.0.2/24]")
                // c2 fetches from the kernel's server once it listens (the test starts it right after the daemon).
                .replace("    routes: [default via 198.18.17.1]\n\n  c3:", "    routes: [default via 198.18.17.1]\n"
                        + "    apps:\n      - {kind: http-get, to: 198.19.0.2, port: 8000, start: 4s}\n\n  c3:");
        assertTrue(yaml.contains(IFNAME) && yaml.contains("port: 8000"), "the example changed shape: " + yaml);
        TopologySpec spec = TopologyFile.parse("docker-host-kernel.yaml", yaml);
        daemon = Daemon.start(spec, new Daemon.Options(out, 1), Daemon.Providers.forThisBuild());
        // A one-shot server in the kernel namespace that answers HTTP and says who connected.
        server = new ProcessBuilder("ip", "netns", "exec", NS, "/usr/bin/python3", "-c", """
                import socket
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(('198.19.0.2', 8000)); s.listen(1); s.settimeout(30)
                c, peer = s.accept(); c.settimeout(10)
                data = b''
                while b'\\r\\n\\r\\n' not in data:
                    data += c.recv(4096)
                c.sendall(b'HTTP/1.0 200 OK\\r\\nContent-Length: 3\\r\\n\\r\\nok\\n'); c.close()
                print('peer', peer[0], flush=True)
                """).redirectErrorStream(true).start();

        HostCommand.Result curl = HostCommand.run(20, "ip", "netns", "exec", NS, "curl", "-s", "-m", "10",
                "--retry", "3", "--retry-all-errors", "http://198.19.0.1:8080/");
        assertEquals(0, curl.exit(), curl.output());
        assertTrue(curl.output().contains("hello from c1"), curl.output());
        assertTrue(curl.output().contains("you came from 198.19.0.2:"), "DNAT keeps the client's address: " + curl.output());

        assertTrue(server.waitFor(30, TimeUnit.SECONDS), "the kernel's server got no connection");
        String said = new String(server.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        assertTrue(said.contains("peer 198.19.0.1"), "c2 leaves with the host's address (MASQUERADE): " + said);
        HttpGet.Client get = daemon.apps().list().stream().filter(a -> a instanceof HttpGet.Client)
                .map(a -> (HttpGet.Client) a).findFirst().orElseThrow();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!get.completed() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertTrue(get.outcome().ok(), get.summary());

        // The host tracked both: the published port's connection DNATed, c2's masqueraded.
        var host = daemon.topology().stack("host");
        ConntrackCore ct = ConntrackCore.of(host.ipv4());
        var listed = new java.util.concurrent.CompletableFuture<List<String>>();
        host.scheduler().execute(() -> {
            List<String> l = new java.util.ArrayList<>();
            ct.table().forEach(e -> l.add(e.describe(host.now())));
            listed.complete(l);
        });
        List<String> lines = listed.get(5, TimeUnit.SECONDS);
        assertTrue(lines.stream().anyMatch(l -> l.contains("dport=8080") && l.contains("src=198.18.17.2")), lines.toString());
        assertTrue(lines.stream().anyMatch(l -> l.contains("src=198.18.17.3") && l.contains("dst=198.19.0.1 sport=8000")),
                lines.toString());
    }
}
