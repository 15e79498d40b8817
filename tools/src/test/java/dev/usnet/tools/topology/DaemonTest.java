package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.kernel.KernelNet;
import dev.usnet.tools.kernel.PcapProvider;
import dev.usnet.tools.kernel.Privileges;
import dev.usnet.tools.kernel.TapProvider;
import dev.usnet.tools.kernel.UsnetMark;
import dev.usnet.tools.run.Daemon;
import dev.usnet.tools.topology.build.Topology;
import dev.usnet.tools.topology.file.TopologySpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The daemon's life: traffic through a built topology, kernel-side setup and cleanup (with fakes), signals. */
class DaemonTest {

    @Test
    void aDatagramFromOneContainerReachesAnotherThroughRouterAndBridge(@TempDir Path tmp) throws Exception {
        TopologySpec spec = TopologyFile.load(RunCommandTest.examples().resolve("in-jvm-containers.yaml"));
        Daemon d = Daemon.start(spec, new Daemon.Options(tmp, 2), Daemon.Providers.forThisBuild());
        Topology t = d.topology();
        try {
            assertEquals(4, t.namespaces().size());
            assertEquals(7, t.deviceCount());
            assertEquals(List.of("hb1", "hb2"), ((dev.usnet.core.bridge.Bridge) t.device("host", "br0")).ports().stream()
                    .map(p -> p.dev().name()).toList());
            AtomicInteger got = new AtomicInteger();
            List<String> from = new ArrayList<>();
            UdpSocket sink = t.onLoop("ctr2", () -> {
                UdpSocket s = t.stack("ctr2").udp().bind(0, 6000);
                s.setReceiver((sock, src, port, buf, off, len) -> {
                    from.add(Ipv4Addr.format(src) + " " + len);
                    got.incrementAndGet();
                });
                return s;
            });
            // ctr3 -> hr3 (host routes) -> br0 -> hb2 -> ctr2: routed, then bridged.
            NetStack ctr3 = t.stack("ctr3");
            UdpSocket src = t.onLoop("ctr3", () -> ctr3.udp().bind(0, 0));
            ByteBuf data = Unpooled.buffer(100).writeZero(100);
            try {
                for (int i = 0; i < 50 && got.get() < 5; i++) {
                    t.onLoop("ctr3", () -> src.sendTo(Ipv4Addr.parse("198.18.0.12"), 6000, data, 0, 100));
                    Thread.sleep(20);
                }
            } finally {
                data.release();
            }
            assertTrue(got.get() >= 5, "datagrams received: " + got.get());
            assertEquals("198.18.1.13 100", t.onLoop("ctr2", () -> from.get(0)));
            t.onLoop("ctr3", () -> {
                src.close();
                return null;
            });
            t.onLoop("ctr2", () -> {
                sink.close();
                return null;
            });
            // The host forwarded it: the routed path hr3 -> br0 has packets.
            assertTrue(t.stack("host").latency().all().stream().anyMatch(p -> p.name().equals("hr3->br0") && p.packets() > 0));
        } finally {
            Daemon.Summary s = d.stop();
            assertEquals(List.of(), s.errors());
            assertEquals(4, s.usnetNamespaces());
        }
        assertEquals(List.of(), t.namespaces());
        assertTrue(Files.isRegularFile(tmp.resolve("host-br0.pcap")));
    }

    /** Records what would have been run with {@code ip}. */
    static final class FakeKernel implements KernelNet {
        final List<String> commands = new ArrayList<>();
        final Set<String> existing = new HashSet<>();
        /** Links that exist, by "namespace/name" ("/name" in usnet's own namespace). */
        final Map<String, KernelNet.Link> links = new HashMap<>();
        String failOn;

        @Override
        public Optional<KernelNet.Link> link(String namespace, String name) {
            return Optional.ofNullable(links.get((namespace == null ? "" : namespace) + "/" + name));
        }

