package dev.usnet.tools.packetdrill;

/**
 * The address family a script runs over ({@code --ip_version}, {@code usnet packetdrill --ip-version}), as
 * packetdrill names them. The script is the same text in all three; what changes is the socket family, the address
 * a {@code ...} in bind/connect stands for, and the IP version of the packets on the test device:
 *
 * <table>
 * <caption>per version</caption>
 * <tr><th>version</th><th>socket family</th><th>bind/connect address</th><th>packets</th></tr>
 * <tr><td>ipv4</td><td>AF_INET</td><td>local/remote IPv4</td><td>IPv4</td></tr>
 * <tr><td>ipv4-mapped-ipv6</td><td>AF_INET6</td><td>::ffff:local/remote IPv4</td><td>IPv4</td></tr>
 * <tr><td>ipv6</td><td>AF_INET6</td><td>local/remote IPv6</td><td>IPv6</td></tr>
 * </table>
 */
public enum IpVersion {
    IPV4("ipv4"),
    IPV4_MAPPED_IPV6("ipv4-mapped-ipv6"),
    IPV6("ipv6");

    /** Linux's AF_INET and AF_INET6. */
    public static final int AF_INET = 2;
    public static final int AF_INET6 = 10;

    private final String scriptName;

    IpVersion(String scriptName) {
        this.scriptName = scriptName;
    }

    /** The name scripts and the command line use ({@code ipv4-mapped-ipv6}). */
    public String scriptName() {
        return scriptName;
    }

    /** True when the packets on the test device are IPv6. */
    public boolean ipv6Wire() {
        return this == IPV6;
    }

    /** The family of {@code socket(..., ...)} with a {@code ...} domain. */
    public int socketFamily() {
        return this == IPV4 ? AF_INET : AF_INET6;
    }

    /** The version named {@code name}; fails listing the names. */
    public static IpVersion parse(String name) {
        for (IpVersion v : values()) {
            if (v.scriptName.equals(name)) {
                return v;
            }
        }
        throw new IllegalArgumentException("unknown IP version " + name + ": ipv4, ipv4-mapped-ipv6 or ipv6");
    }

    @Override
    public String toString() {
        return scriptName;
    }
}
