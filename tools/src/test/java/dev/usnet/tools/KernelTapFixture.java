package dev.usnet.tools;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tap.HostCommand;
import dev.usnet.tap.TapDevice;
import dev.usnet.tap.Tun;
import dev.usnet.tcp.Tcp;
import io.netty.channel.IoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Shared set-up and tear-down of the tests that run usnet against the Linux kernel over TAP devices: one kernel
 * namespace this fixture creates (and only that one, deleted by its name in {@link #close}, also after a failure),
 * TAPs born in it, and a usnet {@link NetStack} on a {@link RealTimeScheduler} over a one-thread Netty epoll loop
 * that the stack and its TAPs share. Processes started in the namespace and temporary files are tracked and removed
 * in {@link #close}.
 */
final class KernelTapFixture implements AutoCloseable {
    private final String ns;
    private final String owner;
    private boolean nsCreated;
    private MultiThreadIoEventLoopGroup group;
    private IoEventLoop loop;
    private NetStack stack;
    private final List<Process> processes = new ArrayList<>();
    private final List<Path> tempFiles = new ArrayList<>();

    /**
     * @param ns    the kernel namespace to create, a name unique to this test run
     * @param owner the test's name, for messages
     */
    KernelTapFixture(String ns, String owner) {
        this.ns = ns;
        this.owner = owner;
    }

    /** A failure when CI=true (CI must provide it), else the test is skipped. */
    static void require(boolean present, String what) {
        if ("true".equals(System.getenv("CI"))) {
            assertTrue(present, "CI must provide: " + what);
        } else {
            org.junit.jupiter.api.Assumptions.assumeTrue(present, what);
        }
    }

    /** Requires root, /dev/net/tun and iproute2. */
    static void requireTapAndNetns() {
        require(HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip"),
                "root, /dev/net/tun and iproute2");
    }

    /**
     * Creates the kernel namespace (lo up, IPv6 off) and the usnet stack on its loop.
     *
     * @param stackName the {@link NetStack}'s name
     * @param stackId   the {@link NetStack}'s id
     */
    void start(String stackName, int stackId) {
        HostCommand.Result r = HostCommand.run(10, "ip", "netns", "add", ns);
        assertTrue(r.ok(), "ip netns add " + ns + ": " + r.output());
        nsCreated = true;
        kernel("ip", "link", "set", "lo", "up");
        kernel("sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1");
        kernel("sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1");

        group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        loop = group.next();
        stack = new NetStack(stackName, new RealTimeScheduler(loop), stackId);
    }

    /**
     * Opens a TAP born in the namespace on the stack's loop (usnet's writes go straight to the fd), lets
     * {@code offloads} set its offloads on the loop, gives it {@code usnetIp}/24 and brings it up; then gives the
     * kernel's side {@code kernelIp}/24 and brings it up.
     */
    TapDevice attachTap(Tun.Options options, long mac, String usnetIp, String kernelIp, Consumer<TapDevice> offloads)
            throws Exception {
        TapDevice tap = TapDevice.open(stack, options, loop, mac);
        int usnetAddr = Ipv4Addr.parse(usnetIp);
        onLoop(() -> {
            offloads.accept(tap);
            stack.devinet().add(tap, usnetAddr, 24);
            tap.setUp(true);
            return null;
        });
        kernel("ip", "addr", "add", kernelIp + "/24", "dev", options.name());
        kernel("ip", "link", "set", options.name(), "up");
        return tap;
    }

    Tcp installTcp() throws Exception {
        return onLoop(() -> Tcp.install(stack));
    }

    NetStack stack() {
        return stack;
    }

    String netns() {
        return ns;
    }

    /** Runs {@code task} on the stack's loop and waits up to 10 s for its result. */
    <T> T onLoop(Callable<T> task) throws Exception {
        return ((RealTimeScheduler) stack.scheduler()).executor().submit(task).get(10, TimeUnit.SECONDS);
    }

    // ---- the kernel's side ----

    /** Runs {@code cmd} in the namespace; a failure unless it exits 0. */
    String kernel(String... cmd) {
        HostCommand.Result r = kernelTry(cmd);
        assertTrue(r.ok(), "in " + ns + ": " + String.join(" ", cmd) + " exited " + r.exit() + ": " + r.output());
        return r.output();
    }

    HostCommand.Result kernelTry(String... cmd) {
        return HostCommand.run(30, inNetns(cmd).toArray(new String[0]));
    }

    /** Starts {@code cmd} in the kernel namespace in the background, output to {@code out}. */
    Process start(Path out, String... cmd) throws IOException {
        Process p = new ProcessBuilder(inNetns(cmd)).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        p.getOutputStream().close();
        processes.add(p);
        return p;
    }

    private List<String> inNetns(String... cmd) {
        List<String> c = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        c.addAll(List.of(cmd));
        return c;
    }

    /** Stops a process the test started, with its children. */
    static void kill(Process p) {
        HostCommand.kill(p);
    }

    /** A temporary file deleted in {@link #close}. */
    Path tempFile(String prefix, String suffix) throws IOException {
        Path p = Files.createTempFile(prefix, suffix);
        tempFiles.add(p);
        return p;
    }

    /**
     * Kills the started processes, closes the stack on its loop, shuts the loop down; then, even if that failed,
     * deletes the namespace by name (only if this fixture created it) and the temporary files.
     */
    @Override
    public void close() {
        try {
            for (Process p : processes) {
                kill(p);
            }
            if (stack != null) {
                try {
                    // NetStack.close closes TCP first (its connections hold pooled packets), then deletes the TAPs:
                    // closing their fds removes the kernel devices.
                    onLoop(() -> {
                        stack.close();
                        return null;
                    });
                } catch (Exception e) {
                    System.err.println(owner + ": closing the usnet stack: " + e);
                }
            }
            if (group != null) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
            }
        } finally {
            if (nsCreated) {
                HostCommand.Result r = HostCommand.run(10, "ip", "netns", "del", ns);
                if (!r.ok()) {
                    System.err.println(owner + ": could not delete netns " + ns + ": " + r.output());
                }
            }
            for (Path f : tempFiles) {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException e) {
                    System.err.println(owner + ": " + e);
                }
            }
        }
    }
}
