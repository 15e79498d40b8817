package dev.usnet.tools.packetdrill;

import java.nio.file.Path;
import java.util.Map;

/**
 * What a script runs with: the {@link ScriptOptions} the target gets, and the runner's own settings. Built from
 * defaults, then the command line, then the script's option lines; an explicit command-line tolerance wins over
 * the script's {@code --tolerance_usecs} (the user knows the jitter of the machine the script runs on).
 *
 * @param tsEcrScaled {@code --tcp_ts_ecr_scaled}: an inbound TS ecr with no exact outbound TS val is interpolated
 */
record ScriptSettings(ScriptOptions options, boolean tsEcrScaled, int bindPort, int connectPort) {

    static final int DEFAULT_LOCAL_IP = 0xC612_0001;   // 198.18.0.1
    static final int DEFAULT_REMOTE_IP = 0xC612_0002;  // 198.18.0.2
    static final int DEFAULT_GATEWAY_IP = 0xC612_0003; // 198.18.0.3
    /** IPv6 defaults: a ULA prefix (fd00::/8) spelling the IPv4 defaults' 198.18.0.x. */
    static final String DEFAULT_LOCAL_IP6 = "fd00:198:18::1";
    static final String DEFAULT_REMOTE_IP6 = "fd00:198:18::2";
    static final String DEFAULT_GATEWAY_IP6 = "fd00:198:18::3";
    static final int DEFAULT_PREFIX_LENGTH6 = 64;
    /**
     * Over IPv6 the test device's MTU is the script's plus this: the IPv6 header is 20 bytes longer than IPv4's, so
     * the MSS the stack announces (MTU - 60) is the one the script wrote for IPv4 (MTU - 40), as packetdrill's own
     * test runner runs every script over IPv6 with {@code --mtu=1520}.
     */
    static final int IPV6_MTU_EXTRA = 20;
    /** packetdrill's default. */
    static final long DEFAULT_TOLERANCE_US = 4_000;

    /**
     * The command line's part. {@code toleranceUs} null when not given; {@code ipVersion} null when not given (then
     * the script's {@code --ip_version}, else IPv4). Given, it wins over the script's, as in packetdrill.
     */
    record CommandLine(Long toleranceUs, String preset, Map<String, String> knobs, IpVersion ipVersion) {
        CommandLine(Long toleranceUs, String preset, Map<String, String> knobs) {
            this(toleranceUs, preset, knobs, null);
        }
    }

    static ScriptSettings resolve(Script script, CommandLine cli, Path scriptDir) {
        IpVersion version = cli.ipVersion();
        if (version == null) {
            version = IpVersion.IPV4;
            for (ScriptOption o : script.options()) {
                if (o.name().equals("ip_version")) {
                    try {
                        version = IpVersion.parse(need(script, o));
                    } catch (IllegalArgumentException e) {
                        throw new ScriptSyntaxException(script.file(), o.line(), "--ip_version: " + e.getMessage());
                    }
                }
            }
        }
        boolean v6 = version.ipv6Wire();
        int local = DEFAULT_LOCAL_IP;
        int remote = DEFAULT_REMOTE_IP;
        int gateway = DEFAULT_GATEWAY_IP;
        byte[] local6 = Ipv6.parse(DEFAULT_LOCAL_IP6);
        byte[] remote6 = Ipv6.parse(DEFAULT_REMOTE_IP6);
        byte[] gateway6 = Ipv6.parse(DEFAULT_GATEWAY_IP6);
        int prefix = 24;
        int mtu = 1500;
        long tolerance = DEFAULT_TOLERANCE_US;
        long tick = 0;
        boolean strict = false;
        boolean ecrScaled = false;
        int bindPort = Flow.DEFAULT_PORT;
        int connectPort = Flow.DEFAULT_PORT;
        for (ScriptOption o : script.options()) {
            String v = o.value();
            try {
                switch (o.name()) {
                    case "local_ip" -> {
                        if (v6) {
                            local6 = Ipv6.parse(need(script, o));
                        } else {
                            local = Ipv4.parse(need(script, o));
                        }
                    }
                    case "remote_ip" -> {
                        if (v6) {
                            remote6 = Ipv6.parse(need(script, o));
                        } else {
                            remote = Ipv4.parse(need(script, o));
                        }
                    }
                    case "gateway_ip" -> {
                        if (v6) {
                            gateway6 = Ipv6.parse(need(script, o));
                        } else {
                            gateway = Ipv4.parse(need(script, o));
                        }
                    }
                    case "netmask_ip" -> {
                        if (v6) {
                            throw new IllegalArgumentException("is an IPv4 netmask; over IPv6 the local prefix is /"
                                    + DEFAULT_PREFIX_LENGTH6);
                        }
                        prefix = Ipv4.prefixLength(Ipv4.parse(need(script, o)));
                    }
                    case "mtu" -> mtu = Math.toIntExact(number(script, o));
                    case "tolerance_usecs" -> tolerance = number(script, o);
                    case "tcp_ts_tick_usecs" -> tick = number(script, o);
                    case "strict_segments" -> strict = v == null || !v.equals("0") && !v.equals("false");
                    case "tcp_ts_ecr_scaled" -> ecrScaled = v == null || !v.equals("0") && !v.equals("false");
                    case "bind_port" -> bindPort = Math.toIntExact(number(script, o));
                    case "connect_port" -> connectPort = Math.toIntExact(number(script, o));
                    // The MSS packetdrill assumes for TSO splits of the script's own packets; ours are sent whole.
                    case "mss" -> number(script, o);
                    // Read above: the version decides how the address options are read.
                    case "ip_version" -> {
                    }
                    default -> throw new ScriptSyntaxException(script.file(), o.line(), "unknown or unsupported "
                            + "option --" + o.name());
                }
            } catch (IllegalArgumentException | ArithmeticException e) {
                throw new ScriptSyntaxException(script.file(), o.line(), "--" + o.name() + ": " + e.getMessage());
            }
        }
        if (cli.toleranceUs() != null) {
            tolerance = cli.toleranceUs();
        }
        checkIcmpLines(script, version);
        ScriptOptions.Ipv6Addresses ipv6 = v6
                ? new ScriptOptions.Ipv6Addresses(local6, remote6, gateway6, DEFAULT_PREFIX_LENGTH6) : null;
        ScriptOptions options = new ScriptOptions(local, remote, gateway, prefix, v6 ? mtu + IPV6_MTU_EXTRA : mtu,
                tolerance, tick, strict, cli.preset(), Map.copyOf(cli.knobs()), scriptDir, version, ipv6);
        return new ScriptSettings(options, ecrScaled, bindPort, connectPort);
    }

