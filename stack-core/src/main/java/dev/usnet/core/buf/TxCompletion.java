package dev.usnet.core.buf;

/**
 * The owner of a transmitted packet (skb->sk with skb->destructor): told once, when the packet stops occupying
 * memory below it — the NIC completed its transmission (a device's link emulation put it on the wire), a veth
 * orphaned it (dev_forward_skb → skb_scrub_packet → skb_orphan), or it was dropped or freed on the way
 * (kfree_skb runs the destructor too). TCP's small queues count their bytes queued below the socket with it
 * (sk_wmem_alloc, tcp_wfree).
 *
 * <p>May be called on any namespace's thread (in real time a packet is completed where it leaves, not where it
 * was sent); implementations must be thread-safe and must not send from inside the call (the caller may be in
 * the middle of the owner's own transmit path): they defer, as Linux's TSQ tasklet does. Called with the packet
 * still intact; the owner must not keep it.
 */
public interface TxCompletion {
    /** {@code p} no longer counts against its owner: {@link Packet#ownerBytes()} bytes are released. */
    void completed(Packet p);
}