        /** An existing kernel namespace whose lo carries {@code mark} (null: none). */
        void existingNamespace(String name, String mark) {
            existing.add(name);
            links.put(name + "/lo", new KernelNet.Link("lo", "loopback", mark, false));
        }

        @Override
        public boolean namespaceExists(String name) {
            return existing.contains(name);
        }

        @Override
        public void addNamespace(String name) {
            commands.add("netns add " + name);
            existing.add(name);
        }

        @Override
        public void deleteNamespace(String name) {
            commands.add("netns del " + name);
            existing.remove(name);
        }

        @Override
        public void ip(String namespace, String... args) {
            String c = (namespace == null ? "" : "-n " + namespace + " ") + String.join(" ", args);
            if (failOn != null && c.contains(failOn)) {
                throw new UsageException("ip " + c + ": RTNETLINK answers: Operation not permitted");
            }
            commands.add(c);
        }
    }

    /** TAPs that are stand-ins, recording what was asked for and whether they were closed. */
    static final class FakeTaps implements TapProvider {
        final List<TapRequest> opened = new ArrayList<>();
        final List<String> closed = new ArrayList<>();

        @Override
        public void requireAvailable() {
        }

        @Override
        public Device openTap(TapRequest req, NetStack stack) {
            opened.add(req);
            return new TopologyBuilder.Placeholder("tap", req.usnetName(), req.mac()) {
                @Override
                protected void destroy() {
                    closed.add(req.ifname());
                }
            };
        }
    }

    private static final String ROUTER = """
            kernel:
              namespaces: [usnet-a, usnet-b]
            namespaces:
              router:
                knobs: {net.ipv4.ip_forward: 1}
                devices:
                  - name: tap-a
                    kind: tap
                    vnet_hdr: true
                    addresses: [198.18.1.1/24]
                    kernel:
                      namespace: usnet-a
                      name: usnet-a0
                      mac: 02:00:00:00:0a:02
                      addresses: [198.18.1.2/24]
                      routes: [default via 198.18.1.1]
                  - name: tap-b
                    kind: tap
                    addresses: [198.18.2.1/24]
                    kernel:
                      namespace: usnet-b
                      name: usnet-b0
                      addresses: [198.18.2.2/24]
                      routes: [198.18.0.0/15]
            """;

    @Test
    void kernelNamespacesAndTapKernelSidesAreSetUpAndRemovedInReverse(@TempDir Path tmp) {
        FakeKernel k = new FakeKernel();
        FakeTaps taps = new FakeTaps();
        TopologySpec spec = TopologyFile.parse("router.yaml", ROUTER);
        Daemon d = Daemon.start(spec, new Daemon.Options(tmp, 1), new Daemon.Providers(taps, PcapProvider.forThisBuild(), k));
        assertEquals(2, d.topology().deviceCount());
        assertEquals("usnet-a", taps.opened.get(0).kernelNamespace());
        assertTrue(taps.opened.get(0).vnetHdr());
        assertEquals(List.of(
                "netns add usnet-a",
                "netns add usnet-b",
                "-n usnet-a link set dev usnet-a0 alias " + UsnetMark.ofThisProcess().format(),
                "-n usnet-a link set dev usnet-a0 address 02:00:00:00:0a:02",
                "-n usnet-a addr add 198.18.1.2/24 dev usnet-a0",
                "-n usnet-a link set dev usnet-a0 up",
                "-n usnet-a route add default via 198.18.1.1",
                "-n usnet-b link set dev usnet-b0 alias " + UsnetMark.ofThisProcess().format(),
                "-n usnet-b addr add 198.18.2.2/24 dev usnet-b0",
                "-n usnet-b link set dev usnet-b0 up",
                "-n usnet-b route add 198.18.0.0/15 dev usnet-b0"), k.commands);
        k.commands.clear();
        Daemon.Summary s = d.stop();
        assertEquals(List.of("usnet-a0", "usnet-b0"), taps.closed);
        assertEquals(List.of("netns del usnet-b", "netns del usnet-a"), k.commands);
        assertEquals(List.of("usnet-b", "usnet-a"), s.kernelNamespacesDeleted());
        assertEquals(List.of(), s.errors());
        // Idempotent: a second stop (say, from the shutdown hook) does nothing more.
        d.stop();
        assertEquals(2, k.commands.size());
    }

