package dev.usnet.core.buf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

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

    /** A frame of {@code len} bytes: Ethernet, a valid 20-byte IPv4 header (TTL 64), then counting bytes. */
    private static Packet ipv4Frame(int len) {
        Packet p = filled(len);
        ByteBuf b = p.buf();
        int ip = p.network();
        b.setByte(ip, 0x45);
        b.setByte(ip + 1, 0);
        b.setShort(ip + 2, len - 14);
        b.setShort(ip + 6, 0);
        b.setByte(ip + 8, 64);
        b.setByte(ip + 9, 17);
        new Ipv4Packet().wrap(b, ip).fillChecksum();
        return p;
    }

    private static byte[] frameBytes(Packet p) {
        byte[] a = new byte[p.length()];
        p.buf().getBytes(p.start(), a);
        return a;
    }

    private static ByteBuf root(ByteBuf b) {
        ByteBuf r = b;
        for (ByteBuf u = b.unwrap(); u != null; u = u.unwrap()) {
            r = u;
        }
        return r;
    }

    @ParameterizedTest
    @ValueSource(ints = {64, 1500, 65535 + 14})
    void headCopyEditsOnlyAPrivateHeadInFrontOfTheStillSharedPayload(int len) {
        Packet p = ipv4Frame(len);
        Packet sender = p.cloneShared();
        byte[] original = frameBytes(p);
        // What the forwarded frame must be: the same edit on a private full copy.
        Packet expected = p.cloneShared();
        expected.copyAll(null);
        new Ipv4Packet().wrap(expected.buf(), expected.network()).decrementTtl();
        CowStats st = new CowStats();
        assertTrue(p.makeWritable(34, CowPolicy.HEAD_COPY, st));
        new Ipv4Packet().wrap(p.buf(), p.network()).decrementTtl();

        assertEquals(34, st.bytesCopied(), "only the headers are copied");
        assertArrayEquals(frameBytes(expected), frameBytes(p), "forwarded bytes after TTL and checksum edits");
        Ipv4Packet ip = new Ipv4Packet().wrap(p.buf(), p.network());
        assertEquals(63, ip.ttl());
        assertTrue(Checksum.verify(p.buf(), p.network(), 20), "header checksum still verifies");
        assertArrayEquals(original, frameBytes(sender), "the sender's clone is unchanged");
        assertTrue(p.start() >= Buffers.HEADROOM, "the private head keeps headroom for pushing headers");
        // The payload is the sender's memory, not a copy: same root buffer, referenced by both.
        HeadFragByteBuf data = (HeadFragByteBuf) p.buf();
        assertSame(root(sender.buf()), root(data.frag()));
        assertEquals(2, root(sender.buf()).refCnt());
        assertTrue(data.fragShared());
        expected.release();
        sender.release();
        p.release();
    }

    @Test
    void aWriteIntoTheSharedPayloadOfAHeadCopiedPacketNeverReachesTheSender() {
        Packet p = ipv4Frame(1500);
        Packet sender = p.cloneShared();
        byte[] original = frameBytes(p);
        assertTrue(p.makeWritable(34, CowPolicy.HEAD_COPY, new CowStats()));
        // A checksum completed in software after forwarding writes into the L4 header, past the copied head.
        p.buf().setShort(p.transport() + 6, 0xbeef);
        p.buf().setByte(p.start() + 1000, 0x5a);
        assertEquals(0xbeef, p.buf().getUnsignedShort(p.transport() + 6));
        assertEquals(0x5a, p.buf().getByte(p.start() + 1000));
        assertArrayEquals(original, frameBytes(sender), "the sender's clone is unchanged");
        assertFalse(((HeadFragByteBuf) p.buf()).fragShared());
        assertEquals(1, root(sender.buf()).refCnt(), "the writer let go of the shared buffer");
        sender.release();
        p.release();
    }

    @Test
    void aStreamReadAcrossTheHeadAndTheFragLandsInBothPartsAndNotInTheSender() throws java.io.IOException {
        Packet p = ipv4Frame(1500);
        Packet sender = p.cloneShared();
        byte[] original = frameBytes(p);
        assertTrue(p.makeWritable(34, CowPolicy.HEAD_COPY, new CowStats()));
        byte[] in = new byte[40];
        java.util.Arrays.fill(in, (byte) 0x77);
        // 20 bytes before the end of the copied head and 20 into the frag.
        int at = p.start() + 14;
        assertEquals(40, p.buf().setBytes(at, new java.io.ByteArrayInputStream(in), 40));
        for (int i = 0; i < 40; i++) {
            assertEquals(0x77, p.buf().getByte(at + i) & 0xff, "byte " + i);
        }
        assertEquals(original[54] & 0xff, p.buf().getByte(p.start() + 54) & 0xff, "nothing past the read changed");
        // A stream that ends inside the head reports what it gave, and nothing reaches the frag.
        assertEquals(5, p.buf().setBytes(at, new java.io.ByteArrayInputStream(new byte[5]), 40));
        assertArrayEquals(original, frameBytes(sender), "the sender's clone is unchanged");
        sender.release();
        p.release();
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void eitherHolderMayReleaseFirst(boolean senderFirst) {
        Packet p = ipv4Frame(1500);
        Packet sender = p.cloneShared();
        byte[] original = frameBytes(p);
        assertTrue(p.makeWritable(34, CowPolicy.HEAD_COPY, new CowStats()));
        new Ipv4Packet().wrap(p.buf(), p.network()).decrementTtl();
        byte[] forwarded = frameBytes(p);
        ByteBuf shared = root(sender.buf());
        ByteBuf head = ((HeadFragByteBuf) p.buf()).head();
        if (senderFirst) {
            sender.release();
            assertEquals(1, shared.refCnt());
            assertArrayEquals(forwarded, frameBytes(p), "the forwarder still reads its frame");
            p.release();
        } else {
            p.release();
            assertEquals(0, head.refCnt(), "the private head went back to the pool");
            assertEquals(1, shared.refCnt());
            assertArrayEquals(original, frameBytes(sender), "the sender still reads its segment");
            sender.release();
        }
        assertEquals(0, shared.refCnt());
        assertEquals(0, head.refCnt());
    }
}
