package dev.usnet.tools.packetdrill;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tap.HostCommand;
import dev.usnet.tools.packetdrill.kernel.KernelTarget;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel target over {@code ipv6} and {@code ipv4-mapped-ipv6}, driven with the runner's own packet builder and
 * decoder: tun0's IPv6 address and route, an AF_INET6 listener answering an IPv6 SYN with MSS 1460 (MTU 1520 - 60),
 * data with a right TCP checksum over the IPv6 pseudo-header, and an AF_INET6 socket bound to a v4-mapped address
 * talking IPv4 on the wire. Root only; every namespace is deleted by the target (checked).
 */
class KernelTargetIpv6Test {
    private static final int SOCK_STREAM = 1;
    private static final int IPPROTO_TCP = 6;
    private static final int REMOTE_PORT = 41000;

    @TempDir
    Path dir;

    private KernelTarget target;

    @BeforeAll
    static void requireRoot() {
        Assumptions.assumeTrue(HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip")
                        && Files.exists(Path.of("/proc/sys/net/ipv6")), "needs root, /dev/net/tun, iproute2 and IPv6");
    }

    @AfterEach
    void close() {
        if (target != null) {
            String ns = target.namespaceName();
            target.close();
            assertTrue(!Files.exists(Path.of("/var/run/netns", ns)), "namespace " + ns + " left behind");
        }
    }

    private ScriptOptions options(IpVersion version) throws Exception {
        Path script = dir.resolve("t.pkt");
        Files.writeString(script, "0 close(3) = -1\n");
        return ScriptSettings.resolve(Parser.parse("t.pkt", Files.readString(script)),
                new ScriptSettings.CommandLine(20_000L, null, Map.of(), version), dir).options();
    }

    private PendingCall call(String name, Value... args) {
        PendingCall c = target.call(new Syscall(name, List.of(args), 1));
        assertTrue(c.isDone(), name + " should not block");
        return c;
    }

    private LivePacket sniff() {
        while (true) {
            Sniffed s = target.sniff(target.nowMicros() + 2_000_000);
            assertNotNull(s, "the kernel sent nothing within 2 s");
            LivePacket p = LivePacket.decode(s.ipPacket(), s.micros());
            if (p.tcp()) {
                assertTrue(PacketBuilder.checksumsValid(s.ipPacket()), "checksums of the kernel's packet");
                return p;
            }
        }
    }

    /** socket, bind, listen on fd 3, an injected SYN from the remote address; returns the SYN-ACK. */
    private LivePacket listenAndSyn(ScriptOptions o) {
        assertEquals(3, call("socket", Value.ELLIPSIS, Value.of(SOCK_STREAM), Value.of(IPPROTO_TCP)).result().ret());
        assertEquals(0, call("bind", Value.of(3), Value.ELLIPSIS, Value.ELLIPSIS).result().ret());
        assertEquals(0, call("listen", Value.of(3), Value.of(1)).result().ret());
        PacketBuilder b = new PacketBuilder();
        target.inject(b.tcp(o.remoteWireAddress(), o.localWireAddress(), 0, REMOTE_PORT, Flow.DEFAULT_PORT, 1000, 0,
                TcpFlags.SYN, 32792, 0, List.of(new TcpOptionSpec.Mss(1400)), 0));
        LivePacket synAck = sniff();
        assertEquals(TcpFlags.SYN | TcpFlags.ACK, synAck.flags());
        assertEquals(1001, synAck.ack());
        assertArrayEquals(o.localWireAddress(), synAck.src());
        assertArrayEquals(o.remoteWireAddress(), synAck.dst());
        target.inject(b.tcp(o.remoteWireAddress(), o.localWireAddress(), 0, REMOTE_PORT, Flow.DEFAULT_PORT, 1001,
                synAck.seq() + 1, TcpFlags.ACK, 65535, 0, List.of(), 0));
        return synAck;
    }

    @Test
    void overIpv6Tun0HasTheAddressAndAnAfInet6ListenerTalksIpv6() throws Exception {
        ScriptOptions o = options(IpVersion.IPV6);
        target = new KernelTarget();
        target.open(o);
        String ns = target.namespaceName();
        String addr = HostCommand.run(10, "ip", "netns", "exec", ns, "ip", "-6", "-o", "addr", "show", "dev", "tun0")
                .output();
        assertTrue(addr.contains("fd00:198:18::1/64") && !addr.contains("tentative"), addr);
        String route = HostCommand.run(10, "ip", "netns", "exec", ns, "ip", "-6", "route", "show", "default").output();
        assertTrue(route.contains("default via fd00:198:18::3 dev tun0"), route);
        String link = HostCommand.run(10, "ip", "netns", "exec", ns, "ip", "-o", "link", "show", "tun0").output();
        assertTrue(link.contains("mtu 1520"), link);
        target.start();
        LivePacket synAck = listenAndSyn(o);
        assertTrue(synAck.ipv6());
        assertEquals(new TcpOptionSpec.Mss(1460), synAck.options().get(0), "MTU 1520 less 60 bytes of headers");
        assertEquals(4, call("accept", Value.of(3), Value.ELLIPSIS, Value.ELLIPSIS).result().ret());
        assertEquals(1400, call("write", Value.of(4), Value.ELLIPSIS, Value.of(1400)).result().ret());
        LivePacket data = sniff();
        assertTrue(data.ipv6());
        assertEquals(1400, data.payloadLength(), "the peer's MSS");
        assertEquals(1400L, target.tcpInfo(4).get("tcpi_snd_mss"));
    }

    @Test
    void overIpv4MappedIpv6AnAfInet6SocketTalksIpv4() throws Exception {
        ScriptOptions o = options(IpVersion.IPV4_MAPPED_IPV6);
        target = new KernelTarget();
        target.open(o);
        target.start();
        LivePacket synAck = listenAndSyn(o);
        assertTrue(!synAck.ipv6(), "IPv4 on the wire");
        assertEquals(new TcpOptionSpec.Mss(1460), synAck.options().get(0));
        assertEquals(4, call("accept", Value.of(3), Value.ELLIPSIS, Value.ELLIPSIS).result().ret());
    }
}
