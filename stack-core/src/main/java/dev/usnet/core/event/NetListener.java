package dev.usnet.core.event;

import dev.usnet.core.bridge.FdbListener;
import dev.usnet.core.device.LinkListener;
import dev.usnet.core.neigh.NeighListener;
import dev.usnet.core.route.RouteListener;

/**
 * The rtnetlink notifications of one namespace, as {@code ip monitor} and {@code bridge monitor fdb} print them:
 * links going up or down or losing carrier (RTM_NEWLINK), FDB entries learned, moved and aged out
 * (RTM_NEWNEIGH/RTM_DELNEIGH on AF_BRIDGE), neighbour state changes, route changes (RTM_NEWROUTE/RTM_DELROUTE).
 * Each kind of change is declared by the package that makes it ({@link LinkListener}, {@link FdbListener},
 * {@link NeighListener}, {@link RouteListener}), so those packages need not know of this one; a subscriber to the
 * whole namespace implements this. Called on the namespace's thread (a route or link change also on the thread
 * that made it); an implementation must not block. The stack checks for a listener before building anything, so
 * without one these cost a null check.
 */
public interface NetListener extends LinkListener, FdbListener, NeighListener, RouteListener {
}
