package dev.usnet.core.neigh;

/** Told of neighbour-table changes (RTM_NEWNEIGH/RTM_DELNEIGH); must not block. */
public interface NeighListener {
    /** A neighbour entry changed state ({@code from} is {@link NudState#NONE} for a new entry). */
    default void neighChanged(Neighbour n, NudState from) {}

    /** A neighbour entry was removed (deleted, flushed, garbage-collected, or its device went). */
    default void neighDeleted(Neighbour n) {}
}
