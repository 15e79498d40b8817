package dev.usnet.tools.packetdrill;

import java.util.List;

/**
 * A system-call event: {@code name(args) = result [ERRNO] [(note)]}. {@code endUs} is the end of a blocking call
 * ({@code +0...0.1}), null when the script gives none; it counts from the same origin as the event's start.
 * {@code errno} is the expected errno name or null.
 */
record SyscallSpec(String name, List<Expr> args, Expr result, String errno, Long endUs) implements Action {
}
