package dev.usnet.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.CowStats;
import dev.usnet.core.buf.Packet;
import org.junit.jupiter.api.Test;

/** The exact leak count the fuzz targets check after every input sees a buffer held and its release. */
class LeakGuardTest {
    @Test
    void liveBuffersCountsWhatIsHeldUntilItIsReleased() {
        long before = LeakGuard.liveBuffers();
        Packet p = Packet.allocate(Buffers.HEADROOM, 100);
        p.buf().writeZero(100);
        assertEquals(before + 1, LeakGuard.liveBuffers());
        Packet clone = p.cloneShared();
        clone.makeWritable(20, dev.usnet.core.buf.CowPolicy.HEAD_COPY, new CowStats());
        clone.release();
        assertEquals(before + 1, LeakGuard.liveBuffers(), "a clone's private head is released with it");
        p.release();
        assertEquals(before, LeakGuard.liveBuffers());
    }
}
