package dev.usnet.perf;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.ns.NetNamespace;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.management.ObjectName;

/**
 * Scenario benchmark namespace-footprint: N idle containers, each a namespace with one veth whose other end
 * is a port of br0 in a host namespace (what {@code count: N} with {@code master: br0} builds), all on one
 * virtual-time scheduler. Measures the retained heap per container after a full GC, the build and delete
 * times, the timers pending while nothing happens, and what one idle virtual minute costs in wall time.
 * One JVM per N (the heap baseline must be its own): {@code perf-tests/namespace-footprint.sh} runs it.
 *
 * <p>Arguments: {@code N JSON_FILE [HISTOGRAM_FILE]}.
 */
public final class NamespaceFootprint {
    private NamespaceFootprint() {
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Path json = Path.of(args[1]);
        Path histo = args.length > 2 ? Path.of(args[2]) : null;

        // Warm-up: load every class and JIT the build path once, so the baseline holds them and the timing
        // measures the steady state, not class loading.
        for (int k = 0; k < 3; k++) {
            Topology t = build(Math.min(n, 500));
            t.delete();
        }
        long base = retainedHeap();

        long t0 = System.nanoTime();
        Topology t = build(n);
        long buildNanos = System.nanoTime() - t0;
        int pendingAfterBuild = t.vs.pending();
        long after = retainedHeap();
        long perNs = (after - base) / n;
        System.out.printf(Locale.ROOT, "N=%d build %.3f s, retained %.1f MB (%.0f B per container), %d timers pending%n",
                n, buildNanos / 1e9, (after - base) / 1e6, (double) perNs, pendingAfterBuild);
        if (histo != null) {
            Files.writeString(histo, classHistogram(40));
        }

        // Idle means idle: one virtual minute with nothing sent should cost (almost) nothing.
        long i0 = System.nanoTime();
        t.vs.runFor(60_000_000_000L);
        long idleMinuteNanos = System.nanoTime() - i0;
        int pendingAfterMinute = t.vs.pending();

        long d0 = System.nanoTime();
        t.delete();
        long deleteNanos = System.nanoTime() - d0;
        long afterDelete = retainedHeap();
        System.out.printf(Locale.ROOT, "N=%d idle minute %.3f s wall, %d timers pending after it; delete %.3f s; heap after delete %+.1f MB%n",
                n, idleMinuteNanos / 1e9, pendingAfterMinute, deleteNanos / 1e9, (afterDelete - base) / 1e6);

        String out = "{\"n\": " + n
                + ", \"max_heap_bytes\": " + Runtime.getRuntime().maxMemory()
                + ", \"build_seconds\": " + MiniJson.num(buildNanos / 1e9)
                + ", \"delete_seconds\": " + MiniJson.num(deleteNanos / 1e9)
                + ", \"retained_bytes\": " + (after - base)
                + ", \"retained_bytes_per_namespace\": " + perNs
                + ", \"retained_bytes_after_delete\": " + (afterDelete - base)
                + ", \"timers_pending_after_build\": " + pendingAfterBuild
                + ", \"timers_pending_after_idle_minute\": " + pendingAfterMinute
                + ", \"idle_virtual_minute_wall_seconds\": " + MiniJson.num(idleMinuteNanos / 1e9)
                + "}\n";
        Files.writeString(json, out);
    }

    /** What was built: the registry, its scheduler and the namespaces, so the delete can be timed. */
    static final class Topology {
        final VirtualScheduler vs;
        final NamespaceRegistry reg;
        final List<String> containers;

        Topology(VirtualScheduler vs, NamespaceRegistry reg, List<String> containers) {
            this.vs = vs;
            this.reg = reg;
            this.containers = containers;
        }

        void delete() {
            for (String c : containers) {
                reg.delete(c);
            }
            reg.close();
        }
    }

    /**
     * host: br0 (198.18.0.1/15, up); container c&lt;i&gt;: eth0 (198.18.0.0 + 256 + i)/15, up, default route via
     * br0, its peer h&lt;i&gt; in host enslaved to br0 and up.
     */
    static Topology build(int n) {
        VirtualScheduler vs = new VirtualScheduler();
        NamespaceRegistry reg = new NamespaceRegistry(x -> vs, 1);
        NetNamespace host = reg.create("host");
        Bridge br = new Bridge("br0", NamespaceRegistry.macFor("host/br0"));
        host.stack().register(br);
        host.stack().devinet().add(br, Ipv4Addr.parse("198.18.0.1"), 15);
        br.setUp(true);
        int net = Ipv4Addr.parse("198.18.0.0");
        List<String> names = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String name = "c" + i;
            NetNamespace c = reg.create(name);
            VethEnd[] pair = reg.createVeth(c, "eth0", host, "h" + i);
            c.stack().devinet().add(pair[0], net + 256 + i, 15);
            pair[0].setUp(true);
            br.addPort(pair[1]);
            pair[1].setUp(true);
            names.add(name);
        }
        return new Topology(vs, reg, names);
    }

    /** Heap used after full collections, settled (two in a row within 1 %). */
    static long retainedHeap() throws InterruptedException {
        MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
        long prev = Long.MAX_VALUE;
        for (int k = 0; k < 10; k++) {
            System.gc();
            Thread.sleep(50);
            long used = mem.getHeapMemoryUsage().getUsed();
            if (Math.abs(prev - used) < used / 100) {
                return used;
            }
            prev = used;
        }
        return prev;
    }

    /** The top of {@code jcmd GC.class_histogram}, taken in-process. */
    static String classHistogram(int lines) throws IOException {
        try {
            Object r = ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
            String[] all = r.toString().split("\n");
            StringBuilder b = new StringBuilder();
            for (int k = 0; k < Math.min(all.length, lines + 3); k++) {
                b.append(all[k]).append('\n');
            }
            b.append(all[all.length - 1]).append('\n');
            return b.toString();
        } catch (Exception e) {
            throw new IOException("class histogram: " + e, e);
        }
    }
}
