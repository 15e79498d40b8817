package dev.usnet.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.ipv6.Inet6Ifaddr.Origin;
import dev.usnet.core.pcap.PcapTap;
import dev.usnet.core.pcap.PcapWriter;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tap.HostCommand;
import dev.usnet.tap.TapDevice;
import dev.usnet.tap.Tun;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpState;
import dev.usnet.tools.iproute.Ipv6On;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * usnet's TCP against the Linux kernel's through TAP devices: a usnet client sends 50 MB to a kernel {@code socat}
 * server and a kernel {@code socat} client sends 50 MB to a usnet server; both ends' SHA-256 must match. Each
 * direction runs over a plain TAP (1448-byte segments) and over a TAP with IFF_VNET_HDR and TSO offloads (usnet
 * may send 64 KiB GSO super-segments, the kernel hands over its own), each over IPv4 and over IPv6 ({@link Family}).
 * The handshake is captured on usnet's TAP and decoded independently: both SYNs carry the MSS of a 1500-byte MTU
 * (1460 over IPv4, 1440 over IPv6), SACK-permitted, timestamps and a window scale in Linux's order (MSS, SACK_PERM,
 * TS, NOP, WS); every later usnet segment carries timestamps (and DF over IPv4); usnet's {@code TcpInfo} and the
 * kernel's {@code ss -tio} agree on ts, sack, wscale and the send MSS (1448, 1428); and the clean path sees (nearly)
 * no retransmissions.
 *
 * <p>One kernel namespace {@code usnet-tcpi-<pid>} holds the kernel side of both TAPs (198.18.60.2/24 and
 * 2001:db8:60::2/64 plain, 198.18.61.2/24 and 2001:db8:61::2/64 vnet_hdr); usnet is .1 and ::1 on each. IPv6
 * addresses are nodad on both sides, so they are usable at once. Everything is deleted by name in {@link #tearDown},
 * also after a failure. Needs root, /dev/net/tun, iproute2 and socat: skipped without them, a failure when CI=true.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TcpInteropTest {
    private static final String NS = "usnet-tcpi-" + ProcessHandle.current().pid();
    private static final int SIZE = 50 * 1024 * 1024;
    private static final int SERVER_PORT_LINUX = 5001;
    private static final int SERVER_PORT_USNET = 5002;
    private static final long TRANSFER_TIMEOUT_S = 120;
    /** Frames of each connection kept in its pcap: the handshake and the first data segments. */
    private static final int CAPTURE_FRAMES = 64;
    /** Retransmitted segments tolerated on this clean, loss-free path (expected: none; allows 0.1 %). */
    private static final long MAX_RETRANS = SIZE / 1448 / 1000;
    private static final Path CAPTURES = Path.of("target", "tcp-interop");

    /** How the TAP between usnet and the kernel is opened, and the subnets on it (one per family). */
    enum Variant {
        PLAIN("utcpi60", "198.18.60", "2001:db8:60", 0x02_00_5e_00_3c_01L, false),
        VNET_GSO("utcpi61", "198.18.61", "2001:db8:61", 0x02_00_5e_00_3d_01L, true);

        final String ifname;
        final String usnetIp;
        final String kernelIp;
        final String usnetIp6;
        final String kernelIp6;
        final long mac;
        final boolean vnetHdr;

        Variant(String ifname, String net4, String net6, long mac, boolean vnetHdr) {
            this.ifname = ifname;
            this.usnetIp = net4 + ".1";
            this.kernelIp = net4 + ".2";
            this.usnetIp6 = net6 + "::1";
            this.kernelIp6 = net6 + "::2";
            this.mac = mac;
            this.vnetHdr = vnetHdr;
        }
    }

    /** The network layer under TCP. */
    enum Family {
        INET(20, "IPv4"),
        INET6(40, "IPv6");

        /** What a SYN offers on the 1500-byte MTU: 1500 minus this IP header minus 20 bytes of TCP header. */
        final int synMss;
        final String label;

        Family(int ipHeader, String label) {
            this.synMss = 1500 - ipHeader - 20;
            this.label = label;
        }

        /** The MSS a sender uses with timestamps on every segment (12 bytes of options). */
        int sndMss() {
            return synMss - 12;
        }
    }

    /** One run: a family over a TAP variant. */
    record Case(Variant variant, Family family) {
        String usnetIp() {
            return family == Family.INET ? variant.usnetIp : variant.usnetIp6;
        }

        String kernelIp() {
            return family == Family.INET ? variant.kernelIp : variant.kernelIp6;
        }

        /** An address as socat and ss write it beside a port, and as ss filters take it (IPv6 in brackets). */
        String host(String ip) {
            return family == Family.INET ? ip : "[" + ip + "]";
        }

        String hostPort(String ip, int port) {
            return host(ip) + ":" + port;
        }

        /** socat's TCP address type for this family. */
        String socatTcp() {
            return family == Family.INET ? "TCP4" : "TCP6";
        }

        /** usnet's address as {@link CapturedSegment#src} holds it (over IPv6, its low 32 bits). */
        int usnetCaptured() {
            return family == Family.INET ? Ipv4Addr.parse(variant.usnetIp)
                    : (int) Ipv6Addr.parse(variant.usnetIp6).lo();
        }

        @Override
        public String toString() {
            return variant + " " + family.label;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(Family.values()).flatMap(f -> Stream.of(Variant.values()).map(v -> new Case(v, f)));
    }

    private final KernelTapFixture fx = new KernelTapFixture(NS, "TcpInteropTest");
    private NetStack stack;
    private Tcp tcp;
    private final TapDevice[] taps = new TapDevice[Variant.values().length];

    // ---- set-up and tear-down ----

    @BeforeAll
    void setUp() throws Exception {
        KernelTapFixture.requireTapAndNetns();
        KernelTapFixture.require(HostCommand.has("socat") && HostCommand.has("sha256sum") && HostCommand.has("ss"),
                "socat, sha256sum and ss (apt-get install socat coreutils iproute2)");
        Files.createDirectories(CAPTURES);
        fx.start("usnet-tcpi", 60);
        // The fixture's namespace starts with IPv6 off; this test wants it there and in usnet's namespace, whose
        // disable_ipv6 is 1 until something gives it IPv6.
        fx.kernel("sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=0");
        fx.kernel("sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=0");
        stack = fx.stack();
        fx.onLoop(() -> {
            Ipv6On.turnOn(stack, Set.of());
            return null;
        });
        for (Variant v : Variant.values()) {
            Tun.Options o = Tun.Options.inNetns(NS, v.ifname);
            if (v.vnetHdr) {
                o = o.withVnetHdr(true);
            }
            TapDevice tap = fx.attachTap(o, v.mac, v.usnetIp, v.kernelIp, t -> {
                // As the TAP negotiated: partial checksums with TUN_F_CSUM, 64 KiB super-frames with TSO4.
                int off = t.tun().offloads();
                t.setTxChecksumOffload(t.tun().vnetHdr() && (off & Tun.TUN_F_CSUM) != 0);
                t.setGsoOffload(t.tun().vnetHdr() && (off & Tun.TUN_F_TSO4) != 0);
            });
            taps[v.ordinal()] = tap;
            fx.onLoop(() -> stack.ipv6().addrconf().add(tap, Ipv6Addr.parse(v.usnetIp6), 64, Origin.STATIC, true,
                    stack.ipv6().runsDad(tap)));
            fx.kernel("ip", "-6", "addr", "add", v.kernelIp6 + "/64", "dev", v.ifname, "nodad");
            assertEquals(v.vnetHdr, tap.gsoOffload(), v + ": GSO offload as negotiated (offloads 0x"
                    + Integer.toHexString(tap.tun().offloads()) + ")");
        }
        tcp = fx.installTcp();
    }

    @AfterAll
    void tearDown() {
        fx.close();
    }

    // ---- usnet client -> Linux server ----

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void usnetClientSends50MbToALinuxServer(Case c) throws Exception {
        Variant v = c.variant();
        byte[] data = randomBytes(SIZE, 0x5eed_0000L + v.ordinal() + 16L * c.family().ordinal());
        String expected = sha256(data);
        Path srvOut = fx.tempFile("usnet-tcpi-srv", ".out");
        String listenAt = c.hostPort(c.kernelIp(), SERVER_PORT_LINUX);
        Process server = fx.start(srvOut, "sh", "-c", "socat -u " + c.socatTcp() + "-LISTEN:" + SERVER_PORT_LINUX
                + ",bind=" + c.host(c.kernelIp())
                + ",reuseaddr STDOUT | sha256sum");
        await("the kernel socat server to listen on " + listenAt, 10, () ->
                fx.kernelTry("ss", "-ltnH", "src", c.host(c.kernelIp()), "sport", "=", ":" + SERVER_PORT_LINUX).output()
                        .contains(listenAt));

        Capture cap = capture(c, "usnet-client");
        BulkSender sender = new BulkSender(data);
        TcpSock sock = fx.onLoop(() -> c.family() == Family.INET
                ? tcp.connect(Ipv4Addr.parse(v.kernelIp), SERVER_PORT_LINUX, sender)
                : tcp.connect(Ipv6Addr.parse(v.kernelIp6), SERVER_PORT_LINUX, sender));
        try {
            await("usnet's connect to complete", 10, () -> sender.connected || sender.closedWith != null);
            assertTrue(sender.connected, "connect failed: " + sender.closedWith);

            // While the connection idles (usnet has not sent yet), ask the kernel what it negotiated.
            KernelView linux = kernelView(c);

            long t0 = System.nanoTime();
            stack.scheduler().execute(() -> sender.pump(sock));
            await("the kernel server to receive everything", TRANSFER_TIMEOUT_S, () -> !server.isAlive(),
                    () -> "usnet wrote " + sender.offset + " bytes: " + sock.info().format(), c);
            long nanos = System.nanoTime() - t0;
            String got = Files.readString(srvOut, StandardCharsets.UTF_8).trim();
            assertEquals(0, server.exitValue(), "socat | sha256sum: " + got);
            // usnet sees the kernel's FIN after socat closes: usnet closes in turn.
            await("usnet to see the end of the stream", 10, () -> sender.eof || sender.closedWith != null,
                    () -> sock.info().format(), c);
            TcpInfo info = fx.onLoop(sock::info);
            cap.close();
            report(c, "usnet -> Linux", nanos, info, linux);

            assertEquals(expected, got.split("\\s+")[0], "SHA-256 of what the kernel received");
            assertEquals(SIZE, sender.offset, "usnet took every byte");
            assertTrue(sender.closedWith == null || sender.closedWith == TcpError.NONE, "closed with " + sender.closedWith);
            assertTrue(info.bytesAcked() >= SIZE, "usnet saw all of it acknowledged: " + info.format());
            checkInfo(c, info, linux);
            assertTrue(info.totalRetrans() <= MAX_RETRANS, "retransmissions on a clean path: " + info.format());
            checkHandshake(c, cap, true, info);
        } finally {
            cap.close();
            fx.onLoop(() -> {
                if (sock.state() != TcpState.CLOSED && sock.state() != TcpState.TIME_WAIT) {
                    sock.abort();
                }
                return null;
            });
            KernelTapFixture.kill(server);
        }
    }

    // ---- Linux client -> usnet server ----

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    @Timeout(value = 150, unit = TimeUnit.SECONDS)
    void linuxClientSends50MbToAUsnetServer(Case c) throws Exception {
        Variant v = c.variant();
        byte[] data = randomBytes(SIZE, 0xc0ffee_00L + v.ordinal() + 16L * c.family().ordinal());
        Path file = fx.tempFile("usnet-tcpi-data", ".bin");
        Files.write(file, data);
        HostCommand.Result sum = HostCommand.run(30, "sha256sum", file.toString());
        assertTrue(sum.ok(), sum.output());
        String expected = sum.output().trim().split("\\s+")[0];
        assertEquals(sha256(data), expected, "sha256sum agrees with Java about the file");

        HashingSink sink = new HashingSink();
        TcpListener listener = fx.onLoop(() -> c.family() == Family.INET
                ? tcp.listen(Ipv4Addr.parse(v.usnetIp), SERVER_PORT_USNET, 8, sink::accept)
                : tcp.listen(Ipv6Addr.parse(v.usnetIp6), SERVER_PORT_USNET, 8, sink::accept));
        Capture cap = capture(c, "usnet-server");
        long retrans0 = kernelRetransSegs();
        Path cliOut = fx.tempFile("usnet-tcpi-cli", ".out");
        long t0 = System.nanoTime();
        Process client = fx.start(cliOut, "socat", "-u", "FILE:" + file,
                c.socatTcp() + ":" + c.hostPort(c.usnetIp(), SERVER_PORT_USNET));
        try {
            await("the kernel's connection to be accepted", 10, () -> sink.sock != null || !client.isAlive());
            assertNotNull(sink.sock, "no connection accepted; socat: " + Files.readString(cliOut));
            // usnet has not read yet, so the connection is surely still there (the kernel fills usnet's window).
            KernelView linux = kernelView(c);
            stack.scheduler().execute(sink::resume);

            await("usnet to read to the end of the stream", TRANSFER_TIMEOUT_S, () -> sink.eof || sink.closedWith != null,
                    () -> "usnet read " + sink.bytes + " bytes: " + sink.sock.info().format(), c);
            long nanos = System.nanoTime() - t0;
            assertTrue(client.waitFor(10, TimeUnit.SECONDS), "socat client did not exit");
            assertEquals(0, client.exitValue(), "socat client: " + Files.readString(cliOut));
            TcpInfo info = fx.onLoop(sink.sock::info);
            long linuxRetrans = kernelRetransSegs() - retrans0;
            cap.close();
            report(c, "Linux -> usnet", nanos, info, linux);
            System.out.printf(Locale.ROOT, "  kernel RetransSegs during the transfer: %d%n", linuxRetrans);

            assertEquals(SIZE, sink.bytes, "bytes usnet received");
            assertEquals(expected, sink.hash(), "SHA-256 of what usnet received");
            assertTrue(sink.closedWith == null || sink.closedWith == TcpError.NONE, "closed with " + sink.closedWith);
            assertTrue(info.bytesReceived() >= SIZE, info.format());
            checkInfo(c, info, linux);
            assertTrue(linuxRetrans <= MAX_RETRANS, "the kernel retransmitted " + linuxRetrans + " segments to usnet");
            checkHandshake(c, cap, false, info);
        } finally {
            cap.close();
            fx.onLoop(() -> {
                listener.close();
                if (sink.sock != null && sink.sock.state() != TcpState.CLOSED && sink.sock.state() != TcpState.TIME_WAIT) {
                    sink.sock.abort();
                }
                return null;
            });
            KernelTapFixture.kill(client);
        }
    }

    // ---- checks ----

    /** usnet's TcpInfo and the kernel's ss agree: ts, sack, each side's window scale, the family's MSS both ways. */
    private static void checkInfo(Case c, TcpInfo info, KernelView linux) {
        int mss = c.family().sndMss();
        assertTrue(info.timestamps(), "usnet negotiated timestamps: " + info.format());
        assertTrue(info.sack(), "usnet negotiated SACK: " + info.format());
        assertTrue(info.wscaleSnd() > 0 && info.wscaleRcv() > 0, "window scaling both ways: " + info.format());
        assertEquals(mss, info.sndMss(), "usnet's send MSS (" + c.family().synMss + " - 12 bytes of timestamps): "
                + info.format());
        assertTrue(linux.ts && linux.sack, c + ": the kernel uses timestamps and SACK with usnet: " + linux.line);
        // The kernel's wscale:snd,rcv is usnet's rcv,snd.
        assertEquals(info.wscaleRcv(), linux.wscaleSnd, "usnet's shift as the kernel saw it: " + linux.line);
        assertEquals(info.wscaleSnd(), linux.wscaleRcv, "the kernel's shift as usnet saw it: " + linux.line);
        assertEquals(mss, linux.mss, "the kernel's send MSS: " + linux.line);
    }

    /**
     * The captured handshake: the opener's SYN and the answer's SYN-ACK in Linux's layout with the family's MSS, a
     * window scale each (matching TcpInfo), timestamps echoed; then every usnet segment with timestamps (and DF over
     * IPv4, which has the bit).
     */
    private void checkHandshake(Case c, Capture cap, boolean usnetOpens, TcpInfo info) throws IOException {
        Variant v = c.variant();
        boolean hasDf = c.family() == Family.INET;
        int port = usnetOpens ? SERVER_PORT_LINUX : SERVER_PORT_USNET;
        List<CapturedSegment> segs = CapturedSegment.read(cap.file).stream()
                .filter(s -> s.srcPort() == port || s.dstPort() == port).toList();
        String dump = cap.file + ":\n  " + String.join("\n  ", segs.stream().map(CapturedSegment::toString).toList());
        int usnet = c.usnetCaptured();
        CapturedSegment syn = segs.stream().filter(s -> s.syn() && !s.hasAck()).findFirst().orElse(null);
        CapturedSegment synAck = segs.stream().filter(s -> s.syn() && s.hasAck()).findFirst().orElse(null);
        assertNotNull(syn, "a SYN in " + dump);
        assertNotNull(synAck, "a SYN-ACK in " + dump);
        assertEquals(usnetOpens, syn.src() == usnet, "who sent the SYN: " + dump);
        assertEquals(usnetOpens, synAck.src() != usnet, "who sent the SYN-ACK: " + dump);
        for (CapturedSegment s : List.of(syn, synAck)) {
            String who = (s.src() == usnet ? "usnet's " : "the kernel's ") + (s.hasAck() ? "SYN-ACK" : "SYN");
            assertEquals(CapturedSegment.LINUX_SYN_OPTIONS, s.optionKinds(), who + " options in Linux's order: " + s);
            assertEquals(c.family().synMss, s.mss(), who + " MSS: " + s);
            assertTrue(s.sackPermitted(), who + " SACK-permitted: " + s);
            assertTrue(s.hasTimestamp() && s.tsVal() != 0, who + " timestamp: " + s);
            assertEquals(hasDf, s.df(), who + " DF: " + s);
            int expectWs = s.src() == usnet ? info.wscaleRcv() : info.wscaleSnd();
            assertEquals(expectWs, s.wscale(), who + " window scale vs usnet's TcpInfo " + info.format() + ": " + s);
        }
        assertEquals(0, syn.tsEcr(), "a SYN echoes no timestamp: " + syn);
        assertEquals(syn.tsVal(), synAck.tsEcr(), "the SYN-ACK echoes the SYN's TSval: " + synAck);
        assertEquals(syn.seq() + 1 & 0xffff_ffffL, synAck.ack(), "the SYN-ACK acknowledges the SYN");

        List<CapturedSegment> fromUsnet = segs.stream().filter(s -> s.src() == usnet && !s.syn()).toList();
        assertFalse(fromUsnet.isEmpty(), "usnet segments after the handshake in " + dump);
        for (CapturedSegment s : fromUsnet) {
            assertEquals(hasDf, s.df(), "usnet sets DF over IPv4: " + s);
            assertTrue(s.optionKinds().size() >= 3 && s.optionKinds().subList(0, 3).equals(List.of(1, 1, 8)),
                    "usnet's segment leads with NOP NOP TS as Linux's do: " + s);
            assertTrue(s.tsEcr() != 0, "usnet echoes the kernel's timestamp: " + s);
            assertEquals(0, s.flags() & CapturedSegment.RST, "no reset from usnet: " + s);
        }
        List<CapturedSegment> fromKernel = segs.stream().filter(s -> s.src() != usnet && !s.syn()).toList();
        for (CapturedSegment s : fromKernel) {
            assertTrue(s.hasTimestamp(), "the kernel keeps timestamps on: " + s);
        }
        CapturedSegment firstAck = fromUsnet.getFirst();
        if (usnetOpens) {
            assertEquals(synAck.tsVal(), firstAck.tsEcr(), "usnet's ACK echoes the SYN-ACK's TSval: " + firstAck);
            List<CapturedSegment> data = fromUsnet.stream().filter(s -> s.payloadLen() > 0).toList();
            assertTrue(data.size() >= 3, "the first data segments from usnet were captured: " + dump);
            int maxPayload = data.stream().mapToInt(CapturedSegment::payloadLen).max().orElse(0);
            if (v.vnetHdr) {
                assertTrue(maxPayload > info.sndMss(), "usnet sent GSO super-segments (largest payload " + maxPayload
                        + "): " + dump);
            } else {
                assertTrue(maxPayload <= c.family().sndMss(), "usnet kept to the MSS on a plain TAP: " + dump);
            }
        } else {
            // The kernel's SYN-ACK-completing ACK and data come from the kernel; usnet ACKs with timestamps.
            assertTrue(fromKernel.stream().anyMatch(s -> s.payloadLen() > 0), "kernel data captured: " + dump);
        }
        for (CapturedSegment s : segs) {
            if (!v.vnetHdr) {
                assertTrue(s.frameLen() <= 1514, "no frame above the MTU on a plain TAP: " + s);
            }
        }
    }

    private void report(Case c, String dir, long nanos, TcpInfo info, KernelView linux) {
        Variant v = c.variant();
        TapDevice tap = taps[v.ordinal()];
        String kstats = fx.kernelTry("sh", "-c", "cd /sys/class/net/" + v.ifname + "/statistics && echo rx_dropped $(cat rx_dropped)"
                + " tx_dropped $(cat tx_dropped)").output().trim();
        System.out.printf(Locale.ROOT, "TcpInteropTest %s %s: %d MB in %.2f s = %.2f Gbit/s%n  usnet: %s%n  kernel: %s%n"
                        + "  usnet tap: %s%n  kernel tap: %s%n", c, dir, SIZE >> 20, nanos / 1e9, SIZE * 8.0 / nanos,
                info.format(), linux.line, tap.tapStats(), kstats);
    }

    // ---- the kernel's side ----

    /** What {@code ss -tio} in the kernel namespace says about its end (ss lists ts and sack only with -o). */
    record KernelView(String line, boolean ts, boolean sack, int wscaleSnd, int wscaleRcv, int mss) {
        private static final Pattern WSCALE = Pattern.compile("\\bwscale:(\\d+),(\\d+)");
        private static final Pattern MSS = Pattern.compile("(?<![a-z_])mss:(\\d+)");

        static KernelView parse(String ss) {
            String line = ss.replaceAll("\\s+", " ").trim();
            assertFalse(line.isEmpty(), "ss found the kernel's end of the connection");
            Matcher w = WSCALE.matcher(line);
            Matcher m = MSS.matcher(line);
            boolean hasW = w.find();
            boolean hasM = m.find();
            return new KernelView(line, line.matches(".*\\bts\\b.*"), line.matches(".*\\bsack\\b.*"),
                    hasW ? Integer.parseInt(w.group(1)) : -1, hasW ? Integer.parseInt(w.group(2)) : -1,
                    hasM ? Integer.parseInt(m.group(1)) : -1);
        }
    }

    /** The kernel's end of the one established connection on the variant's TAP, once ss lists it. */
    private KernelView kernelView(Case c) throws InterruptedException {
        String[] out = new String[1];
        await("ss to list the kernel's end of the connection", 10, () -> {
            out[0] = fx.kernelTry("ss", "-tinoH", "state", "established", "src", c.host(c.kernelIp()),
                    "dst", c.host(c.usnetIp())).output();
            return !out[0].isBlank();
        });
        return KernelView.parse(out[0]);
    }

    /** Tcp RetransSegs of the kernel namespace (/proc/net/snmp is per namespace). */
    private long kernelRetransSegs() {
        String snmp = fx.kernel("cat", "/proc/net/snmp");
        String[] head = null;
        for (String l : snmp.split("\n")) {
            if (!l.startsWith("Tcp:")) {
                continue;
            }
            String[] f = l.trim().split("\\s+");
            if (head == null) {
                head = f;
            } else {
                for (int i = 1; i < head.length; i++) {
                    if (head[i].equals("RetransSegs")) {
                        return Long.parseLong(f[i]);
                    }
                }
            }
        }
        throw new AssertionError("no Tcp RetransSegs in /proc/net/snmp of " + NS + ":\n" + snmp);
    }

    // ---- usnet's side ----

    /** usnet's own capture of the variant's TAP, both directions, first {@value #CAPTURE_FRAMES} frames. */
    private final class Capture {
        final Path file;
        final PcapWriter writer;
        final PcapTap tap;
        final TapDevice dev;
        boolean closed;

        Capture(Case c, String what) throws Exception {
            this.file = CAPTURES.resolve(c.variant().name().toLowerCase(Locale.ROOT) + "-"
                    + c.family().name().toLowerCase(Locale.ROOT) + "-" + what + ".pcap");
            this.writer = new PcapWriter(file);
            this.dev = taps[c.variant().ordinal()];
            long epoch = System.currentTimeMillis() * 1_000_000L - stack.now();
            this.tap = new PcapTap(writer, PcapTap.Direction.INOUT, epoch, CAPTURE_FRAMES);
            fx.onLoop(() -> {
                dev.addTap(tap);
                return null;
            });
        }

        void close() throws Exception {
            if (closed) {
                return;
            }
            closed = true;
            fx.onLoop(() -> {
                dev.removeTap(tap);
                return null;
            });
            writer.close();
        }
    }

    private Capture capture(Case c, String what) throws Exception {
        return new Capture(c, what);
    }

    /** Writes all of its data as the send buffer takes it, then half-closes; reads (and drops) to the peer's FIN. */
    private static final class BulkSender implements TcpSock.Callbacks {
        private final ByteBuf data;
        private final byte[] drain = new byte[4096];
        volatile boolean connected;
        volatile boolean eof;
        volatile TcpError closedWith;
        volatile int offset;
        private boolean started;

        BulkSender(byte[] bytes) {
            this.data = Unpooled.wrappedBuffer(bytes);
        }

        @Override
        public void connected(TcpSock s) {
            connected = true;
        }

        @Override
        public void writable(TcpSock s) {
            if (started) {
                pump(s);
            }
        }

        void pump(TcpSock s) {
            started = true;
            int off = offset;
            while (off < SIZE) {
                int n = s.write(data, off, Math.min(256 * 1024, SIZE - off));
                if (n <= 0) {
                    break;
                }
                off += n;
            }
            offset = off;
            if (off == SIZE) {
                data.release();
                s.shutdownOutput();
                started = false;
            }
        }

        @Override
        public void readable(TcpSock s) {
            ByteBuf sink = Unpooled.wrappedBuffer(drain);
            try {
                int n;
                do {
                    sink.clear();
                    n = s.read(sink, drain.length);
                } while (n > 0);
                if (n < 0 && !eof) {
                    eof = true;
                    s.close();
                }
            } finally {
                sink.release();
            }
        }

        @Override
        public void closed(TcpSock s, TcpError error) {
            closedWith = error;
            if (data.refCnt() > 0) {
                data.release();
            }
        }
    }

    /** Accepts one connection and hashes everything it reads; holds off reading until {@link #resume}. */
    private static final class HashingSink implements TcpSock.Callbacks {
        private final MessageDigest md = newSha256();
        private final byte[] chunk = new byte[64 * 1024];
        volatile TcpSock sock;
        volatile long bytes;
        volatile boolean eof;
        volatile TcpError closedWith;
        private boolean reading;
        private String hash;

        void accept(TcpSock child) {
            if (sock != null) {
                child.abort();
                return;
            }
            child.setCallbacks(this);
            sock = child;
        }

        void resume() {
            reading = true;
            drain(sock);
        }

        @Override
        public void readable(TcpSock s) {
            if (reading) {
                drain(s);
            }
        }

        private void drain(TcpSock s) {
            ByteBuf buf = Unpooled.wrappedBuffer(chunk);
            try {
                while (true) {
                    buf.clear();
                    int n = s.read(buf, chunk.length);
                    if (n > 0) {
                        md.update(chunk, 0, n);
                        bytes += n;
                        continue;
                    }
                    if (n < 0 && !eof) {
                        hash = HexFormat.of().formatHex(md.digest());
                        eof = true;
                        s.close();
                    }
                    return;
                }
            } finally {
                buf.release();
            }
        }

        String hash() {
            return hash;
        }

        @Override
        public void closed(TcpSock s, TcpError error) {
            closedWith = error;
        }
    }

    // ---- small things ----

    private static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private static String sha256(byte[] data) {
        return HexFormat.of().formatHex(newSha256().digest(data));
    }

    private void await(String what, long timeoutS, BooleanSupplier cond) throws InterruptedException {
        await(what, timeoutS, cond, () -> "", null);
    }

    /**
     * Polls {@code cond}; on timeout fails with {@code what}, {@code usnetState} (evaluated on the loop) and, given
     * a variant, the kernel's {@code ss -ti} of its connections.
     */
    private void await(String what, long timeoutS, BooleanSupplier cond, Callable<String> usnetState, Case c)
            throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                String state;
                try {
                    state = fx.onLoop(usnetState);
                } catch (Exception e) {
                    state = "(state unavailable: " + e + ")";
                }
                if (c != null) {
                    state += "; kernel: " + fx.kernelTry("ss", "-tinoH", "dst", c.host(c.usnetIp())).output()
                            .replaceAll("\\s+", " ");
                }
                throw new AssertionError("timed out after " + timeoutS + " s waiting for " + what
                        + (state.isEmpty() ? "" : "; " + state));
            }
            Thread.sleep(5);
        }
    }
}
