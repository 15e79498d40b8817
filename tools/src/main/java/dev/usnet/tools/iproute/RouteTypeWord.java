package dev.usnet.tools.iproute;

import dev.usnet.core.route.RouteType;

/**
 * The optional first word of an {@code ip route} / {@code ip -6 route} line, the route's type: unicast (also what a
 * line without the word gets), blackhole, unreachable, prohibit. Both families have the same four types.
 */
final class RouteTypeWord {
    private RouteTypeWord() {}

    /** The type {@code word} names, or null when it names none (then it is the line's prefix). */
    static RouteType of(String word) {
        return switch (word) {
            case "unicast" -> RouteType.UNICAST;
            case "blackhole" -> RouteType.BLACKHOLE;
            case "unreachable" -> RouteType.UNREACHABLE;
            case "prohibit" -> RouteType.PROHIBIT;
            default -> null;
        };
    }
}
