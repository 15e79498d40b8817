package dev.usnet.core.ipv4;

import static dev.usnet.core.util.SpreadKeys.spread;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.UdpDatagram;
import io.netty.util.collection.IntObjectHashMap;

/** UDP (RFC 768) of one namespace: the socket table, udp_rcv with checksum checks, port unreachable. */
public final class Udp {
    private final Netns ns;
    private final Ipv4 inet;
    private final UdpDatagram udp = new UdpDatagram();
    private final Ipv4Packet ip = new Ipv4Packet();
    // Replaced whole on every bind and unbind, never changed in place: until the first bind, the shared empty one.
    private static final IntObjectHashMap<UdpSocket> NONE = new IntObjectHashMap<>(1);
    private volatile IntObjectHashMap<UdpSocket> byPort = NONE;
    private int nextEphemeral = 32768;

    public Udp(Ipv4 inet) {
        this.inet = inet;
        this.ns = inet.netns();
    }

    /** bind(): {@code addr} 0 for any local address, {@code port} 0 for an ephemeral port. */
    public synchronized UdpSocket bind(int addr, int port) {
        if (port == 0) {
            for (int i = 0; i < 28232 && byPort.containsKey(spread(nextEphemeral)); i++) {
                nextEphemeral = nextEphemeral >= 60999 ? 32768 : nextEphemeral + 1;
            }
            port = nextEphemeral;
            nextEphemeral = nextEphemeral >= 60999 ? 32768 : nextEphemeral + 1;
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("UDP port " + port + " out of range 1..65535");
        }
        if (byPort.containsKey(spread(port))) {
            throw new IllegalArgumentException("UDP port " + port + " in use in namespace " + ns.name() + " (EADDRINUSE)");
        }
        UdpSocket s = new UdpSocket(inet, addr, port);
        IntObjectHashMap<UdpSocket> m = new IntObjectHashMap<>();
        m.putAll(byPort);
        m.put(spread(port), s);
        byPort = m;
        return s;
    }

    synchronized void unbind(UdpSocket s) {
        IntObjectHashMap<UdpSocket> m = new IntObjectHashMap<>();
        m.putAll(byPort);
        if (m.get(spread(s.localPort())) == s) {
            m.remove(spread(s.localPort()));
        }
        byPort = m;
    }

    /** udp_rcv. Owns {@code p}. */
    public void rcv(Packet p) {
        ip.wrap(p.buf(), p.network());
        int src = ip.src();
        int dst = ip.dst();
        int payloadLen = ip.totalLength() - ip.headerLength();
        DropReason bad;
        if (p.csumState() == ChecksumState.NONE) {
            bad = udp.check(p.buf(), p.transport(), payloadLen, src, dst);
        } else {
            // Partial (from a local sender over an offloading device) or already verified: length only.
            bad = udp.check(p.buf(), p.transport(), payloadLen, 0, 0) == DropReason.UDP_MALFORMED
                    ? DropReason.UDP_MALFORMED : null;
        }
        if (bad != null) {
            ns.mib().inc(Mib.UdpInErrors);
            if (bad == DropReason.UDP_CSUM) {
                ns.mib().inc(Mib.UdpInCsumErrors);
            }
            ns.drop(p, bad);
            return;
        }
        UdpSocket s = byPort.get(spread(udp.dstPort()));
        if (s == null || (s.localAddr() != 0 && s.localAddr() != dst)) {
            ns.mib().inc(Mib.UdpNoPorts);
            if (p.pktType() == Packet.PACKET_HOST && inet.devinet().isLocal(dst)) {
                inet.icmp().send(p, IcmpPacket.DEST_UNREACH, IcmpPacket.CODE_PORT_UNREACH, 0);
            }
            ns.drop(p, DropReason.UDP_NO_SOCKET);
            return;
        }
        ns.mib().inc(Mib.UdpInDatagrams);
        s.deliver(src, udp.srcPort(), p.buf(), udp.payloadOffset(), udp.payloadLength());
        p.release();
    }
}
