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
    /** packetdrill's default. */
    static final long DEFAULT_TOLERANCE_US = 4_000;

    /** The command line's part. {@code toleranceUs} null when not given. */
    record CommandLine(Long toleranceUs, String preset, Map<String, String> knobs) {
    }

    static ScriptSettings resolve(Script script, CommandLine cli, Path scriptDir) {
        int local = DEFAULT_LOCAL_IP;
        int remote = DEFAULT_REMOTE_IP;
        int gateway = DEFAULT_GATEWAY_IP;
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
                    case "local_ip" -> local = Ipv4.parse(need(script, o));
                    case "remote_ip" -> remote = Ipv4.parse(need(script, o));
                    case "gateway_ip" -> gateway = Ipv4.parse(need(script, o));
                    case "netmask_ip" -> prefix = Ipv4.prefixLength(Ipv4.parse(need(script, o)));
                    case "mtu" -> mtu = Math.toIntExact(number(script, o));
                    case "tolerance_usecs" -> tolerance = number(script, o);
                    case "tcp_ts_tick_usecs" -> tick = number(script, o);
                    case "strict_segments" -> strict = v == null || !v.equals("0") && !v.equals("false");
                    case "tcp_ts_ecr_scaled" -> ecrScaled = v == null || !v.equals("0") && !v.equals("false");
                    case "bind_port" -> bindPort = Math.toIntExact(number(script, o));
                    case "connect_port" -> connectPort = Math.toIntExact(number(script, o));
                    // The MSS packetdrill assumes for TSO splits of the script's own packets; ours are sent whole.
                    case "mss" -> number(script, o);
                    case "ip_version" -> {
                        if (!"ipv4".equals(v)) {
                            throw new ScriptSyntaxException(script.file(), o.line(), "--ip_version=" + v
                                    + " is not supported: only ipv4");
                        }
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
        ScriptOptions options = new ScriptOptions(local, remote, gateway, prefix, mtu, tolerance, tick, strict,
                cli.preset(), Map.copyOf(cli.knobs()), scriptDir);
        return new ScriptSettings(options, ecrScaled, bindPort, connectPort);
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
