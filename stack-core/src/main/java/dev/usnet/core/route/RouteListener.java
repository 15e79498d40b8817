package dev.usnet.core.route;

/** Told of route changes (RTM_NEWROUTE/RTM_DELROUTE); must not block. */
public interface RouteListener {
    /** A route was added ({@code added}) or removed; a replaced route is a removal then an addition. */
    default void routeChanged(Route r, boolean added) {}
}
