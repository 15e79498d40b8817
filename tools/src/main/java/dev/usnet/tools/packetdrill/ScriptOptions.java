package dev.usnet.tools.packetdrill;

import java.nio.file.Path;
import java.util.Map;

/**
 * The options a script runs with: defaults, then the command line, then the script's own option lines
 * ({@code --local_ip=...}). IPv4 addresses are ints (network order in the int's value: 198.18.0.1 is 0xC6120001).
 * {@code local} is the stack under test, {@code remote} the peer the script plays.
 *
 * @param localIp        the IPv4 address of the socket under test ({@code --local_ip}), default 198.18.0.1
 * @param remoteIp       the IPv4 address the script's packets come from ({@code --remote_ip}), default 198.18.0.2
 * @param gatewayIp      the test device's IPv4 gateway ({@code --gateway_ip}), default 198.18.0.3
 * @param prefixLength   from {@code --netmask_ip}, default 24
 * @param mtu            the test device's MTU ({@code --mtu}, default 1500; over IPv6 20 more, see
 *                       {@link ScriptSettings})
 * @param toleranceUs    how far an event may be from its script time ({@code --tolerance_usecs})
 * @param tcpTsTickUs    the timestamp clock tick for {@code TS val} checks ({@code --tcp_ts_tick_usecs}), 0 = not checked
 * @param strictSegments {@code --strict_segments}: outbound segments are not joined
 * @param preset         usnet's {@code usnet.tcp.kernel} preset for the usnet target (ignored by the kernel target)
 * @param knobs          further usnet knobs ({@code --set K=V}) for the usnet target
 * @param scriptDir      the directory of the script (backtick commands run there)
 * @param ipVersion      what the script runs over ({@code --ip_version})
 * @param ipv6           the IPv6 addresses when {@code ipVersion} is {@link IpVersion#IPV6}, else null
 */
public record ScriptOptions(int localIp, int remoteIp, int gatewayIp, int prefixLength, int mtu, long toleranceUs,
                            long tcpTsTickUs, boolean strictSegments, String preset, Map<String, String> knobs,
                            Path scriptDir, IpVersion ipVersion, Ipv6Addresses ipv6) {

    /**
     * The test device's IPv6 addresses (16 bytes each, network order) and the prefix length of the local one.
     */
    public record Ipv6Addresses(byte[] local, byte[] remote, byte[] gateway, int prefixLength) {
        public Ipv6Addresses {
            if (local.length != Ipv6.ADDRESS_LEN || remote.length != Ipv6.ADDRESS_LEN
                    || gateway.length != Ipv6.ADDRESS_LEN) {
                throw new IllegalArgumentException("IPv6 addresses have 16 bytes");
            }
            local = local.clone();
            remote = remote.clone();
            gateway = gateway.clone();
        }

        @Override
        public byte[] local() {
            return local.clone();
        }

        @Override
        public byte[] remote() {
            return remote.clone();
        }

        @Override
        public byte[] gateway() {
            return gateway.clone();
        }
    }

    public ScriptOptions {
        if (ipVersion == null) {
            throw new IllegalArgumentException("an IP version is needed");
        }
        if ((ipVersion == IpVersion.IPV6) != (ipv6 != null)) {
            throw new IllegalArgumentException("IPv6 addresses go with --ip_version=ipv6 and only with it");
        }
    }

    /** IPv4 options, as every script ran before IPv6. */
    public ScriptOptions(int localIp, int remoteIp, int gatewayIp, int prefixLength, int mtu, long toleranceUs,
                         long tcpTsTickUs, boolean strictSegments, String preset, Map<String, String> knobs,
                         Path scriptDir) {
        this(localIp, remoteIp, gatewayIp, prefixLength, mtu, toleranceUs, tcpTsTickUs, strictSegments, preset,
                knobs, scriptDir, IpVersion.IPV4, null);
    }

    /** The local address as the test device's packets carry it: 4 or 16 bytes. */
    public byte[] localWireAddress() {
        return ipv6 != null ? ipv6.local() : ipv4Bytes(localIp);
    }

    /** The remote address as the test device's packets carry it: 4 or 16 bytes. */
    public byte[] remoteWireAddress() {
        return ipv6 != null ? ipv6.remote() : ipv4Bytes(remoteIp);
    }

    /**
     * What {@code bind(fd, ..., ...)} binds: the local address in the socket's family (4 bytes for AF_INET, 16 for
     * AF_INET6, IPv4-mapped under {@code ipv4-mapped-ipv6}).
     */
    public byte[] localSocketAddress() {
        return socketAddress(localIp, ipv6 == null ? null : ipv6.local());
    }

    /** What {@code connect(fd, ..., ...)} connects to, in the socket's family as {@link #localSocketAddress}. */
    public byte[] remoteSocketAddress() {
        return socketAddress(remoteIp, ipv6 == null ? null : ipv6.remote());
    }

    private byte[] socketAddress(int v4, byte[] v6) {
        return switch (ipVersion) {
            case IPV4 -> ipv4Bytes(v4);
            case IPV4_MAPPED_IPV6 -> Ipv6.mappedFromIpv4(v4);
            case IPV6 -> v6;
        };
    }

    private static byte[] ipv4Bytes(int ip) {
        return new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip};
    }
}
