package dev.usnet.tools.topology.build;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A built topology: its usnet namespaces and devices, live. Closing deletes every namespace it made. */
public final class Topology implements AutoCloseable {
    private final TopologySpec spec;
    private final NamespaceRegistry registry;
    private boolean closed;

    public Topology(TopologySpec spec, NamespaceRegistry registry) {
        this.spec = spec;
        this.registry = registry;
    }

    public TopologySpec spec() {
        return spec;
    }

    public NamespaceRegistry registry() {
        return registry;
    }

    public List<NetNamespace> namespaces() {
        return registry.list();
    }

    public NetStack stack(String ns) {
        return registry.get(ns).stack();
    }

    public Device device(String ns, String dev) {
        return stack(ns).requireDevice(dev);
    }

    /** Devices usnet created (every veth end, bridges, TAPs, pcap ports), not counting loopbacks. */
    public int deviceCount() {
        int n = 0;
        for (NetNamespace ns : registry.list()) {
            for (Device d : ns.stack().devices()) {
                if (!(d instanceof Loopback)) {
                    n++;
                }
            }
        }
        return n;
    }

    /** Runs {@code task} on namespace {@code ns}'s thread (real time) and waits for its result. */
    public <T> T onLoop(String ns, Callable<T> task) {
        NetStack s = stack(ns);
        if (!(s.scheduler() instanceof RealTimeScheduler rt)) {
            try {
                return task.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        try {
            return rt.executor().submit(task).get(5, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("namespace " + ns + ": " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("namespace " + ns + " did not answer in 5 s", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Deletes every usnet namespace with its devices (TAP and pcap devices close their handles). */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            registry.close();
        }
    }
}
