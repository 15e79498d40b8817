package dev.usnet.core.ipv6;

import dev.usnet.core.wire.Icmpv6Packet;

/**
 * What an ICMPv6 error means to the socket that sent the offending datagram (Linux's icmpv6_err_convert): the errno
 * it is reported as, and whether it is hard. A soft error (no route, address unreachable, hop limit exceeded) may
 * pass, as a router's state changes; a hard one (port unreachable, administratively prohibited, a parameter problem)
 * will not, so a connected socket hears it at once.
 */
public final class Icmpv6ErrorConvert {
    /** errno values as Linux numbers them on x86-64 and arm64. */
    public static final int EACCES = 13;
    public static final int EPROTO = 71;
    public static final int EMSGSIZE = 90;
    public static final int ENETUNREACH = 101;
    public static final int ECONNREFUSED = 111;
    public static final int EHOSTUNREACH = 113;

    private Icmpv6ErrorConvert() {}

    /** The errno of an error of {@code type} and {@code code}. */
    public static int errno(int type, int code) {
        return switch (type) {
            case Icmpv6Packet.DEST_UNREACH -> switch (code) {
                case Icmpv6Packet.CODE_NOROUTE -> ENETUNREACH;
                case Icmpv6Packet.CODE_ADM_PROHIBITED, Icmpv6Packet.CODE_POLICY_FAIL, Icmpv6Packet.CODE_REJECT_ROUTE ->
                        EACCES;
                case Icmpv6Packet.CODE_NOT_NEIGHBOUR, Icmpv6Packet.CODE_ADDR_UNREACH -> EHOSTUNREACH;
                case Icmpv6Packet.CODE_PORT_UNREACH -> ECONNREFUSED;
                default -> EPROTO;
            };
            case Icmpv6Packet.PKT_TOOBIG -> EMSGSIZE;
            case Icmpv6Packet.TIME_EXCEED -> EHOSTUNREACH;
            default -> EPROTO;
        };
    }

    /**
     * Whether the error is hard. A packet too big is soft here; a UDP socket makes it hard itself when it does path MTU
     * discovery (as by default), since the datagram it sent was lost for good.
     */
    public static boolean hard(int type, int code) {
        return switch (type) {
            case Icmpv6Packet.DEST_UNREACH -> switch (code) {
                case Icmpv6Packet.CODE_ADM_PROHIBITED, Icmpv6Packet.CODE_PORT_UNREACH, Icmpv6Packet.CODE_POLICY_FAIL,
                     Icmpv6Packet.CODE_REJECT_ROUTE -> true;
                default -> false;
            };
            case Icmpv6Packet.PARAMPROB -> true;
            default -> false;
        };
    }
}
