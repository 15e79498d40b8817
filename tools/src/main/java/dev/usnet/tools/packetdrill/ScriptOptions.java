package dev.usnet.tools.packetdrill;

import java.util.Map;

/**
 * The options a script runs with: defaults, then the command line, then the script's own option lines
 * ({@code --local_ip=...}). Addresses are IPv4 as ints (network order in the int's value: 198.18.0.1 is
 * 0xC6120001). {@code local} is the stack under test, {@code remote} the peer the script plays.
 *
 * @param localIp        the address of the socket under test ({@code --local_ip}), default 198.18.0.1
 * @param remoteIp       the address the script's packets come from ({@code --remote_ip}), default 198.18.0.2
 * @param gatewayIp      the test device's gateway ({@code --gateway_ip}), default 198.18.0.3
 * @param prefixLength   from {@code --netmask_ip}, default 24
 * @param mtu            the test device's MTU ({@code --mtu}), default 1500
 * @param toleranceUs    how far an event may be from its script time ({@code --tolerance_usecs})
 * @param tcpTsTickUs    the timestamp clock tick for {@code TS val} checks ({@code --tcp_ts_tick_usecs}), 0 = not checked
 * @param strictSegments {@code --strict_segments}: outbound segments are not joined
 * @param preset         usnet's {@code usnet.tcp.kernel} preset for the usnet target (ignored by the kernel target)
 * @param knobs          further usnet knobs ({@code --set K=V}) for the usnet target
 * @param scriptDir      the directory of the script (backtick commands run there)
 */
public record ScriptOptions(int localIp, int remoteIp, int gatewayIp, int prefixLength, int mtu, long toleranceUs,
                            long tcpTsTickUs, boolean strictSegments, String preset, Map<String, String> knobs,
                            java.nio.file.Path scriptDir) {
}
