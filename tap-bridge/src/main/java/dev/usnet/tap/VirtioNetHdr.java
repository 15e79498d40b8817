package dev.usnet.tap;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import io.netty.buffer.ByteBuf;

/**
 * struct virtio_net_hdr_v1 (include/uapi/linux/virtio_net.h), the 12 bytes in front of every frame on a TAP fd
 * opened with IFF_VNET_HDR; little-endian on the machines usnet runs on. Translates between it and a
 * {@link Packet}'s GSO and checksum metadata: {@code csum_start} is relative to the frame start on the wire,
 * absolute (a buffer index) in a Packet.
 */
public final class VirtioNetHdr {
    public static final int LEN = Tun.VNET_HDR_LEN;

    public static final int F_NEEDS_CSUM = 1;
    public static final int F_DATA_VALID = 2;

    public static final int GSO_NONE = 0;
    public static final int GSO_TCPV4 = 1;
    public static final int GSO_UDP = 3;
    public static final int GSO_TCPV6 = 4;
    public static final int GSO_UDP_L4 = 5;
    public static final int GSO_ECN = 0x80;

    static final int OFF_FLAGS = 0;
    static final int OFF_GSO_TYPE = 1;
    static final int OFF_HDR_LEN = 2;
    static final int OFF_GSO_SIZE = 4;
    static final int OFF_CSUM_START = 6;
    static final int OFF_CSUM_OFFSET = 8;
    static final int OFF_NUM_BUFFERS = 10;

    private static final int TCP_PROTO_CSUM_OFFSET = 16;

    private VirtioNetHdr() {}

    /**
     * Applies the header at {@code hdr} of {@code b} to {@code p}, whose frame starts at {@code frameStart} and is
     * {@code frameLen} bytes long. Returns false when the header is inconsistent with the frame (the caller drops).
     */
    public static boolean apply(ByteBuf b, int hdr, Packet p, int frameStart, int frameLen) {
        int flags = b.getUnsignedByte(hdr + OFF_FLAGS);
        int gsoType = b.getUnsignedByte(hdr + OFF_GSO_TYPE) & ~GSO_ECN;
        int gsoSize = b.getUnsignedShortLE(hdr + OFF_GSO_SIZE);
        if ((flags & F_NEEDS_CSUM) != 0) {
            int start = b.getUnsignedShortLE(hdr + OFF_CSUM_START);
            int off = b.getUnsignedShortLE(hdr + OFF_CSUM_OFFSET);
            if (start + off + 2 > frameLen) {
                return false;
            }
            p.setChecksum(ChecksumState.PARTIAL, frameStart + start, off);
        } else if ((flags & F_DATA_VALID) != 0) {
            p.setChecksum(ChecksumState.UNNECESSARY, 0, 0);
        }
        if (gsoType != GSO_NONE && gsoSize > 0) {
            int type = switch (gsoType) {
                case GSO_TCPV4 -> Packet.GSO_TCPV4;
                case GSO_TCPV6 -> Packet.GSO_TCPV6;
                case GSO_UDP -> Packet.GSO_UDP;
                default -> -1;
            };
            if (type < 0) {
                return false;
            }
            p.setGso(type, gsoSize);
        }
        return true;
    }

    /** Writes the header for {@code p} into {@code out} at {@code at} (12 bytes). */
    public static void emit(Packet p, ByteBuf out, int at) {
        int flags = 0;
        int csumStart = 0;
        int csumOffset = 0;
        int hdrLen = 0;
        int start = p.start();
        if (p.csumState() == ChecksumState.PARTIAL && p.csumStart() >= start) {
            flags = F_NEEDS_CSUM;
            csumStart = p.csumStart() - start;
            csumOffset = p.csumOffset();
            hdrLen = csumStart + csumOffset + 2;
            if (csumOffset == TCP_PROTO_CSUM_OFFSET && p.length() >= csumStart + 20) {
                // TCP: headers end after the data offset; the kernel uses hdr_len to size the linear part.
                int doff = (p.buf().getUnsignedByte(p.csumStart() + 12) >>> 4) * 4;
                if (doff >= 20 && csumStart + doff <= p.length()) {
                    hdrLen = csumStart + doff;
                }
            }
        }
        int gsoType = GSO_NONE;
        int gsoSize = 0;
        if (p.isGso()) {
            gsoType = switch (p.gsoType()) {
                case Packet.GSO_TCPV4 -> GSO_TCPV4;
                case Packet.GSO_TCPV6 -> GSO_TCPV6;
                case Packet.GSO_UDP -> GSO_UDP;
                default -> GSO_NONE;
            };
            gsoSize = gsoType == GSO_NONE ? 0 : p.gsoSize();
        }
        out.setByte(at + OFF_FLAGS, flags);
        out.setByte(at + OFF_GSO_TYPE, gsoType);
        out.setShortLE(at + OFF_HDR_LEN, hdrLen);
        out.setShortLE(at + OFF_GSO_SIZE, gsoSize);
        out.setShortLE(at + OFF_CSUM_START, csumStart);
        out.setShortLE(at + OFF_CSUM_OFFSET, csumOffset);
        out.setShortLE(at + OFF_NUM_BUFFERS, 0);
    }
}
