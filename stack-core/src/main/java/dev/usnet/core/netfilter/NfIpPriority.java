package dev.usnet.core.netfilter;

/**
 * The order functions run in at one hook (enum nf_ip_hook_priorities): lower runs first. nftables names some of
 * them ({@code raw}, {@code mangle}, {@code dstnat}, {@code filter}, {@code security}, {@code srcnat}).
 */
public final class NfIpPriority {
    /** Reassembly before connection tracking sees the datagram (nf_defrag_ipv4). */
    public static final int CONNTRACK_DEFRAG = -400;
    public static final int RAW = -300;
    /** nf_conntrack_in: the packet finds or creates its entry. */
    public static final int CONNTRACK = -200;
    public static final int MANGLE = -150;
    /** Destination NAT (prerouting, output). */
    public static final int NAT_DST = -100;
    public static final int FILTER = 0;
    public static final int SECURITY = 50;
    /** Source NAT (postrouting, input). */
    public static final int NAT_SRC = 100;
    /** nf_confirm: a new entry enters the table once its first packet has passed every hook. */
    public static final int CONNTRACK_CONFIRM = Integer.MAX_VALUE;

    private NfIpPriority() {}
}
