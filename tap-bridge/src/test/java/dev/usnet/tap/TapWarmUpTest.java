package dev.usnet.tap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.IoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The warm-up really moves frames through a TapDevice, a bridge and a router, and leaves no fd behind. */
class TapWarmUpTest {
    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    void framesCrossTheBridgeAndTheRouterBothWaysAndEverythingIsClosedAfterwards() throws Exception {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        try {
            IoEventLoop loop = (IoEventLoop) group.next();
            loop.submit(() -> { }).get(5, TimeUnit.SECONDS);
            long fdsBefore = openFds();
            TapWarmUp.Result r = TapWarmUp.run(loop, 2_000);
            assertEquals(4_000, r.sent(), "2000 frames per path, bridge and router");
            // Every frame sent by one host reached the other: the bridge and the router forwarded all of them,
            // super-frames included.
            assertEquals(0, r.lost());
            assertEquals(r.sent(), r.received());
            assertTrue(r.nanos() < TimeUnit.SECONDS.toNanos(30), "took " + r.nanos() / 1e9 + " s");
            assertEquals(fdsBefore, openFds(), "socket pairs and TAP stand-ins closed");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aStopRequestEndsAWarmUpAtOnceAndStillClosesEverything() throws Exception {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        try {
            IoEventLoop loop = (IoEventLoop) group.next();
            loop.submit(() -> { }).get(5, TimeUnit.SECONDS);
            long fdsBefore = openFds();
            long[] asked = {0};
            long[] firstStop = {0};
            // Ten million frames per path would take about an hour on this machine; the stop comes once the
            // warm-up has asked 20000 times (a few thousand frames in), however loaded the machine is.
            TapWarmUp.Result r = TapWarmUp.run(loop, 10_000_000, () -> {
                if (++asked[0] < 20_000) {
                    return false;
                }
                if (firstStop[0] == 0) {
                    firstStop[0] = System.nanoTime();
                }
                return true;
            });
            long ms = (System.nanoTime() - firstStop[0]) / 1_000_000;
            assertTrue(firstStop[0] != 0 && ms < 200, "the warm-up went on for " + ms + " ms after the stop request");
            assertTrue(r.sent() > 0 && r.sent() < 10_000_000, "sent " + r.sent());
            assertEquals(fdsBefore, openFds(), "socket pairs and TAP stand-ins closed");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }
}
