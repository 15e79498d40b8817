package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.netfilter.NfHookState;

/**
 * Matches on header fields (nft_payload with a compare, a bitwise or a lookup): {@code ip saddr|daddr|protocol},
 * {@code tcp|udp sport|dport}, {@code tcp flags}, {@code icmp type}. A transport field matches only when the
 * datagram is of that protocol, is its first fragment and holds the field (nft's implicit {@code meta l4proto}
 * dependency and the payload load that breaks on a short packet).
 */
final class NftPayloadExpr extends NftExpr {
    enum Field {
        IP_SADDR("ip saddr", -1, 12, 4), IP_DADDR("ip daddr", -1, 16, 4), IP_PROTOCOL("ip protocol", -1, 9, 1),
        TCP_SPORT("tcp sport", 6, 0, 2), TCP_DPORT("tcp dport", 6, 2, 2), UDP_SPORT("udp sport", 17, 0, 2),
        UDP_DPORT("udp dport", 17, 2, 2), TCP_FLAGS("tcp flags", 6, 13, 1), ICMP_TYPE("icmp type", 1, 0, 1);

        final String text;
        final int protocol;
        final int offset;
        final int size;

        Field(String text, int protocol, int offset, int size) {
            this.text = text;
            this.protocol = protocol;
            this.offset = offset;
            this.size = size;
        }
    }

    /** How {@code tcp flags} compares: any of the bits, exactly, or under a mask ({@code syn / syn,ack}). */
    enum FlagsOp { ANY, EXACT, MASKED }

    private final Field field;
    private final boolean negate;
    private final NftValues values;
    private final FlagsOp flagsOp;
    private final int flags;
    private final int flagsMask;

    NftPayloadExpr(Field field, boolean negate, NftValues values) {
        this(field, negate, values, null, 0, 0);
    }

    private NftPayloadExpr(Field field, boolean negate, NftValues values, FlagsOp op, int flags, int mask) {
        this.field = field;
        this.negate = negate;
        this.values = values;
        this.flagsOp = op;
        this.flags = flags;
        this.flagsMask = mask;
    }

    static NftPayloadExpr tcpFlags(FlagsOp op, boolean negate, int flags, int mask) {
        return new NftPayloadExpr(Field.TCP_FLAGS, negate, null, op, flags, mask);
    }

    Field field() {
        return field;
    }

    /** An {@code ip protocol} match of one protocol, which may stand as the dependency of a transport match. */
    int dependencyProtocol() {
        return field == Field.IP_PROTOCOL && !negate && values.isSingle() ? values.first() : -1;
    }

    @Override
    int transportProtocol() {
        return field.protocol;
    }

    @Override
    int eval(Packet p, NfHookState st, NftPktInfo pkt) {
        int v;
        if (field.protocol < 0) {
            int at = pkt.nh + field.offset;
            v = field.size == 4 ? pkt.buf.getInt(at) : pkt.buf.getUnsignedByte(at);
        } else {
            if (!pkt.hasTransport(field.protocol, field.offset + field.size)) {
                return BREAK;
            }
            int at = pkt.th + field.offset;
            v = field.size == 2 ? pkt.buf.getUnsignedShort(at) : pkt.buf.getUnsignedByte(at);
        }
        boolean m;
        if (field == Field.TCP_FLAGS) {
            m = switch (flagsOp) {
                case ANY -> (v & flags) != 0;
                case EXACT -> v == flags;
                case MASKED -> (v & flagsMask) == flags;
            };
        } else {
            m = values.contains(v);
        }
        return m != negate ? CONTINUE : BREAK;
    }

    @Override
    void print(StringBuilder sb) {
        sb.append(field.text).append(' ');
        if (negate) {
            sb.append("!= ");
        }
        if (field == Field.TCP_FLAGS) {
            switch (flagsOp) {
                case ANY -> sb.append(NftNames.bits(NftNames.TCP_FLAGS, flags));
                case EXACT -> sb.append(negate ? "" : "== ").append(NftNames.bits(NftNames.TCP_FLAGS, flags));
                case MASKED -> sb.append(NftNames.bits(NftNames.TCP_FLAGS, flags)).append(" / ")
                        .append(NftNames.bits(NftNames.TCP_FLAGS, flagsMask));
            }
            return;
        }
        values.print(sb);
    }
}
