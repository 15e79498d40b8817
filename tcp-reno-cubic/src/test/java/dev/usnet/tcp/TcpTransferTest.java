package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.Mib;
import dev.usnet.tcp.TcpPair.BulkSender;
import dev.usnet.tcp.TcpPair.HashingSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Bulk transfers between two namespaces in virtual time: clean, lossy, reordered, duplicated — always byte-exact. */
class TcpTransferTest {

    private record Result(String sentHash, String receivedHash, long bytes, TcpInfo clientInfo, long nanos,
                          TcpError clientClosed, TcpError serverClosed) {}

    private static Result transfer(TcpPair pair, int size, long seed) {
        byte[] data = TcpPair.randomBytes(size, seed);
        HashingSink sink = new HashingSink();
        pair.serverTcp.listen(0, 5001, 128, child -> child.setCallbacks(sink));
        BulkSender sender = new BulkSender(data, 16 * 1024);
        TcpSock c = pair.clientTcp.connect(TcpPair.SERVER, 5001, sender);
        TcpInfo[] last = new TcpInfo[1];
        long took = pair.runUntil(() -> {
            if (c.state() != TcpState.CLOSED) {
                last[0] = c.info();
            }
            return sink.eof;
        }, 600_000_000_000L);
        return new Result(TcpPair.sha256(data), sink.hash(), sink.bytes, last[0], took, sender.closedWith,
                sink.closedWith);
    }

    @Test
    void cleanTransferIsExactAndNegotiatesLinuxOptions() {
        try (TcpPair pair = new TcpPair(1)) {
            // A receive backlog larger than any burst: nothing is lost anywhere.
            pair.set("net.core.netdev_max_backlog", "65536");
            Result r = transfer(pair, 4 << 20, 7);
            assertEquals(4 << 20, r.bytes());
            assertEquals(r.sentHash(), r.receivedHash());
            TcpInfo i = r.clientInfo();
            assertTrue(i.timestamps() && i.sack(), i.format());
            assertEquals(7, i.wscaleRcv(), "window scale for a 6 MB receive buffer");
            assertEquals(1448, i.sndMss(), "MSS 1460 minus 12 bytes of timestamps");
            assertEquals(0, i.totalRetrans(), i.format());
            assertTrue(i.rttUs() >= 100 && i.rttUs() < 2_000, "RTT of two 50 us hops, got " + i.rttUs());
            assertEquals(0, pair.client.mib().get(Mib.TcpRetransSegs));
            pair.runUntil(() -> false, 1_000_000_000L);
            // Both sides finished: the active closer (client sent FIN first) waits in TIME-WAIT.
            assertEquals(1, pair.clientTcp.sockets().size());
            assertEquals(TcpState.TIME_WAIT, pair.clientTcp.sockets().get(0).state());
            assertEquals(0, pair.serverTcp.sockets().size(), "server finished LAST-ACK");
        }
    }

