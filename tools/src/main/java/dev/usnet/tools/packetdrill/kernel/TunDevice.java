package dev.usnet.tools.packetdrill.kernel;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.usnet.tap.Tun;
import dev.usnet.tap.rtnl.IfAddrMsg;
import dev.usnet.tap.rtnl.RtnlSocket;
import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SocketCalls;
import dev.usnet.tap.sys.SysException;
import dev.usnet.tools.packetdrill.Ipv6;
import dev.usnet.tools.packetdrill.ScriptOptions;
import dev.usnet.tools.packetdrill.TargetException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * packetdrill's test device: a layer-3 TUN ({@code IFF_TUN | IFF_NO_PI}, no link header, no packet-information
 * prefix: each read or write is one IP packet) named {@code tun0}, with the script's local address, MTU and a
 * default route via its gateway. Created by a thread inside the test namespace ({@link #createHere}); the fd is
 * non-blocking and works from any thread afterwards.
 */
final class TunDevice implements AutoCloseable {
    static final String NAME = "tun0";
    /** SIOCSIFMTU: sets a device's MTU through a struct ifreq (name, then the int MTU at offset 16). */
    private static final long SIOCSIFMTU = 0x8922;
    private static final int IFNAMSIZ = 16;
    private static final int IFREQ_SIZE = 40;

    private final int fd;
    private final int ifindex;
    private volatile boolean closed;

    private TunDevice(int fd, int ifindex) {
        this.fd = fd;
        this.ifindex = ifindex;
    }

    int fd() {
        return fd;
    }

    int ifindex() {
        return ifindex;
    }

    /**
     * In the calling thread's namespace: {@code lo} up, {@code tun0} created with {@code local_ip/prefix}, the MTU and
     * up, and the default route via {@code gateway_ip}. {@code namespace} names the namespace for the route command.
     */
    static TunDevice createHere(ScriptOptions o, String namespace) {
        int fd = open();
        boolean ok = false;
        try {
            int ifindex = Libc.ifNameToIndex(NAME);
            if (ifindex <= 0) {
                throw new TargetException("tun0 was created but has no ifindex: " + Errno.name(Libc.errno()));
            }
            try (RtnlSocket rtnl = RtnlSocket.open()) {
                int lo = Libc.ifNameToIndex("lo");
                if (lo > 0) {
                    rtnl.setLinkUp(lo);
                }
                setMtu(o.mtu());
                if (o.ipv6() == null) {
                    rtnl.addAddr4(ifindex, Addresses.bytes(o.localIp()), o.prefixLength(),
                            IfAddrMsg.RT_SCOPE_UNIVERSE);
                }
                rtnl.setLinkUp(ifindex);
            } catch (SysException e) {
                throw new TargetException("configuring tun0 in " + namespace + ": " + e.getMessage(), e);
            }
            if (o.ipv6() == null) {
                addDefaultRoute(Addresses.dotted(o.gatewayIp()), "--gateway_ip", namespace, false);
            } else {
                // usnet's rtnetlink layer builds IPv4 addresses only: the IPv6 one goes through iproute2 as the
                // route does. nodad: usable at once, as packetdrill's own address (no one else is on the link).
                String local = Ipv6.format(o.ipv6().local()) + "/" + o.ipv6().prefixLength();
                ipCommand(namespace, "--local_ip", "ip", "-6", "addr", "add", local, "dev", NAME, "nodad");
                addDefaultRoute(Ipv6.format(o.ipv6().gateway()), "--gateway_ip", namespace, true);
            }
            ok = true;
            return new TunDevice(fd, ifindex);
        } finally {
            if (!ok) {
                Libc.close(fd);
            }
        }
    }

    /** open("/dev/net/tun") + TUNSETIFF(tun0, IFF_TUN | IFF_NO_PI | IFF_TUN_EXCL) + O_NONBLOCK. */
    private static int open() {
        int fd = Libc.open("/dev/net/tun", Libc.O_RDWR | Libc.O_CLOEXEC);
        if (fd < 0) {
            throw new TargetException(Errno.message("open /dev/net/tun", NAME, Libc.errno()));
        }
        boolean ok = false;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ifr = arena.allocate(IFREQ_SIZE, 8);
            byte[] n = NAME.getBytes(StandardCharsets.US_ASCII);
            MemorySegment.copy(n, 0, ifr, JAVA_BYTE, 0, n.length);
            ifr.set(JAVA_SHORT, IFNAMSIZ, (short) (Tun.IFF_TUN | Tun.IFF_NO_PI | Tun.IFF_TUN_EXCL));
            if (Libc.ioctl(fd, Tun.TUNSETIFF, ifr) < 0) {
                // The TAP wording of the shared message fits a TUN as well (same driver, same capability).
                throw new TargetException(Errno.message("TUNSETIFF", NAME, Libc.errno()));
            }
            int fl = Libc.fcntl(fd, Libc.F_GETFL, 0);
            if (fl < 0 || Libc.fcntl(fd, Libc.F_SETFL, fl | Libc.O_NONBLOCK) < 0) {
                throw new TargetException("fcntl O_NONBLOCK on tun0: " + Errno.name(Libc.errno()));
            }
            ok = true;
            return fd;
        } finally {
            if (!ok) {
                Libc.close(fd);
            }
        }
    }

    /** SIOCSIFMTU on an AF_INET datagram socket of this namespace. */
    private static void setMtu(int mtu) {
        int s = SocketCalls.socket(Libc.AF_INET, SocketCalls.SOCK_DGRAM | Libc.SOCK_CLOEXEC, 0);
        if (s < 0) {
            throw new TargetException("socket for SIOCSIFMTU: " + Errno.name(SocketCalls.errno()));
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ifr = arena.allocate(IFREQ_SIZE, 8);
            byte[] n = NAME.getBytes(StandardCharsets.US_ASCII);
            MemorySegment.copy(n, 0, ifr, JAVA_BYTE, 0, n.length);
            ifr.set(JAVA_INT, IFNAMSIZ, mtu);
            if (SocketCalls.ioctl(s, SIOCSIFMTU, ifr) < 0) {
                throw new TargetException("setting tun0's MTU to " + mtu + " (--mtu) failed: "
                        + Errno.name(SocketCalls.errno()));
            }
        } finally {
            SocketCalls.close(s);
        }
    }

    /**
     * {@code ip route add default via GATEWAY dev tun0} in the namespace. usnet's rtnetlink layer builds link and
     * address requests but no RTM_NEWROUTE, so this one step shells out to iproute2 (run through {@code ip netns
     * exec}, which puts the command in the namespace whatever thread starts it).
     */
    private static void addDefaultRoute(String gw, String option, String namespace, boolean ipv6) {
        if (ipv6) {
            ipCommand(namespace, option, "ip", "-6", "route", "add", "default", "via", gw, "dev", NAME);
        } else {
            ipCommand(namespace, option, "ip", "route", "add", "default", "via", gw, "dev", NAME);
        }
    }

    /** One iproute2 command in the namespace; fails naming it and the script option it comes from. */
    private static void ipCommand(String namespace, String option, String... argv) {
        java.util.List<String> cmd = new java.util.ArrayList<>(java.util.List.of("ip", "netns", "exec", namespace));
        cmd.addAll(java.util.List.of(argv));
        dev.usnet.tap.HostCommand.Result r = dev.usnet.tap.HostCommand.run(10, cmd.toArray(String[]::new));
        if (!r.ok()) {
            throw new TargetException(String.join(" ", argv) + " (" + option + ") in " + namespace + " failed: "
                    + r.output().trim());
        }
    }

    /** Writes one IP packet: the kernel receives it on tun0 as if it came from the wire. */
    void inject(MemorySegment packet, int len) {
        long n = SocketCalls.write(fd, packet, len);
        if (n != len) {
            throw new TargetException("injecting a " + len + "-byte packet on tun0 failed: "
                    + (n < 0 ? Errno.name(SocketCalls.errno()) : "only " + n + " bytes written"));
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** Closes the fd: the kernel removes tun0 with it. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            Libc.close(fd);
        }
    }
}
