package dev.usnet.tools.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import org.junit.jupiter.api.Test;

class TcpStreamerTest {
    private static final long MS = 1_000_000L;

    /**
     * The demo's TCP stream, in virtual time over a veth pair with 5 ms each way: it starts before ARP has
     * resolved the server (the SYN waits in the unresolved queue), and stopping it while data is in flight
     * must deliver every byte written and leave nothing arriving at a closed socket (TCP_NO_SOCKET), as
     * aborting both ends did.
     */
    @Test
    void aStreamStartedBeforeArpResolutionEndsByteExactWithoutDrops() {
        try (TestNet net = new TestNet()) {
            NetStack client = net.ns("usnet-dm-c");
            NetStack server = net.ns("usnet-dm-s");
            VethEnd[] v = net.link(client, "eth0", "198.18.5.1/24", server, "eth0", "198.18.5.2/24");
            v[0].setNetem(NetemParams.NONE.withDelay(5 * MS));
            v[1].setNetem(NetemParams.NONE.withDelay(5 * MS));
            TcpStreamer t = new TcpStreamer(client, server, "198.18.5.2", 5002, 16_384);
            t.listen();
            t.connect();
            net.run(500 * MS);
            assertTrue(t.connectNanos > 0, "connected");
            // Stop between writes, while the last chunk is still on the wire.
            net.run(5 * MS);
            t.stop();
            net.run(300 * MS);
            t.closeServer();
            net.settle();
            assertTrue(t.written > 16_384 * 40, "the stream ran: " + t.written);
            assertEquals(t.written, t.received, "every byte written arrived");
            assertEquals(0, client.drops().total(), "client drops: " + client.drops().snapshot());
            assertEquals(0, server.drops().total(), "server drops: " + server.drops().snapshot());
        }
    }
}