    @Test
    void slowStartBurstOverflowsTheReceiveBacklogLikeLinux() {
        try (TcpPair pair = new TcpPair(2)) {
            // Infinite bandwidth and a 100 us RTT: slow start doubles cwnd until a burst exceeds the
            // 1000-packet backlog (net.core.netdev_max_backlog) of the receiving namespace.
            // buffers=max: autotuned, the receiver's window_clamp (92140 bytes until tcp_rcv_space_adjust, which
            // acts at most once a jiffy, raises it) keeps every burst of these 8 MiB far below 1000 packets.
            pair.set("usnet.tcp.buffers", "max");
            Result r = transfer(pair, 8 << 20, 8);
            assertEquals(r.sentHash(), r.receivedHash());
            long backlogDrops = pair.server.drops().get(dev.usnet.core.stats.DropReason.BACKLOG_FULL);
            assertTrue(backlogDrops > 0, "backlog overflowed");
            assertTrue(r.clientInfo().totalRetrans() >= backlogDrops * 9 / 10,
                    "drops repaired: " + backlogDrops + " dropped, " + r.clientInfo().format());
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {11, 12, 13, 14, 15, 16})
    void lossReorderingAndDuplicationKeepDataExact(long seed) {
        try (TcpPair pair = new TcpPair(seed)) {
            for (Impairment im : new Impairment[] {pair.toServer, pair.toClient}) {
                im.loss = 0.02;
                im.reorder = 0.02;
                im.dup = 0.01;
            }
            Result r = transfer(pair, 1 << 20, seed);
            assertEquals(1 << 20, r.bytes(), "all bytes arrived");
            assertEquals(r.sentHash(), r.receivedHash());
            assertTrue(pair.toServer.dropped > 0 && pair.toServer.reordered > 0 && pair.toServer.duplicated > 0);
            assertTrue(r.clientInfo().totalRetrans() > 0, "losses were repaired by retransmission");
            assertTrue(pair.client.mib().get(Mib.TcpExtTCPSackRecovery) > 0, "SACK recovery was used");
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {21, 22, 23})
    void newRenoWithoutSackAndTimestampsRecovers(long seed) {
        try (TcpPair pair = new TcpPair(seed)) {
            pair.set("net.ipv4.tcp_sack", "0");
            pair.set("net.ipv4.tcp_timestamps", "0");
            pair.toServer.loss = 0.02;
            pair.toServer.reorder = 0.01;
            pair.toClient.loss = 0.01;
            Result r = transfer(pair, 512 << 10, seed);
            assertEquals(r.sentHash(), r.receivedHash());
            assertTrue(!r.clientInfo().sack() && !r.clientInfo().timestamps());
            assertEquals(1460, r.clientInfo().sndMss());
            assertTrue(pair.client.mib().get(Mib.TcpExtTCPRenoRecovery) > 0, "NewReno fast recovery was used");
        }
    }

    @Test
    void largeSegmentsOverGsoVeth() {
        try (TcpPair pair = new TcpPair(3, true)) {
            // buffers=max: the whole buffer as window from the start lets nearly every super-segment be 45 MSS;
            // autotuned, the small early windows cut more of them short (759 frames instead of under 579).
            pair.set("usnet.tcp.buffers", "max");
            Result r = transfer(pair, 8 << 20, 3);
            assertEquals(r.sentHash(), r.receivedHash());
            TcpInfo i = r.clientInfo();
            // 8 MiB in super-segments of up to 45 MSS: far fewer packets on the veth than MSS-sized segments,
            // while the counters, as Linux's, count MSS-sized segments.
            long packets = pair.veth[0].stats().txPackets;
            assertTrue(packets < (8 << 20) / 1448 / 10, "packets on the wire " + packets);
            assertTrue(i.dataSegsOut() >= (8 << 20) / 1448, "data segments " + i.dataSegsOut());
        }
    }

    @Test
    void blackoutTriggersRtoWithBackoffThenRecovers() {
        try (TcpPair pair = new TcpPair(4)) {
            byte[] data = TcpPair.randomBytes(2 << 20, 4);
            HashingSink sink = new HashingSink();
            pair.serverTcp.listen(0, 5001, 128, child -> child.setCallbacks(sink));
            BulkSender sender = new BulkSender(data, 16 * 1024);
            TcpSock c = pair.clientTcp.connect(TcpPair.SERVER, 5001, sender);
            pair.runUntil(() -> sink.bytes > 256 << 10, 10_000_000_000L);
            pair.toServer.blackout = true;
            pair.net.run(1_500_000_000L);
            TcpInfo during = c.info();
            assertTrue(during.timeouts() >= 2, "RTOs fired: " + during.format());
            assertTrue(during.backoff() >= 2, during.format());
            assertEquals(dev.usnet.tcp.cc.CaState.LOSS, during.caState());
            assertTrue(during.cwnd() <= 2, "cwnd restarts from one after an RTO: " + during.format());
            pair.toServer.blackout = false;
            pair.runUntil(() -> sink.eof, 120_000_000_000L);
            assertEquals(TcpPair.sha256(data), sink.hash());
        }
    }

    @Test
    void connectionRefusedWithoutListener() {
        try (TcpPair pair = new TcpPair(5)) {
            TcpError[] err = new TcpError[1];
            pair.clientTcp.connect(TcpPair.SERVER, 9, new TcpSock.Callbacks() {
                @Override
                public void closed(TcpSock s, TcpError error) {
                    err[0] = error;
                }
            });
            pair.runUntil(() -> err[0] != null, 5_000_000_000L);
            assertEquals(TcpError.ECONNREFUSED, err[0]);
            assertEquals(1, pair.server.mib().get(Mib.TcpOutRsts));
            assertEquals(1, pair.client.mib().get(Mib.TcpAttemptFails));
        }
    }

    @Test
    void halfCloseLetsTheServerReplyAfterTheClientsFin() {
        try (TcpPair pair = new TcpPair(6)) {
            byte[] request = TcpPair.randomBytes(100_000, 61);
            byte[] reply = TcpPair.randomBytes(300_000, 62);
            HashingSink clientSink = new HashingSink();
            TcpSock[] serverSide = new TcpSock[1];
            HashingSink serverSink = new HashingSink();
            // The server reads the request to EOF, then answers on the same (half-closed) connection.
            pair.serverTcp.listen(0, 80, 16, child -> {
                serverSide[0] = child;
                child.setCallbacks(new TcpSock.Callbacks() {
                    final BulkSender answer = new BulkSender(reply, 8192);
                    boolean answering;

                    @Override
                    public void readable(TcpSock s) {
                        io.netty.buffer.ByteBuf b = io.netty.buffer.Unpooled.buffer(65536);
                        int n;
                        while ((n = s.read(b.clear(), 65536)) > 0) {
                            serverSink.md.update(b.nioBuffer(0, n));
                            serverSink.bytes += n;
                        }
                        if (n < 0 && !answering) {
                            answering = true;
                            assertEquals(TcpState.CLOSE_WAIT, s.state());
                            answer.pump(s);
                        }
                    }

                    @Override
                    public void writable(TcpSock s) {
                        answer.pump(s);
                    }
                });
            });
            TcpSock c = pair.clientTcp.connect(TcpPair.SERVER, 80, new BulkSender(request, 8192) {
                @Override
                public void readable(TcpSock s) {
                    clientSink.readable(s);
                }
            });
            pair.runUntil(() -> clientSink.eof, 30_000_000_000L);
            assertEquals(TcpPair.sha256(request), serverSink.hash());
            assertEquals(TcpPair.sha256(reply), clientSink.hash());
            assertNotNull(serverSide[0]);
            pair.net.run(1_000_000_000L);
            assertEquals(TcpState.CLOSED, serverSide[0].state(), "server went through LAST-ACK");
            assertEquals(TcpState.TIME_WAIT, c.state(), "client closed first... and waits 2MSL");
            pair.net.run(61_000_000_000L);
            assertEquals(TcpState.CLOSED, c.state(), "TIME-WAIT ends after 60 s");
        }
    }
}