    @Test
    void anExistingKernelNamespaceIsRefusedWithoutTouchingAnything(@TempDir Path tmp) {
        FakeKernel k = new FakeKernel();
        k.existing.add("usnet-b");
        FakeTaps taps = new FakeTaps();
        TopologySpec spec = TopologyFile.parse("router.yaml", ROUTER);
        UsageException e = assertThrows(UsageException.class, () ->
                Daemon.start(spec, new Daemon.Options(tmp, 1), new Daemon.Providers(taps, PcapProvider.forThisBuild(), k)));
        assertTrue(e.getMessage().startsWith("router.yaml:2: kernel.namespaces[1]: kernel namespace usnet-b already exists"),
                e.getMessage());
        assertEquals(List.of(), k.commands);
        assertEquals(List.of(), taps.opened);
    }

    @Test
    void aFailureHalfWayUndoesWhatWasDone(@TempDir Path tmp) {
        FakeKernel k = new FakeKernel();
        k.failOn = "route add 198.18.0.0/15";
        FakeTaps taps = new FakeTaps();
        TopologySpec spec = TopologyFile.parse("router.yaml", ROUTER);
        UsageException e = assertThrows(UsageException.class, () ->
                Daemon.start(spec, new Daemon.Options(tmp, 1), new Daemon.Providers(taps, PcapProvider.forThisBuild(), k)));
        assertTrue(e.getMessage().contains("Operation not permitted"), e.getMessage());
        assertEquals(List.of("usnet-a0", "usnet-b0"), taps.closed);
        assertEquals(List.of("netns del usnet-b", "netns del usnet-a"), k.commands.subList(k.commands.size() - 2, k.commands.size()));
        assertEquals(Set.of(), k.existing);
    }

