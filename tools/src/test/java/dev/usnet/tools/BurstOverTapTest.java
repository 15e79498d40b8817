package dev.usnet.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tap.TapDevice;
import dev.usnet.tap.Tun;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpTrace;
import dev.usnet.tcp.app.AppConfig;
import dev.usnet.tcp.app.AppResult;
import dev.usnet.tcp.app.BurstApp;
import dev.usnet.tcp.cc.KernelPreset;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The burst app in real time over a TAP against a Linux receiver: usnet's {@link BurstApp.Client} (CUBIC,
 * {@code usnet.tcp.kernel=3.19}, a {@link TcpTrace} attached) sends 20 bursts of 256 KiB with 20 ms of compute
 * between them to a small Python server in a kernel namespace that does what {@link BurstApp.Server} does: read
 * exactly one burst, answer with one byte, until the end of stream. Every burst must complete, the histogram and
 * the trace must be filled, timestamps and SACK must be negotiated on both ends (usnet's {@code TcpInfo}, the
 * kernel's {@code TCP_INFO} as the script reads it), and the kernel must have received every byte.
 *
 * <p>The kernel namespace {@code usnet-burst-<pid>} holds the kernel side of the TAP {@code utcpb62}
 * (198.18.62.2/24); usnet is 198.18.62.1. Everything is deleted by name in {@link #tearDown}, also after a
 * failure. Needs root, /dev/net/tun, iproute2 and /usr/bin/python3: skipped without them, a failure when CI=true.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BurstOverTapTest {
    private static final String NS = "usnet-burst-" + ProcessHandle.current().pid();
    private static final String IFNAME = "utcpb62";
    private static final String USNET_IP = "198.18.62.1";
    private static final String KERNEL_IP = "198.18.62.2";
    private static final int USNET_ADDR = Ipv4Addr.parse(USNET_IP);
    private static final int KERNEL_ADDR = Ipv4Addr.parse(KERNEL_IP);
    private static final long MAC = 0x02_00_5e_00_3e_01L;
    private static final Path PYTHON = Path.of("/usr/bin/python3");
    private static final int PORT = 5003;
    private static final int BURSTS = 20;
    private static final int BURST_BYTES = 256 * 1024;
    private static final long COMPUTE_NANOS = 20_000_000L;
    private static final long RUN_TIMEOUT_S = 60;

    /**
     * The Linux receiver, BurstApp.Server's protocol: accept one connection, read exactly N bytes, answer with
     * ACK bytes, repeat until the end of stream; then print the totals and close. It prints the kernel's
     * TCP_INFO (tcpi_options, the window scales, the MSS, tcpi_total_retrans) after the accept and at the end.
     * Arguments: address, port, N, ACK.
     */
    private static final String RECEIVER = """
            import socket, struct, sys
            host, port, n, ack = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
            ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind((host, port))
            ls.listen(1)
            print('listening', flush=True)
            ls.settimeout(30)
            c, peer = ls.accept()
            ls.close()
            c.settimeout(30)
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def info():
                b = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
                mss, rmss = struct.unpack_from('=II', b, 16)
                retr = struct.unpack_from('=I', b, 100)[0]
                return 'options=%d snd_wscale=%d rcv_wscale=%d snd_mss=%d rcv_mss=%d total_retrans=%d' % (
                    b[5], b[6] & 15, b[6] >> 4, mss, rmss, retr)

            print('accepted %s:%d %s' % (peer[0], peer[1], info()), flush=True)
            buf = memoryview(bytearray(n))
            total = bursts = 0
            while True:
                got = 0
                while got < n:
                    k = c.recv_into(buf[got:], n - got)
                    if k == 0:
                        break
                    got += k
                total += got
                if got < n:
                    break
                c.sendall(b'a' * ack)
                bursts += 1
            print('eof bursts=%d bytes=%d partial=%d %s' % (bursts, total, got, info()), flush=True)
            c.close()
            """;

    private static final Pattern ACCEPTED = Pattern.compile(
            "accepted (\\S+):(\\d+) options=(\\d+) snd_wscale=(\\d+) rcv_wscale=(\\d+) snd_mss=(\\d+) rcv_mss=(\\d+)");
    private static final Pattern EOF = Pattern.compile(
            "eof bursts=(\\d+) bytes=(\\d+) partial=(\\d+) .*total_retrans=(\\d+)");
    /** tcpi_options bits (linux/tcp.h). */
    private static final int TCPI_OPT_TIMESTAMPS = 1;
    private static final int TCPI_OPT_SACK = 2;
    private static final int TCPI_OPT_WSCALE = 4;

    private final KernelTapFixture fx = new KernelTapFixture(NS, "BurstOverTapTest");
    private NetStack stack;
    private Tcp tcp;
    private TapDevice tap;

    // ---- set-up and tear-down ----

    @BeforeAll
    void setUp() throws Exception {
        KernelTapFixture.requireTapAndNetns();
        KernelTapFixture.require(Files.isExecutable(PYTHON), PYTHON + " (apt-get install python3)");
        fx.start("usnet-burst", 62);
        stack = fx.stack();
        // A plain TAP born in the kernel namespace; the stack and the TAP share the one loop.
        tap = fx.attachTap(Tun.Options.inNetns(NS, IFNAME), MAC, USNET_IP, KERNEL_IP, t -> {
            t.setTxChecksumOffload(false);
            t.setGsoOffload(false);
        });
        tcp = fx.installTcp();
    }

    @AfterAll
    void tearDown() {
        fx.close();
    }

    // ---- the test ----

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void burstClientCompletesEveryBurstAgainstALinuxReceiver() throws Exception {
        Path script = fx.tempFile("usnet-burst-rcv", ".py");
        Files.writeString(script, RECEIVER, StandardCharsets.UTF_8);
        Path out = fx.tempFile("usnet-burst-rcv", ".out");
        Process receiver = fx.start(out, PYTHON.toString(), script.toString(), KERNEL_IP, Integer.toString(PORT),
                Integer.toString(BURST_BYTES), "1");
        await("the Linux receiver to listen on " + KERNEL_IP + ":" + PORT, 10,
                () -> read(out).contains("listening") || !receiver.isAlive());
        assertTrue(receiver.isAlive(), "the Linux receiver exited: " + read(out));

        // Connections made from now on take the 3.19 congestion-avoidance switches.
        fx.onLoop(() -> {
            stack.knobs().set("usnet.tcp.kernel", "3.19");
            return null;
        });
        assertEquals(KernelPreset.V3_19.switches(), fx.onLoop(tcp::ccSwitches), "usnet.tcp.kernel=3.19 in force");

        List<BurstApp.Burst> bursts = Collections.synchronizedList(new ArrayList<>());
        AppConfig cfg = AppConfig.defaults().withPort(PORT).withCount(BURSTS).withCongestionControl("cubic");
        BurstApp.Client client = BurstApp.client(stack, KERNEL_ADDR, cfg,
                BurstApp.Params.of(BURST_BYTES, COMPUTE_NANOS)).observer(bursts::add);
        TcpTrace trace = new TcpTrace();
        fx.onLoop(() -> client.setTrace(trace));
        long t0 = System.nanoTime();
        AppResult r;
        try {
            client.start().get(10, TimeUnit.SECONDS);
            try {
                r = client.completion().get(RUN_TIMEOUT_S, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                String state = fx.onLoop(() -> client + ", " + client.bursts() + " bursts, "
                        + (client.socket() == null ? "no socket" : client.socket().info().format()));
                throw new AssertionError("the burst client did not finish in " + RUN_TIMEOUT_S + " s: " + state
                        + "; receiver: " + read(out) + "; kernel: "
                        + fx.kernelTry("ss", "-tinoH", "dst", USNET_IP).output().replaceAll("\\s+", " "));
            }
        } finally {
            if (!client.isDone()) {
                client.abort();
            }
        }
        long wallNanos = System.nanoTime() - t0;
        // A clean end comes after the receiver's FIN: the receiver printed its totals and is exiting.
        boolean receiverExited = r.error() == TcpError.NONE && receiver.waitFor(10, TimeUnit.SECONDS);
        String kernelOut = read(out);
        String csv = fx.onLoop(() -> {
            StringWriter w = new StringWriter();
            trace.writeCsv(w);
            return w.toString();
        });
        int rows = fx.onLoop(trace::rows);
        report(r, bursts, rows, wallNanos, kernelOut);

        // usnet's side: every burst completed, in order, each taking some time.
        assertEquals(TcpError.NONE, r.error(), r.format() + "; receiver: " + kernelOut);
        assertTrue(receiverExited, "the Linux receiver did not exit: " + kernelOut);
        assertEquals(BURSTS, r.operations(), r.format());
        assertEquals(BURSTS, bursts.size(), "bursts the observer saw");
        for (int i = 0; i < BURSTS; i++) {
            BurstApp.Burst b = bursts.get(i);
            assertEquals(i, b.index(), "burst order: " + b);
            assertEquals(BURST_BYTES, b.bytes(), b.toString());
            assertTrue(b.completionNanos() > 0, "burst " + i + " completion time: " + b);
            if (i > 0) {
                assertTrue(b.startNanos() - bursts.get(i - 1).endNanos() >= COMPUTE_NANOS,
                        "compute phase before burst " + i + ": " + b);
            }
        }
        assertNotNull(r.histogram(), r.format());
        assertEquals(BURSTS, r.histogram().getTotalCount(), "histogram count");
        assertEquals(BURSTS, r.latency().count(), r.format());
        assertTrue(r.histogram().getMinValue() > 0, "completion times > 0: " + r.latency().format());
        assertEquals((long) BURSTS * BURST_BYTES, r.bytesSent(), r.format());
        assertEquals(BURSTS, r.bytesReceived(), "one answer byte per burst: " + r.format());
        assertTrue(r.durationNanos() >= (BURSTS - 1) * COMPUTE_NANOS, "19 compute phases: " + r.format());

        // The trace.
        assertTrue(rows > 0, "trace rows");
        assertTrue(csv.startsWith("time_us,cwnd,ssthresh,snd_cwnd_cnt,srtt_us,inflight,ca_state,event\n"),
                "trace CSV header: " + csv.lines().findFirst().orElse(""));
        assertEquals(rows + 1, csv.lines().count(), "one CSV line per trace row plus the header");

        // What usnet negotiated with Linux.
        TcpInfo info = r.info();
        assertNotNull(info, r.format());
        assertEquals("cubic", info.congestionControl(), info.format());
        assertTrue(info.timestamps(), "timestamps negotiated: " + info.format());
        assertTrue(info.sack(), "SACK negotiated: " + info.format());
        assertTrue(info.wscaleSnd() >= 0 && info.wscaleRcv() >= 0, "window scaling negotiated: " + info.format());
        assertEquals(1448, info.sndMss(), "MSS 1460 less the timestamp option: " + info.format());
        assertTrue(info.bytesAcked() >= (long) BURSTS * BURST_BYTES, "everything acknowledged: " + info.format());

        // What the kernel saw: the same options on its end, and every byte.
        Matcher acc = ACCEPTED.matcher(kernelOut);
        assertTrue(acc.find(), "the receiver's accept line: " + kernelOut);
        assertEquals(USNET_IP, acc.group(1), "the kernel's peer");
        int options = Integer.parseInt(acc.group(3));
        assertTrue((options & TCPI_OPT_TIMESTAMPS) != 0, "the kernel's tcpi_options has timestamps: " + kernelOut);
        assertTrue((options & TCPI_OPT_SACK) != 0, "the kernel's tcpi_options has SACK: " + kernelOut);
        assertTrue((options & TCPI_OPT_WSCALE) != 0, "the kernel's tcpi_options has window scaling: " + kernelOut);
        // The kernel's tcpi_snd_wscale is the shift usnet advertised, its tcpi_rcv_wscale its own.
        assertEquals(info.wscaleRcv(), Integer.parseInt(acc.group(4)), "usnet's window scale as the kernel has it: "
                + kernelOut + " vs " + info.format());
        assertEquals(info.wscaleSnd(), Integer.parseInt(acc.group(5)), "the kernel's window scale as usnet has it: "
                + kernelOut + " vs " + info.format());
        Matcher eof = EOF.matcher(kernelOut);
        assertTrue(eof.find(), "the receiver's end-of-stream line: " + kernelOut);
        assertEquals(BURSTS, Integer.parseInt(eof.group(1)), "bursts the kernel answered: " + kernelOut);
        assertEquals((long) BURSTS * BURST_BYTES, Long.parseLong(eof.group(2)), "bytes the kernel read: " + kernelOut);
        assertEquals(0, Integer.parseInt(eof.group(3)), "no partial burst at the end: " + kernelOut);
        assertEquals(0, receiver.exitValue(), "the receiver's exit status: " + kernelOut);
    }

    private void report(AppResult r, List<BurstApp.Burst> bursts, int rows, long wallNanos, String kernelOut) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "BurstOverTapTest: %d bursts of %d KiB, %d ms compute, CUBIC, "
                + "usnet.tcp.kernel=3.19, %.2f s wall%n  %s%n  usnet: %s%n  completions (us):", BURSTS,
                BURST_BYTES >> 10, COMPUTE_NANOS / 1_000_000, wallNanos / 1e9, r.format(),
                r.info() == null ? "-" : r.info().format()));
        synchronized (bursts) {
            for (BurstApp.Burst x : bursts) {
                b.append(String.format(Locale.ROOT, " %.0f", x.completionNanos() / 1e3));
            }
        }
        b.append(String.format(Locale.ROOT, "%n  trace rows: %d, tap: %s%n  kernel receiver: %s", rows,
                tap.tapStats(), kernelOut.strip().replace("\n", "\n    ")));
        System.out.println(b);
    }

    // ---- small things ----

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(cannot read " + p + ": " + e + ")";
        }
    }

    private static void await(String what, long timeoutS, BooleanSupplier cond) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("timed out after " + timeoutS + " s waiting for " + what);
            }
            Thread.sleep(5);
        }
    }
}
