package dev.usnet.core.neigh;

/** Neighbour Unreachability Detection states (NUD_*), with Linux's groupings. */
public enum NudState {
    NONE, INCOMPLETE, REACHABLE, STALE, DELAY, PROBE, FAILED, NOARP, PERMANENT;

    /** NUD_VALID: a link-layer address is known and may be used. */
    public boolean valid() {
        return this == REACHABLE || this == STALE || this == DELAY || this == PROBE || this == NOARP || this == PERMANENT;
    }

    /** NUD_CONNECTED: valid without needing confirmation. */
    public boolean connected() {
        return this == REACHABLE || this == NOARP || this == PERMANENT;
    }

    /** {@code ip neigh} spelling. */
    public String display() {
        return name();
    }
}