    /**
     * Why a script cannot run over {@code version} when the command line asks for it, or null when it can. As
     * packetdrill's own test runner: a name ending in {@code v4.pkt} is IPv4's (ipv4 and ipv4-mapped-ipv6), one in
     * {@code v6.pkt} IPv6's. And an icmp line naming what only the other ICMP has ({@code frag_needed},
     * {@code host_unreachable} are ICMPv4's; {@code packet_too_big} ICMPv6's) ties the script to that version. The
     * command reports such a script as skipped, not failed.
     */
    static String notForVersion(Script script, IpVersion version) {
        String name = java.nio.file.Path.of(script.file()).getFileName().toString();
        if (name.endsWith("v4.pkt") && version.ipv6Wire()) {
            return "an IPv4 script (its name ends in v4.pkt), not run over " + version;
        }
        if (name.endsWith("v6.pkt") && !version.ipv6Wire()) {
            return "an IPv6 script (its name ends in v6.pkt), not run over " + version;
        }
        for (Event e : script.events()) {
            if (e.action() instanceof PacketSpec p && p.icmp() != null) {
                String bad = IcmpNames.problem(p.icmp(), version.ipv6Wire());
                if (bad != null) {
                    return "line " + e.line() + ": " + bad + ": an " + (version.ipv6Wire() ? "ICMPv4" : "ICMPv6")
                            + " script, not run over " + version;
                }
            }
        }
        return null;
    }

    /** Every icmp line names a type and code of the version's ICMP (ICMPv6 over IPv6); fails naming the line. */
    private static void checkIcmpLines(Script script, IpVersion version) {
        for (Event e : script.events()) {
            if (e.action() instanceof PacketSpec p && p.icmp() != null) {
                String bad = IcmpNames.problem(p.icmp(), version.ipv6Wire());
                if (bad != null) {
                    throw new ScriptSyntaxException(script.file(), e.line(), bad + " (--ip_version=" + version + ")");
                }
            }
        }
    }

    private static String need(Script s, ScriptOption o) {
        if (o.value() == null || o.value().isEmpty()) {
            throw new ScriptSyntaxException(s.file(), o.line(), "--" + o.name() + " needs a value");
        }
        return o.value();
    }

    private static long number(Script s, ScriptOption o) {
        try {
            long v = Long.parseLong(need(s, o));
            if (v < 0) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new ScriptSyntaxException(s.file(), o.line(), "--" + o.name() + " needs a non-negative integer, got "
                    + o.value());
        }
    }
}
