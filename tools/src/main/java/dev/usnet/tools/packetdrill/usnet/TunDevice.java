package dev.usnet.tools.packetdrill.usnet;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.EthernetFrame;
import java.util.ArrayDeque;

/**
 * The packetdrill test device {@code tun0}: a layer-3 device as a Linux TUN without offloads is. What the stack
 * transmits is kept as the IP packet alone (the stack's Ethernet slot dropped), stamped with the namespace clock,
 * for the script runner to sniff; what the runner injects enters the receive backlog as if the TUN's reader had
 * written it. No ARP ({@link #noArp}), no GSO or checksum offload: segments reach the wire at most an MTU long with
 * complete checksums, as a TUN opened without IFF_VNET_HDR sees them.
 *
 * <p>The transmit queue ({@code tc qdisc ... pfifo limit N}) never fills in virtual time, where the reader takes
 * every packet the moment it is sent; only a limit of 0 changes anything: every packet is dropped at the qdisc.
 */
final class TunDevice extends Device {
    /** The MAC usnet's Ethernet slot carries for this device; never on any wire. */
    static final long SLOT_MAC = 0x02_00_00_00_00_01L;

    /** A packet as it left: the IP packet and the namespace clock (ns) then. */
    record Sent(byte[] ipPacket, long nanos) {}

    private final ArrayDeque<Sent> sent = new ArrayDeque<>();
    private int txQueueLimit = -1;
    private long qdiscDrops;

    TunDevice(String name) {
        super("tun", name, SLOT_MAC);
        setTxChecksumOffload(false);
        setGsoOffload(false);
    }

    @Override
    public boolean noArp() {
        return true;
    }

    /** pfifo limit: 0 drops everything sent; any other limit (or -1, none set) never drops here. */
    void setTransmitQueueLimit(int packets) {
        if (packets < 0) {
            throw new IllegalArgumentException("pfifo limit " + packets + " is negative");
        }
        txQueueLimit = packets;
    }

    /** Packets the qdisc dropped (a limit of 0). */
    long qdiscDrops() {
        return qdiscDrops;
    }

    @Override
    protected void xmit(Packet p) {
        NetStack s = stack();
        if (txQueueLimit == 0) {
            qdiscDrops++;
            stats().txDrop();
            s.drop(p, DropReason.TX_QUEUE_FULL);
            return;
        }
        // A copy per packet: the runner takes each as a byte array (Sniffed), and this device exists for scripts.
        int ipLen = p.length() - EthernetFrame.HEADER_LEN;
        byte[] ip = new byte[ipLen];
        p.buf().getBytes(p.start() + EthernetFrame.HEADER_LEN, ip);
        sent.addLast(new Sent(ip, s.now()));
        p.release();
    }

    /** The oldest packet sent and not yet taken, or null. */
    Sent poll() {
        return sent.pollFirst();
    }

    boolean hasSent() {
        return !sent.isEmpty();
    }

    /** The TUN's reader wrote {@code ipPacket}: it enters the namespace's receive backlog now. */
    void receiveIp(byte[] ipPacket) {
        NetStack s = stack();
        Packet p = Packet.allocate(Buffers.HEADROOM, EthernetFrame.HEADER_LEN + ipPacket.length);
        // The Ethernet slot's type says which protocol takes the packet, as a TUN's reader hands IPv4 or IPv6.
        int etherType = ipPacket.length > 0 && (ipPacket[0] >> 4 & 15) == 6 ? EthernetFrame.ETH_P_IPV6
                : EthernetFrame.ETH_P_IP;
        EthernetFrame.write(p.buf(), p.start(), SLOT_MAC, SLOT_MAC, etherType);
        p.buf().writerIndex(p.start() + EthernetFrame.HEADER_LEN);
        p.buf().writeBytes(ipPacket);
        s.netifRx(this, p);
    }

}
