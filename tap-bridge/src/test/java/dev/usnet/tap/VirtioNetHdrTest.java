package dev.usnet.tap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

/** virtio_net_hdr to and from a Packet's GSO and checksum metadata. */
class VirtioNetHdrTest {
    /** An Ethernet + IPv4 + TCP (20-byte header, data offset 5) frame of {@code len} bytes in fresh headroom. */
    private static Packet tcpFrame(int len) {
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        ByteBuf b = p.buf();
        b.writeZero(len);
        b.setShort(p.start() + 12, 0x0800);
        b.setByte(p.start() + 14, 0x45);
        b.setByte(p.start() + 34 + 12, 5 << 4);
        return p;
    }

    @Test
    void gsoTcpFrameRoundTrips() {
        Packet p = tcpFrame(9014);
        ByteBuf hdr = Buffers.alloc().directBuffer(VirtioNetHdr.LEN);
        Packet q = null;
        try {
            p.setGso(Packet.GSO_TCPV4, 1448);
            p.setChecksum(ChecksumState.PARTIAL, p.start() + 34, 16);
            VirtioNetHdr.emit(p, hdr, 0);
            assertEquals(VirtioNetHdr.F_NEEDS_CSUM, hdr.getByte(0));
            assertEquals(VirtioNetHdr.GSO_TCPV4, hdr.getByte(1));
            assertEquals(54, hdr.getUnsignedShortLE(2), "hdr_len: Ethernet + IP + TCP headers");
            assertEquals(1448, hdr.getUnsignedShortLE(4));
            assertEquals(34, hdr.getUnsignedShortLE(6), "csum_start is relative to the frame");
            assertEquals(16, hdr.getUnsignedShortLE(8));

            q = tcpFrame(9014);
            assertTrue(VirtioNetHdr.apply(hdr, 0, q, q.start(), q.length()));
            assertTrue(q.isGso());
            assertEquals(Packet.GSO_TCPV4, q.gsoType());
            assertEquals(1448, q.gsoSize());
            assertEquals(ChecksumState.PARTIAL, q.csumState());
            assertEquals(q.start() + 34, q.csumStart(), "csum_start becomes an absolute buffer index");
            assertEquals(16, q.csumOffset());
        } finally {
            p.release();
            hdr.release();
            if (q != null) {
                q.release();
            }
        }
    }

    @Test
    void plainFrameHasAnEmptyHeaderAndDataValidMeansUnnecessary() {
        Packet p = tcpFrame(60);
        ByteBuf hdr = Buffers.alloc().directBuffer(VirtioNetHdr.LEN);
        try {
            VirtioNetHdr.emit(p, hdr, 0);
            for (int i = 0; i < VirtioNetHdr.LEN; i++) {
                assertEquals(0, hdr.getByte(i));
            }
            hdr.setByte(0, VirtioNetHdr.F_DATA_VALID);
            assertTrue(VirtioNetHdr.apply(hdr, 0, p, p.start(), p.length()));
            assertEquals(ChecksumState.UNNECESSARY, p.csumState());
            assertFalse(p.isGso());
        } finally {
            p.release();
            hdr.release();
        }
    }

    @Test
    void checksumPastTheFrameIsRejected() {
        Packet p = tcpFrame(60);
        ByteBuf hdr = Buffers.alloc().directBuffer(VirtioNetHdr.LEN);
        try {
            hdr.writeZero(VirtioNetHdr.LEN);
            hdr.setByte(0, VirtioNetHdr.F_NEEDS_CSUM);
            hdr.setShortLE(6, 50);
            hdr.setShortLE(8, 16);
            assertFalse(VirtioNetHdr.apply(hdr, 0, p, p.start(), p.length()));
        } finally {
            p.release();
            hdr.release();
        }
    }
}
