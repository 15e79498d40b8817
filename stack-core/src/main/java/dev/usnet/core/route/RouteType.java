package dev.usnet.core.route;

/** rtm_type: what a route does with a matching packet. */
public enum RouteType {
    UNICAST, LOCAL, BROADCAST, BLACKHOLE, UNREACHABLE, PROHIBIT
}
