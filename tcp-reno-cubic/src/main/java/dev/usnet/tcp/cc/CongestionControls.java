package dev.usnet.tcp.cc;

import java.util.List;
import java.util.function.Supplier;

/**
 * The registered congestion-control algorithms (tcp_register_congestion_control and the list behind
 * {@code net.ipv4.tcp_available_congestion_control}); {@link #create} makes the per-connection instance
 * (tcp_assign_congestion_control).
 */
public final class CongestionControls {
    private CongestionControls() {}

    /** {@code net.ipv4.tcp_congestion_control} of a new namespace: cubic, as Linux builds it by default. */
    public static final String DEFAULT = "cubic";

    private static final List<String> NAMES = List.of("reno", "cubic");

    /** The algorithm names, in the order Linux lists them (reno is always built in and comes first). */
    public static List<String> available() {
        return NAMES;
    }

    /** A fresh instance of algorithm {@code name}, holding one connection's state. */
    public static CongestionOps create(String name) {
        Supplier<CongestionOps> s = switch (name == null ? "" : name) {
            case "reno" -> Reno::new;
            case "cubic" -> Cubic::new;
            default -> throw new IllegalArgumentException("congestion control '" + name + "' is not available; available: "
                    + String.join(" ", NAMES));
        };
        return s.get();
    }
}
