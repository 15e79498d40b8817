package dev.usnet.tcp.app;

import dev.usnet.tcp.TcpPair;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpError;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The same apps in real time: each namespace on its own Netty executor thread, started and stopped from the
 * test thread (the calls hop to the namespace threads), results read through the completion futures.
 */
class RealTimeAppTest {
    @Test
    void appsRunOnTheirNamespaceThreads() throws Exception {
        EventExecutor loopA = new DefaultEventExecutor();
        EventExecutor loopB = new DefaultEventExecutor();
        NetStack a = new NetStack("rt-client", new RealTimeScheduler(loopA), 1);
        NetStack b = new NetStack("rt-server", new RealTimeScheduler(loopB), 2);
        try {
            VethEnd[] veth = VethEnd.createPair(a, "veth0", 0x02_aa_00_00_00_01L, b, "veth0", 0x02_bb_00_00_00_01L);
            on(loopA, () -> {
                veth[0].setUp(true);
                TestNet.addr(a, veth[0], "198.18.0.1/24");
                return Tcp.install(a);
            });
            on(loopB, () -> {
                veth[1].setUp(true);
                TestNet.addr(b, veth[1], "198.18.0.2/24");
                return Tcp.install(b);
            });

            AppConfig cfg = AppConfig.defaults().withPort(7001).withCount(2 << 20);
            StreamApp.Server ss = StreamApp.server(b, cfg);
            StreamApp.Client sc = StreamApp.client(a, TcpPair.SERVER, cfg);
            ss.start().get(10, TimeUnit.SECONDS);
            sc.start().get(10, TimeUnit.SECONDS);
            AppResult stream = sc.completion().get(60, TimeUnit.SECONDS);
            assertEquals(2 << 20, ss.completion().get(60, TimeUnit.SECONDS).bytesReceived());
            assertEquals(TcpError.NONE, stream.error(), stream.format());
            assertTrue(stream.throughputBps() > 0 && stream.cpuNanos() > 0, stream.format());

            cfg = AppConfig.defaults().withPort(7002).withCount(200);
            RrApp.Server rs = RrApp.server(b, cfg, new RrApp.Params(64, 1024));
            RrApp.Client rc = RrApp.client(a, TcpPair.SERVER, cfg, new RrApp.Params(64, 1024));
            rs.start().get(10, TimeUnit.SECONDS);
            rc.start().get(10, TimeUnit.SECONDS);
            AppResult rr = rc.completion().get(60, TimeUnit.SECONDS);
            assertEquals(200, rr.operations(), rr.format());
            assertEquals(200, rr.latency().count());
            assertTrue(rr.latency().p50Us() > 0);
            assertEquals(200, rs.completion().get(60, TimeUnit.SECONDS).operations());

            // A run without a count ends by stop() from another thread.
            cfg = AppConfig.defaults().withPort(7003);
            BurstApp.Params p = BurstApp.Params.of(32 * 1024, 1_000_000L);
            BurstApp.Server bs = BurstApp.server(b, cfg, p);
            BurstApp.Client bc = BurstApp.client(a, TcpPair.SERVER, cfg, p);
            bs.start().get(10, TimeUnit.SECONDS);
            bc.start().get(10, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (on(loopA, bc::bursts) < 5 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            bc.stop();
            AppResult burst = bc.completion().get(60, TimeUnit.SECONDS);
            assertTrue(burst.operations() >= 5, burst.format());
            assertEquals(burst.operations(), burst.latency().count());
            // At least 1 ms of compute between bursts.
            assertTrue(burst.durationNanos() >= (burst.operations() - 1) * 1_000_000L, burst.format());
            assertEquals(burst.operations(), bs.completion().get(60, TimeUnit.SECONDS).operations());
        } finally {
            on(loopA, () -> {
                a.close();
                return null;
            });
            on(loopB, () -> {
                b.close();
                return null;
            });
            loopA.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            loopB.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static <T> T on(EventExecutor loop, Callable<T> task) throws Exception {
        return loop.submit(task).get(10, TimeUnit.SECONDS);
    }
}
