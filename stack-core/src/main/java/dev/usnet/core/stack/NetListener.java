package dev.usnet.core.stack;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.Device;
import dev.usnet.core.neigh.Neighbour;
import dev.usnet.core.neigh.NudState;
import dev.usnet.core.route.Route;

/**
 * The rtnetlink notifications of one namespace, as {@code ip monitor} and {@code bridge monitor fdb} print them:
 * links going up or down or losing carrier (RTM_NEWLINK), FDB entries learned, moved and aged out
 * (RTM_NEWNEIGH/RTM_DELNEIGH on AF_BRIDGE), neighbour state changes, route changes (RTM_NEWROUTE/RTM_DELROUTE).
 * Called on the namespace's thread (a route or link change also on the thread that made it); an implementation
 * must not block. The stack checks for a listener before building anything, so without one these cost a null
 * check.
 */
public interface NetListener {
    /** {@code dev} was set up or down, or its carrier changed (a veth whose peer went down). */
    default void linkChanged(Device dev) {}

    /** A bridge learned {@code mac} behind {@code port} (a new entry). */
    default void fdbLearned(Bridge bridge, long mac, Device port) {}

    /** A learned {@code mac} was seen behind another port and moved there. */
    default void fdbMoved(Bridge bridge, long mac, Device from, Device to) {}

    /** A learned entry aged out (ageing_time without a frame from it). */
    default void fdbAged(Bridge bridge, long mac, Device port) {}

    /** A neighbour entry changed state ({@code from} is {@link NudState#NONE} for a new entry). */
    default void neighChanged(Neighbour n, NudState from) {}

    /** A neighbour entry was removed (deleted, flushed, garbage-collected, or its device went). */
    default void neighDeleted(Neighbour n) {}

    /** A route was added ({@code added}) or removed; a replaced route is a removal then an addition. */
    default void routeChanged(Route r, boolean added) {}
}
