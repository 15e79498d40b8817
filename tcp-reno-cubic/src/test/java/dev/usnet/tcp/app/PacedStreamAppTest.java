package dev.usnet.tcp.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.TcpError;
import org.junit.jupiter.api.Test;

/**
 * StreamApp with a write interval (an application-limited stream, {@code usnet demo}'s TCP streams), in virtual
 * time over a veth pair with 5 ms each way. Adapted from the demo's former TcpStreamer test: the stream starts
 * before ARP has resolved the server (the SYN waits in the unresolved queue), and stopping it while data is in
 * flight must deliver every byte written and leave nothing arriving at a closed socket (TCP_NO_SOCKET).
 */
class PacedStreamAppTest {
    private static final long MS = 1_000_000L;
    private static final int CHUNK = 16_384;

    private static VethEnd[] link(TestNet net, NetStack client, NetStack server) {
        VethEnd[] v = net.link(client, "eth0", "198.18.5.1/24", server, "eth0", "198.18.5.2/24");
        v[0].setNetem(NetemParams.NONE.withDelay(5 * MS));
        v[1].setNetem(NetemParams.NONE.withDelay(5 * MS));
        return v;
    }

    @Test
    void aPacedStreamWritesOneChunkPerIntervalAndEndsByteExactWithoutDrops() {
        try (TestNet net = new TestNet()) {
            NetStack client = net.ns("usnet-dm-c");
            NetStack server = net.ns("usnet-dm-s");
            link(net, client, server);
            AppConfig cfg = AppConfig.defaults().withPort(5002);
            StreamApp.Server srv = StreamApp.server(server, cfg);
            StreamApp.Client cli = StreamApp.client(client, Ipv4Addr.parse("198.18.5.2"), cfg,
                    new StreamApp.Params(CHUNK, 10 * MS));
            srv.start();
            cli.start();
            net.run(500 * MS);
            // ARP (one round trip) and the handshake (another): 20 ms on a 10 ms round trip.
            assertTrue(cli.connectNanos() >= 20 * MS && cli.connectNanos() < 30 * MS, "connect took " + cli.connectNanos());
            // Application-limited: one chunk every 10 ms from the handshake on, never more, whatever cwnd allows.
            long chunks = cli.bytesSent() / CHUNK;
            assertEquals(0, cli.bytesSent() % CHUNK, "whole chunks only");
            assertTrue(chunks >= 45 && chunks <= 49, "about 48 chunks in the 480 ms after connecting, got " + chunks);
            // Stop between writes, while the last chunk is still on the wire.
            net.run(5 * MS);
            cli.stop();
            net.run(300 * MS);
            net.settle();
            assertTrue(cli.isDone() && srv.isDone(), cli + " / " + srv);
            assertEquals(TcpError.NONE, cli.result().error());
            assertEquals(TcpError.NONE, srv.result().error());
            assertEquals(cli.bytesSent(), srv.bytesReceived(), "every byte written arrived");
            assertEquals(0, client.drops().total(), "client drops: " + client.drops().snapshot());
            assertEquals(0, server.drops().total(), "server drops: " + server.drops().snapshot());
        }
    }

    /** With a byte count the paced client stops writing at it and closes by itself, as a bulk one does. */
    @Test
    void aPacedStreamWithAByteCountEndsByItselfAfterIt() {
        try (TestNet net = new TestNet()) {
            NetStack client = net.ns("usnet-dm-c");
            NetStack server = net.ns("usnet-dm-s");
            link(net, client, server);
            long bytes = 5L * CHUNK + 100;
            AppConfig cfg = AppConfig.defaults().withPort(5002).withCount(bytes);
            StreamApp.Server srv = StreamApp.server(server, cfg);
            StreamApp.Client cli = StreamApp.client(client, Ipv4Addr.parse("198.18.5.2"), cfg,
                    new StreamApp.Params(CHUNK, 10 * MS));
            srv.start();
            cli.start();
            net.run(30 * MS);
            assertTrue(cli.bytesSent() < bytes, "still pacing after 30 ms: " + cli.bytesSent());
            net.run(500 * MS);
            net.settle();
            assertTrue(cli.isDone() && srv.isDone(), cli + " / " + srv);
            assertEquals(bytes, cli.result().bytesSent());
            assertEquals(bytes, srv.result().bytesReceived());
            assertEquals(TcpError.NONE, cli.result().error());
        }
    }
}
