package dev.usnet.tcp.app;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.Tcp;
import java.util.function.BooleanSupplier;

/**
 * Two namespaces in virtual time joined by a veth pair — client 198.18.0.1, server 198.18.0.2 — with TCP and a
 * {@link Link} on each receiving end (50 us one way, no rate limit, unless a test changes it).
 */
final class AppPair implements AutoCloseable {
    static final int CLIENT = Ipv4Addr.parse("198.18.0.1");
    static final int SERVER = Ipv4Addr.parse("198.18.0.2");

    final TestNet net = new TestNet();
    final NetStack client = net.ns("client");
    final NetStack server = net.ns("server");
    final VethEnd[] veth;
    final Tcp clientTcp;
    final Tcp serverTcp;
    final Link toServer;
    final Link toClient;

    AppPair(long seed) {
        veth = net.link(client, "veth0", "198.18.0.1/24", server, "veth0", "198.18.0.2/24");
        clientTcp = Tcp.install(client);
        serverTcp = Tcp.install(server);
        toServer = Link.on(server, veth[1], seed * 31 + 1);
        toClient = Link.on(client, veth[0], seed * 31 + 2);
        toServer.delayNanos = 50_000;
        toClient.delayNanos = 50_000;
    }

    /** Sets a knob in both namespaces. */
    AppPair set(String key, String value) {
        client.knobs().set(key, value);
        server.knobs().set(key, value);
        return this;
    }

    /** Both directions: {@code rateBps} bottleneck, {@code oneWayNanos} delay. */
    AppPair link(long rateBps, long oneWayNanos) {
        for (Link l : new Link[] {toServer, toClient}) {
            l.rateBps = rateBps;
            l.delayNanos = oneWayNanos;
        }
        return this;
    }

    long now() {
        return net.sched.nanoTime();
    }

    /** Runs virtual time until {@code done} holds or {@code limitNanos} passed; returns whether it holds. */
    boolean runUntil(BooleanSupplier done, long limitNanos) {
        long end = net.sched.nanoTime() + limitNanos;
        while (!done.getAsBoolean()) {
            long next = net.sched.nextEventTime();
            if (next < 0 || next > end) {
                return false;
            }
            net.sched.runUntil(next);
        }
        return true;
    }

    @Override
    public void close() {
        // Let TIME-WAIT and every delayed frame finish, then tear down.
        net.run(200_000_000_000L);
        clientTcp.close();
        serverTcp.close();
        net.close();
    }
}