    @Test
    void sigusr1WritesHistogramsWhileRunning(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("out");
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        int[] code = {-1};
        Thread runner = new Thread(() -> code[0] = dev.usnet.tools.Usnet.execute(new String[] {"run", "--duration", "3",
                "--out", out.toString(), RunCommandTest.examples().resolve("in-jvm-containers.yaml").toString()},
                new PrintWriter(so, true), new PrintWriter(se, true)));
        runner.start();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!so.toString().contains("usnet: ready") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(so.toString().contains("usnet: ready"), so + "" + se);
        Thread.sleep(300);
        new ProcessBuilder("kill", "-USR1", Long.toString(ProcessHandle.current().pid())).start().waitFor();
        while (!so.toString().contains("SIGUSR1: wrote") && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(so.toString().contains("usnet: SIGUSR1: wrote"), so.toString());
        assertTrue(Files.isRegularFile(out.resolve("host.hb1-to-hb2.hgrm")));
        runner.join(15_000);
        assertEquals(0, code[0], so + "" + se);
    }

    /** ROUTER with a third TAP whose kernel end stays in usnet's own namespace. */
    private static final String ROUTER_AND_HOST_TAP = ROUTER + """
                  - name: tap-h
                    kind: tap
                    kernel: {name: usnet-pt0, addresses: [198.18.3.2/24]}
            """;

    @Test
    void withoutCapNetAdminAKernelTopologyIsRefusedBeforeAnythingIsDone(@TempDir Path tmp) {
        FakeKernel k = new FakeKernel();
        FakeTaps taps = new FakeTaps();
        TopologySpec spec = TopologyFile.parse("router.yaml", ROUTER);
        // Root in a container without CAP_NET_ADMIN: only CAP_SYS_ADMIN and CAP_NET_RAW.
        Privileges noNetAdmin = () -> 1L << Privileges.CAP_SYS_ADMIN | 1L << Privileges.CAP_NET_RAW;
        UsageException e = assertThrows(UsageException.class, () -> Daemon.start(spec, new Daemon.Options(tmp, 1),
                new Daemon.Providers(taps, PcapProvider.forThisBuild(), k, noNetAdmin)));
        assertEquals("router: kernel namespaces (usnet-a, usnet-b) and TAP devices (usnet-a0, usnet-b0) need CAP_NET_ADMIN,"
                + " which this process does not have (CapEff in /proc/self/status): run as root (sudo)", e.getMessage());
        assertEquals(List.of(), k.commands);
        assertEquals(List.of(), taps.opened);
        // An in-JVM topology needs no capability at all.
        TopologySpec inJvm = TopologyFile.load(RunCommandTest.examples().resolve("in-jvm-containers.yaml"));
        Daemon d = Daemon.start(inJvm, new Daemon.Options(tmp, 1), new Daemon.Providers(taps, PcapProvider.forThisBuild(), k, () -> 0L));
        assertEquals(List.of(), d.stop().errors());
    }

    @Test
    void theCapabilitiesAreReadFromCapEff() {
        String status = "Name:\tjava\nCapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t0000000000201000\n";
        long eff = Privileges.capEff(status);
        Privileges p = () -> eff;
        assertTrue(p.has(Privileges.CAP_NET_ADMIN));
        assertTrue(p.has(Privileges.CAP_SYS_ADMIN));
        assertTrue(!p.has(Privileges.CAP_NET_RAW));
        assertEquals(0, Privileges.capEff("Name:\tjava\n"));
    }

    @Test
    void everyLeftoverAndEveryCollidingLinkIsListedAtOnceWithTheCleanupCommand(@TempDir Path tmp) {
        FakeKernel k = new FakeKernel();
        // usnet-a: marked by this pid but another start time, so by an earlier process that had the pid.
        k.existingNamespace("usnet-a", new UsnetMark(ProcessHandle.current().pid(), java.time.Instant.EPOCH).format());
        k.existingNamespace("usnet-b", null);
        k.links.put("/usnet-pt0", new KernelNet.Link("usnet-pt0", "tap", null, true));
        FakeTaps taps = new FakeTaps();
        TopologySpec spec = TopologyFile.parse("router.yaml", ROUTER_AND_HOST_TAP);
        UsageException e = assertThrows(UsageException.class, () ->
                Daemon.start(spec, new Daemon.Options(tmp, 1), new Daemon.Providers(taps, PcapProvider.forThisBuild(), k)));
        assertEquals(List.of(
                "router.yaml:2: kernel.namespaces[0]: kernel namespace usnet-a already exists, left over from a usnet run that"
                        + " is gone (pid " + ProcessHandle.current().pid() + ", started 1970-01-01T00:00:00Z)",
                "router.yaml:2: kernel.namespaces[1]: kernel namespace usnet-b already exists (not created by usnet); delete it"
                        + " (ip netns del usnet-b) or choose another name",
                "router.yaml:27: namespaces.router.devices[2].kernel: interface usnet-pt0 already exists (not created by usnet);"
                        + " delete it or choose another name",
                "run: usnet cleanup router.yaml"), List.of(e.getMessage().split("\n")));
        assertEquals(List.of(), k.commands);
        assertEquals(List.of(), taps.opened);
    }

    @Test
    void aNamespaceOfARunningUsnetIsNotOfferedForCleanup(@TempDir Path tmp) {
        FakeKernel k = new FakeKernel();
        k.existingNamespace("usnet-b", UsnetMark.ofThisProcess().format());
        TopologySpec spec = TopologyFile.parse("router.yaml", ROUTER);
        UsageException e = assertThrows(UsageException.class, () ->
                Daemon.start(spec, new Daemon.Options(tmp, 1), new Daemon.Providers(new FakeTaps(), PcapProvider.forThisBuild(), k)));
        assertEquals("router.yaml:2: kernel.namespaces[1]: kernel namespace usnet-b already exists and belongs to a running"
                + " usnet (pid " + ProcessHandle.current().pid() + ", started " + UsnetMark.ofThisProcess().started()
                + "); stop that one first", e.getMessage());
    }

    @Test
    void theWarmUpRunsOnlyWithTapDevicesAndBeforeTheKernelIsTouched(@TempDir Path tmp) {
        FakeKernel k = new FakeKernel();
        List<List<String>> kernelAtWarmUp = new ArrayList<>();
        Daemon.Startup watch = new Daemon.Startup() {
            @Override
            public boolean stopRequested() {
                return false;
            }

            @Override
            public void warmingUp(int frames) {
                kernelAtWarmUp.add(List.copyOf(k.commands));
            }
        };
        Daemon.Options warm = new Daemon.Options(tmp, 1, 0, 200);
        TopologySpec inJvm = TopologyFile.load(RunCommandTest.examples().resolve("in-jvm-containers.yaml"));
        Daemon d = Daemon.start(inJvm, warm, Daemon.Providers.forThisBuild(), watch);
        assertEquals(null, d.warmUp());
        d.stop();
        assertEquals(List.of(), kernelAtWarmUp);
        d = Daemon.start(TopologyFile.parse("router.yaml", ROUTER), warm,
                new Daemon.Providers(new FakeTaps(), PcapProvider.forThisBuild(), k), watch);
        try {
            assertEquals(400, d.warmUp().sent());
            assertEquals(List.of(List.of()), kernelAtWarmUp);
        } finally {
            d.stop();
        }
    }

    @Test
    void aStopRequestDuringTheBuildUndoesWhatWasDoneAndStopsThere(@TempDir Path tmp) {
        FakeKernel k = new FakeKernel();
        FakeTaps taps = new FakeTaps();
        TopologySpec spec = TopologyFile.parse("router.yaml", ROUTER);
        // The signal arrives while the first kernel namespace is created.
        Daemon.Startup signalled = () -> k.existing.contains("usnet-a");
        assertThrows(Daemon.StopRequested.class, () -> Daemon.start(spec, new Daemon.Options(tmp, 1),
                new Daemon.Providers(taps, PcapProvider.forThisBuild(), k), signalled));
        assertEquals(List.of("netns add usnet-a", "netns del usnet-a"), k.commands);
        assertEquals(List.of(), taps.opened);
        assertEquals(Set.of(), k.existing);
    }

    @Test
    void aStopRequestDuringTheWarmUpEndsItAtOnceWithTheKernelUntouched(@TempDir Path tmp) {
        FakeKernel k = new FakeKernel();
        long[] warmingSince = {0};
        Daemon.Startup signalledDuringWarmUp = new Daemon.Startup() {
            @Override
            public boolean stopRequested() {
                return warmingSince[0] != 0 && System.nanoTime() - warmingSince[0] > 300_000_000L;
            }

            @Override
            public void warmingUp(int frames) {
                warmingSince[0] = System.nanoTime();
            }
        };
        TopologySpec spec = TopologyFile.parse("router.yaml", ROUTER);
        // Ten million frames a path: an hour of warm-up if the stop were not heard.
        assertThrows(Daemon.StopRequested.class, () -> Daemon.start(spec, new Daemon.Options(tmp, 1, 0, 10_000_000),
                new Daemon.Providers(new FakeTaps(), PcapProvider.forThisBuild(), k), signalledDuringWarmUp));
        long ms = (System.nanoTime() - warmingSince[0]) / 1_000_000;
        assertTrue(ms < 1300, "start-up ended " + ms + " ms after the warm-up began (stop asked at 300 ms)");
        assertEquals(List.of(), k.commands);
    }
}
