package dev.usnet.core.buf;

/** What is known about a packet's L4 checksum, as skb->ip_summed. */
public enum ChecksumState {
    /** Nothing known: verify in software (CHECKSUM_NONE). */
    NONE,
    /** Already verified, or produced locally and complete (CHECKSUM_UNNECESSARY). */
    UNNECESSARY,
    /** Left for the device to finish: sum from csumStart, written at csumStart + csumOffset (CHECKSUM_PARTIAL). */
    PARTIAL
}
