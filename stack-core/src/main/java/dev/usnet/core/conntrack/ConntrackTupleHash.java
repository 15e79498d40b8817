package dev.usnet.core.conntrack;

/**
 * One direction of an entry as it sits in a hash chain (struct nf_conntrack_tuple_hash): the tuple, the entry it
 * belongs to and which direction it is. A lookup answers with this, so the caller learns entry and direction at
 * once without anything allocated.
 */
public final class ConntrackTupleHash {
    final ConntrackTuple tuple = new ConntrackTuple();
    final ConntrackEntry ct;
    final int dir;
    ConntrackTupleHash next;
    int bucket = -1;

    ConntrackTupleHash(ConntrackEntry ct, int dir) {
        this.ct = ct;
        this.dir = dir;
    }

    public ConntrackEntry entry() {
        return ct;
    }

    /** {@link ConntrackEntry#ORIGINAL} or {@link ConntrackEntry#REPLY}. */
    public int direction() {
        return dir;
    }

    public ConntrackTuple tuple() {
        return tuple;
    }
}
