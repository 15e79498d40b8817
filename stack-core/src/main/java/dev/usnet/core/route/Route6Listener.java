package dev.usnet.core.route;

/** Told of every IPv6 route added or removed (RTM_NEWROUTE/RTM_DELROUTE for AF_INET6), as {@code ip -6 monitor route}. */
public interface Route6Listener {
    void route6Changed(Route6 r, boolean added);
}
