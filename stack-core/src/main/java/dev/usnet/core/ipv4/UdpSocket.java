package dev.usnet.core.ipv4;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.route.Route;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.UdpDatagram;
import io.netty.buffer.ByteBuf;

/**
 * A bound UDP socket in one namespace: a minimal sendto/recvfrom API. Received datagrams are handed to the
 * receiver on the namespace thread (the payload is valid only during the call).
 */
public final class UdpSocket implements AutoCloseable {
    /** The socket's receive callback. */
    public interface Receiver {
        void datagram(UdpSocket s, int srcAddr, int srcPort, ByteBuf payload, int off, int len);
    }

    private final Netns ns;
    private final Ipv4 inet;
    private final int localAddr;
    private final int localPort;
    private volatile Receiver receiver;
    private int ttl;
    private int tos;
    private boolean dontFragment;
    private volatile long rxDatagrams;
    private volatile long rxBytes;
    private volatile long txDatagrams;
    private Packet[] keptClones = new Packet[0];
    private int keptNext;

    UdpSocket(Ipv4 inet, int localAddr, int localPort) {
        this.inet = inet;
        this.ns = inet.netns();
        this.localAddr = localAddr;
        this.localPort = localPort;
    }

    public int localPort() {
        return localPort;
    }

    public int localAddr() {
        return localAddr;
    }

    public void setReceiver(Receiver r) {
        this.receiver = r;
    }

    /** IP_TTL; 0 means net.ipv4.ip_default_ttl. */
    public void setTtl(int ttl) {
        this.ttl = ttl;
    }

    public void setTos(int tos) {
        this.tos = tos;
    }

    /** IP_PMTUDISC_DO: send with DF. */
    public void setDontFragment(boolean df) {
        this.dontFragment = df;
    }

    /**
     * Keeps a shared clone of each of the last {@code n} datagrams sent, as TCP's retransmission queue keeps
     * its segments: forwarders downstream then see shared packets and copy-on-write must act. 0 turns it off.
     */
    public void setKeepClones(int n) {
        releaseClones();
        keptClones = new Packet[Math.max(0, n)];
        keptNext = 0;
    }

    private void releaseClones() {
        for (int i = 0; i < keptClones.length; i++) {
            if (keptClones[i] != null) {
                keptClones[i].release();
                keptClones[i] = null;
            }
        }
    }

    public long rxDatagrams() {
        return rxDatagrams;
    }

    public long rxBytes() {
        return rxBytes;
    }

    public long txDatagrams() {
        return txDatagrams;
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    void deliver(int src, int srcPort, ByteBuf b, int off, int len) {
        rxDatagrams++;
        rxBytes += len;
        Receiver r = receiver;
        if (r != null) {
            r.datagram(this, src, srcPort, b, off, len);
        }
    }

    /**
     * sendto: copies {@code len} bytes of {@code data} into a new datagram. The checksum is left partial when
     * the route's device offloads tx checksumming, and computed here otherwise. Returns false without a route.
     */
    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    public boolean sendTo(int dst, int dstPort, ByteBuf data, int off, int len) {
        Route rt = inet.ipOutput().routeOutput(dst);
        if (rt == null) {
            ns.mib().inc(Mib.IpOutNoRoutes);
            return false;
        }
        int src = localAddr != 0 ? localAddr : inet.ipOutput().sourceFor(rt, dst);
        Packet p = IpOutput.allocate(UdpDatagram.HEADER_LEN + len);
        ByteBuf b = p.buf();
        int t = p.transport();
        b.setBytes(t + UdpDatagram.HEADER_LEN, data, off, len);
        int ulen = UdpDatagram.HEADER_LEN + len;
        if (rt.dev().txChecksumOffload()) {
            b.setShort(t + UdpDatagram.SRC_PORT, localPort);
            b.setShort(t + UdpDatagram.DST_PORT, dstPort);
            b.setShort(t + UdpDatagram.LENGTH, ulen);
            // CHECKSUM_PARTIAL: the field holds the folded pseudo-header sum; the device completes it.
            long ph = Checksum.pseudoHeader(src, dst, Ipv4Packet.PROTO_UDP, ulen);
            b.setShort(t + UdpDatagram.CHECKSUM, ~Checksum.finish(ph) & 0xffff);
            p.setChecksum(ChecksumState.PARTIAL, t, UdpDatagram.CHECKSUM);
        } else {
            UdpDatagram.write(b, t, localPort, dstPort, len, src, dst);
        }
        txDatagrams++;
        ns.mib().inc(Mib.UdpOutDatagrams);
        if (keptClones.length > 0) {
            Packet old = keptClones[keptNext];
            if (old != null) {
                old.release();
            }
            keptClones[keptNext] = p.cloneShared();
            keptNext = (keptNext + 1) % keptClones.length;
        }
        return inet.ipOutput().sendLocal(p, rt, src, dst, Ipv4Packet.PROTO_UDP, tos,
                ttl > 0 ? ttl : (int) ns.knobs().get(Ipv4Sysctl.DEFAULT_TTL), dontFragment);
    }

    @Override
    public void close() {
        releaseClones();
        inet.udp().unbind(this);
    }
}
