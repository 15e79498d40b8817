package dev.usnet.core.conntrack;

import dev.usnet.core.wire.Ipv4Addr;

/**
 * One direction of a connection as connection tracking keys it (struct nf_conntrack_tuple for IPv4): source and
 * destination address, the IP protocol, and the protocol's own part — ports for TCP and UDP; for ICMP the
 * identifier in the source half and type and code in the destination half; nothing for other protocols. Mutable
 * and reused: the packet path fills one per packet and hashes and compares it without allocating.
 */
public final class ConntrackTuple {
    private int src;
    private int dst;
    private int protonum;
    /** Source port, or the ICMP identifier. */
    private int srcPort;
    /** Destination port, or the ICMP type (high byte) and code (low byte). */
    private int dstPort;

    public ConntrackTuple() {}

    /** A TCP or UDP tuple (or a generic one with ports 0). */
    public static ConntrackTuple of(int protonum, int src, int dst, int srcPort, int dstPort) {
        return new ConntrackTuple().set(protonum, src, dst, srcPort, dstPort);
    }

    public ConntrackTuple set(int protonum, int src, int dst, int srcPort, int dstPort) {
        this.protonum = protonum & 0xff;
        this.src = src;
        this.dst = dst;
        this.srcPort = srcPort & 0xffff;
        this.dstPort = dstPort & 0xffff;
        return this;
    }

    /** An ICMP tuple: {@code id} in the source half, {@code type} and {@code code} in the destination half. */
    public ConntrackTuple setIcmp(int src, int dst, int id, int type, int code) {
        return set(1, src, dst, id, (type & 0xff) << 8 | (code & 0xff));
    }

    public ConntrackTuple copyFrom(ConntrackTuple o) {
        this.protonum = o.protonum;
        this.src = o.src;
        this.dst = o.dst;
        this.srcPort = o.srcPort;
        this.dstPort = o.dstPort;
        return this;
    }

    public int src() {
        return src;
    }

    public int dst() {
        return dst;
    }

    public int protonum() {
        return protonum;
    }

    /** The source port (TCP, UDP), the ICMP identifier, or 0. */
    public int srcPort() {
        return srcPort;
    }

    /** The destination port (TCP, UDP), the ICMP type and code as one 16-bit word, or 0. */
    public int dstPort() {
        return dstPort;
    }

    public int icmpId() {
        return srcPort;
    }

    public int icmpType() {
        return dstPort >>> 8;
    }

    public int icmpCode() {
        return dstPort & 0xff;
    }

    public void setSrc(int a) {
        src = a;
    }

    public void setDst(int a) {
        dst = a;
    }

    public void setSrcPort(int port) {
        srcPort = port & 0xffff;
    }

    public void setDstPort(int port) {
        dstPort = port & 0xffff;
    }

    /** Whether the protocol has ports (TCP, UDP, UDP-Lite, SCTP, DCCP: what NAT can remap). */
    public boolean hasPorts() {
        return protonum == 6 || protonum == 17 || protonum == 136 || protonum == 132 || protonum == 33;
    }

    /** nf_ct_tuple_equal. */
    public boolean equals(ConntrackTuple o) {
        return o != null && src == o.src && dst == o.dst && protonum == o.protonum && srcPort == o.srcPort
                && dstPort == o.dstPort;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConntrackTuple t && equals(t);
    }

    /**
     * A 32-bit hash of the tuple mixed with the namespace's {@code seed} (the kernel's hash_conntrack_raw keys
     * jhash with a random seed so that peers cannot aim at one bucket). A murmur-style finaliser per word.
     */
    public int hash(int seed) {
        int h = seed;
        h = mix(h, src);
        h = mix(h, dst);
        h = mix(h, protonum << 16 ^ srcPort);
        h = mix(h, dstPort);
        h ^= h >>> 16;
        h *= 0x85eb_ca6b;
        h ^= h >>> 13;
        h *= 0xc2b2_ae35;
        return h ^ h >>> 16;
    }

    private static int mix(int h, int k) {
        k *= 0xcc9e_2d51;
        k = Integer.rotateLeft(k, 15);
        k *= 0x1b87_3593;
        h ^= k;
        h = Integer.rotateLeft(h, 13);
        return h * 5 + 0xe654_6b64;
    }

    @Override
    public int hashCode() {
        return hash(0);
    }

    /** The tuple as {@code conntrack -L} prints one direction, without a trailing space. */
    public void describe(StringBuilder sb) {
        sb.append("src=").append(Ipv4Addr.format(src)).append(" dst=").append(Ipv4Addr.format(dst));
        if (protonum == 1) {
            sb.append(" type=").append(icmpType()).append(" code=").append(icmpCode()).append(" id=").append(icmpId());
        } else if (hasPorts()) {
            sb.append(" sport=").append(srcPort).append(" dport=").append(dstPort);
        }
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("proto ").append(protonum).append(' ');
        describe(sb);
        return sb.toString();
    }
}
