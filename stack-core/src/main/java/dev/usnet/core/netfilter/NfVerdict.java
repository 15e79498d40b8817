package dev.usnet.core.netfilter;

/** What a hook function decides for a packet (NF_DROP, NF_ACCEPT, NF_STOLEN). */
public final class NfVerdict {
    /** The packet is freed; the function said why through {@link NfHookState#drop}. */
    public static final int DROP = 0;
    /** The packet goes on to the next function, and past the hook. */
    public static final int ACCEPT = 1;
    /** The function took the packet (queued it for reassembly, freed it after sending a reply): stop here. */
    public static final int STOLEN = 2;

    private NfVerdict() {}
}
