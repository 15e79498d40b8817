package dev.usnet.core.buf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class PacketCowTest {

    private static Packet filled(int len) {
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        for (int i = 0; i < len; i++) {
            p.buf().writeByte(i);
        }
        p.setNetwork(p.start() + 14);
        p.setTransport(p.start() + 34);
        return p;
    }

    @Test
    void cloneSharesBytesUntilOneHolderLetsGo() {
        Packet p = filled(100);
        assertFalse(p.isShared());
        Packet c = p.cloneShared();
        assertTrue(p.isShared());
        assertTrue(c.isShared());
        c.buf().setByte(c.start() + 50, 0x7f);
        assertEquals(0x7f, p.buf().getByte(p.start() + 50), "a clone is the same bytes, not a copy");
        c.release();
        assertFalse(p.isShared(), "the last holder owns the bytes again");
        p.release();
    }

    @Test
    void headCopyMakesHeadersPrivateAndKeepsSharingPayload() {
        Packet p = filled(1500);
        Packet other = p.cloneShared();
        CowStats st = new CowStats();
        ByteBuf before = p.buf();
        assertTrue(p.makeWritable(34, CowPolicy.HEAD_COPY, st));
        assertNotSame(before, p.buf());
        assertFalse(p.isShared());
        assertEquals(1, st.copies());
        assertEquals(34, st.bytesCopied());
        // Editing the head leaves the other holder's view intact.
        p.buf().setByte(p.network() + 8, 0);
        assertEquals(22, other.buf().getByte(other.start() + 22));
        // Same frame content at the same relative offsets.
        for (int i = 0; i < 1500; i++) {
            if (i != 22) {
                assertEquals((byte) i, p.buf().getByte(p.start() + i), "byte " + i);
            }
        }
        assertEquals(p.start() + 14, p.network());
        // The payload is still the very same memory: the other holder's later write shows through.
        other.buf().setByte(other.start() + 1000, 0x11);
        assertEquals(0x11, p.buf().getByte(p.start() + 1000));
        other.release();
        p.release();
    }

    @Test
    void fullCopyCopiesTheWholeSharedPacketOnly() {
        CowStats st = new CowStats();
        Packet unshared = filled(1500);
        ByteBuf b = unshared.buf();
        assertTrue(unshared.makeWritable(34, CowPolicy.FULL_COPY, st));
        assertSame(b, unshared.buf(), "an unshared packet is edited in place");
        assertEquals(0, st.copies());
        unshared.release();

        Packet p = filled(1500);
        Packet other = p.cloneShared();
        assertTrue(p.makeWritable(34, CowPolicy.FULL_COPY, st));
        assertEquals(1, st.copies());
        assertEquals(1500, st.bytesCopied());
        other.buf().setByte(other.start() + 1000, 0x11);
        assertEquals((byte) 1000, p.buf().getByte(p.start() + 1000), "a full copy shares nothing");
        other.release();
        p.release();
    }

    @Test
    void alwaysCopyCopiesEvenUnsharedPackets() {
        CowStats st = new CowStats();
        Packet p = filled(200);
        ByteBuf b = p.buf();
        assertTrue(p.makeWritable(34, CowPolicy.ALWAYS_COPY, st));
        assertNotSame(b, p.buf());
        assertEquals(200, st.bytesCopied());
        p.release();
    }

    @Test
    void skipTtlForwardsSharedPacketsWithoutEditingIp() {
        CowStats st = new CowStats();
        Packet p = filled(200);
        Packet other = p.cloneShared();
        assertFalse(p.makeWritable(34, CowPolicy.SKIP_TTL, st));
        assertEquals(0, st.copies());
        assertEquals(1, st.ttlSkipped());
        // The link-layer header became the packet's own; the IP header is still shared.
        p.buf().setByte(p.start(), 0x55);
        assertEquals(0, other.buf().getByte(other.start()));
        other.buf().setByte(other.start() + 22, 0x44);
        assertEquals(0x44, p.buf().getByte(p.start() + 22));
        Packet unshared = filled(64);
        assertTrue(unshared.makeWritable(34, CowPolicy.SKIP_TTL, st), "unshared packets are edited normally");
        unshared.release();
        other.release();
        p.release();
    }

    @ParameterizedTest
    @EnumSource(CowPolicy.class)
    void policiesParseFromTheirKnobValues(CowPolicy policy) {
        assertSame(policy, CowPolicy.parse(policy.knobValue()));
    }
}
