package dev.usnet.core.netfilter;

/**
 * What a NAT statement asks for (struct nf_nat_range2): an address range and a port range, each used only when
 * its flag is set. Built once when a rule is parsed; the packet path only reads it.
 */
public record NfNatRange(int flags, int minAddr, int maxAddr, int minPort, int maxPort) {
    /** The address range is given (otherwise the address stays, as a port-only mapping). */
    public static final int MAP_IPS = 1;
    /** The port range is given. */
    public static final int PROTO_SPECIFIED = 1 << 1;
    /** {@code random}: the port is chosen at random in the range rather than by the hash of the tuple. */
    public static final int PROTO_RANDOM = 1 << 2;
    /** {@code persistent}: a source keeps the same address across connections. */
    public static final int PERSISTENT = 1 << 3;
    /** {@code fully-random}. */
    public static final int PROTO_RANDOM_FULLY = 1 << 4;

    /** No address, no ports: masquerade's default, or the null binding. */
    public static final NfNatRange NONE = new NfNatRange(0, 0, 0, 0, 0);

    public boolean has(int flag) {
        return (flags & flag) != 0;
    }
}
