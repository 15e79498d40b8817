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

    /** An Ethernet + IPv6 + TCP (data offset 8: 12 bytes of options) frame of {@code len} bytes. */
    private static Packet tcp6Frame(int len) {
        Packet p = Packet.allocate(Buffers.HEADROOM, len);
        ByteBuf b = p.buf();
        b.writeZero(len);
        b.setShort(p.start() + 12, 0x86dd);
        b.setByte(p.start() + 14, 0x60);
        b.setShort(p.start() + 18, len - 54);
        b.setByte(p.start() + 20, 6);
        b.setByte(p.start() + 54 + 12, 8 << 4);
        return p;
    }

    @Test
    void gsoTcpv6FrameRoundTripsWithTheIpv6HeaderInHdrLen() {
        Packet p = tcp6Frame(65_000);
        ByteBuf hdr = Buffers.alloc().directBuffer(VirtioNetHdr.LEN);
        Packet q = null;
        try {
            p.setGso(Packet.GSO_TCPV6, 1428);
            p.setChecksum(ChecksumState.PARTIAL, p.start() + 54, 16);
            VirtioNetHdr.emit(p, hdr, 0);
            assertEquals(VirtioNetHdr.F_NEEDS_CSUM, hdr.getByte(0));
            assertEquals(VirtioNetHdr.GSO_TCPV6, hdr.getByte(1), "VIRTIO_NET_HDR_GSO_TCPV6");
            assertEquals(14 + 40 + 32, hdr.getUnsignedShortLE(2), "hdr_len: Ethernet + IPv6 + TCP with options");
            assertEquals(1428, hdr.getUnsignedShortLE(4));
            assertEquals(54, hdr.getUnsignedShortLE(6), "csum_start: after the 40-byte IPv6 header");
            assertEquals(16, hdr.getUnsignedShortLE(8));

            q = tcp6Frame(65_000);
            // The kernel may set the ECN bit alongside the type; the type is still TCPv6.
            hdr.setByte(1, VirtioNetHdr.GSO_TCPV6 | VirtioNetHdr.GSO_ECN);
            assertTrue(VirtioNetHdr.apply(hdr, 0, q, q.start(), q.length()));
            assertEquals(Packet.GSO_TCPV6, q.gsoType());
            assertEquals(1428, q.gsoSize());
            assertEquals(q.start() + 54, q.csumStart());
        } finally {
            p.release();
            hdr.release();
            if (q != null) {
                q.release();
            }
        }
    }
}
