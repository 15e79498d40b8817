package dev.usnet.perf;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.MacAddr;
import io.netty.buffer.ByteBuf;

/**
 * The end of a measured path: a device whose driver just frees what it is given. It counts frames (a plain
 * field, single-threaded like the namespace it lives in) and, only while {@link #inspect} is on, records what
 * the last frame looked like so a benchmark's setup can prove the path really forwards.
 */
final class SinkDevice extends Device {
    long frames;
    boolean inspect;
    int lastLength = -1;
    long lastDst;
    long lastSrc;
    int lastTtl = -1;
    boolean lastIpChecksumOk;
    /** IPv6 frames only: the hop limit and the next header of the fixed header. */
    int lastHopLimit = -1;
    int lastNextHeader = -1;
    int lastRefCntAfterRelease = -1;
    /** IPv4 frames only: addresses and the first four transport bytes (the ports of TCP and UDP). */
    int lastIpSrc;
    int lastIpDst;
    int lastSrcPort = -1;
    int lastDstPort = -1;

    SinkDevice(String name, long mac) {
        super("sink", name, mac);
    }

    @Override
    protected void xmit(Packet p) {
        frames++;
        if (!inspect) {
            p.release();
            return;
        }
        ByteBuf b = p.buf();
        int s = p.start();
        lastLength = p.length();
        lastDst = MacAddr.get(b, s);
        lastSrc = MacAddr.get(b, s + 6);
        if (lastLength >= EthernetFrame.HEADER_LEN + 20 && b.getUnsignedShort(s + 12) == EthernetFrame.ETH_P_IP) {
            int ip = s + EthernetFrame.HEADER_LEN;
            lastTtl = b.getUnsignedByte(ip + 8);
            lastIpChecksumOk = Checksum.verify(b, ip, (b.getUnsignedByte(ip) & 0xf) * 4);
            lastIpSrc = b.getInt(ip + 12);
            lastIpDst = b.getInt(ip + 16);
            int l4 = ip + (b.getUnsignedByte(ip) & 0xf) * 4;
            if (lastLength >= l4 - s + 4) {
                lastSrcPort = b.getUnsignedShort(l4);
                lastDstPort = b.getUnsignedShort(l4 + 2);
            }
        }
        if (lastLength >= EthernetFrame.HEADER_LEN + 40 && b.getUnsignedShort(s + 12) == EthernetFrame.ETH_P_IPV6) {
            int ip = s + EthernetFrame.HEADER_LEN;
            lastNextHeader = b.getUnsignedByte(ip + 6);
            lastHopLimit = b.getUnsignedByte(ip + 7);
        }
        p.release();
        // The packet's data reference must be gone now (a pooled buffer reads 0 until it is handed out again).
        lastRefCntAfterRelease = b.refCnt();
    }
}
