package dev.usnet.core.buf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.device.Device;
import dev.usnet.core.testing.TestNet;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * skb_cow's second reason to copy: a packet that is not shared but has less headroom in front of its IP header
 * than the outgoing device's LL_RESERVED_SPACE is copied too, into a buffer with room enough.
 */
class PacketHeadroomCowTest {

    /** A frame at the usual headroom: Buffers.HEADROOM (64) in front of the MAC header, so 78 before IP. */
    private static Packet filled(int len) {
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        for (int i = 0; i < len; i++) {
            p.buf().writeByte(i);
        }
        p.setNetwork(p.start() + 14);
        p.setTransport(p.start() + 34);
        return p;
    }

    private static void assertSameFrame(Packet p, int len) {
        assertEquals(len, p.length());
        for (int i = 0; i < len; i++) {
            assertEquals((byte) i, p.buf().getByte(p.start() + i), "byte " + i);
        }
        assertEquals(p.start() + 14, p.network());
        assertEquals(p.start() + 34, p.transport());
    }

    @ParameterizedTest
    @EnumSource(value = CowPolicy.class, names = {"HEAD_COPY", "FULL_COPY", "SKIP_TTL"})
    void enoughHeadroomLeavesAnUnsharedPacketAlone(CowPolicy policy) {
        Packet p = filled(1500);
        ByteBuf before = p.buf();
        CowStats st = new CowStats();
        assertTrue(p.makeWritable(34, 78, policy, st), "exactly the headroom there is");
        assertSame(before, p.buf());
        assertEquals(0, st.copies());
        assertEquals(0, st.headroomCopies());
        assertEquals(0, st.shared());
        p.release();
    }

    @Test
    void headCopyOfAShortHeadroomCopiesOnlyTheHeadersIntoRoomEnough() {
        Packet p = filled(1500);
        ByteBuf before = p.buf();
        CowStats st = new CowStats();
        assertTrue(p.makeWritable(34, 80, CowPolicy.HEAD_COPY, st));
        assertTrue(p.buf() != before, "a new head");
        assertTrue(p.network() >= 80, "network header now has " + p.network() + " bytes in front");
        assertEquals(1, st.copies());
        assertEquals(34, st.bytesCopied());
        assertEquals(1, st.headroomCopies());
        assertEquals(0, st.shared());
        assertEquals(34, p.cowBytes());
        assertSameFrame(p, 1500);
        p.release();
    }

    @Test
    void fullCopyOfAShortHeadroomCopiesTheFrameIntoRoomEnough() {
        Packet p = filled(1500);
        CowStats st = new CowStats();
        assertTrue(p.makeWritable(34, 200, CowPolicy.FULL_COPY, st));
        assertTrue(p.network() >= 200, "network header now has " + p.network() + " bytes in front");
        // pskb_expand_head grows by NET_SKB_PAD steps: 200 - 14 = 186 in front of the frame, rounded to 192.
        assertEquals(192, p.headroom());
        assertEquals(1, st.copies());
        assertEquals(1500, st.bytesCopied());
        assertEquals(1, st.headroomCopies());
        assertSameFrame(p, 1500);
        assertTrue(p.makeWritable(34, 200, CowPolicy.FULL_COPY, st), "the copy has the room: no second copy");
        assertEquals(1, st.copies());
        p.release();
    }

    @Test
    void aSharedPacketIsOneCopyNotAHeadroomCopy() {
        Packet p = filled(1500);
        Packet other = p.cloneShared();
        CowStats st = new CowStats();
        assertTrue(p.makeWritable(34, 144, CowPolicy.HEAD_COPY, st));
        assertFalse(p.isShared());
        assertTrue(p.network() >= 144);
        assertEquals(1, st.copies());
        assertEquals(1, st.shared());
        assertEquals(0, st.headroomCopies(), "copied because shared; the copy also fixes the headroom");
        assertEquals(22, other.buf().getByte(other.start() + 22));
        other.release();
        p.release();
    }

    @Test
    void skipTtlStillMakesRoomForAnUnsharedPacket() {
        Packet p = filled(1500);
        CowStats st = new CowStats();
        assertTrue(p.makeWritable(34, 100, CowPolicy.SKIP_TTL, st), "unshared: edited as usual");
        assertTrue(p.network() >= 100);
        assertEquals(1, st.headroomCopies());
        assertEquals(0, st.ttlSkipped());
        assertSameFrame(p, 1500);
        p.release();
    }

    @Test
    void copyAllKeepsHeadroomSoTheNextHopNeedsNoCopy() {
        Packet p = filled(100);
        p.copyAll(null);
        assertEquals(Buffers.HEADROOM, p.headroom());
        assertSameFrame(p, 100);
        p.release();
    }

    /** LL_RESERVED_SPACE = ((hard_header_len + needed_headroom) & ~15) + 16, with Ethernet's 14. */
    @ParameterizedTest
    @CsvSource({"0, 16", "1, 16", "2, 32", "18, 48", "50, 80", "64, 80", "114, 144"})
    void llReservedSpaceRoundsAsLinuxDoes(int needed, int reserved) {
        try (TestNet net = new TestNet()) {
            Device d = net.wire(net.ns("r"), "r1", 0x020000000001L).dutEnd;
            d.setNeededHeadroom(needed);
            assertEquals(needed, d.neededHeadroom());
            assertEquals(reserved, d.llReservedSpace());
        }
    }
}
