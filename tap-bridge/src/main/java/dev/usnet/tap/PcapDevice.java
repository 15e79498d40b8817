package dev.usnet.tap;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import java.util.concurrent.atomic.AtomicLong;
import org.pcap4j.core.BpfProgram;
import org.pcap4j.core.PcapHandle;
import org.pcap4j.core.PcapNativeException;
import org.pcap4j.core.PcapNetworkInterface;
import org.pcap4j.core.Pcaps;
import org.pcap4j.core.RawPacketListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real NIC as a usnet device through libpcap (pcap4j): frames captured promiscuously on the interface
 * enter usnet; frames usnet transmits are injected. Only frames arriving at the interface are captured
 * (direction in), so usnet never sees its own injections. The handle is opened inside the kernel namespace
 * that holds the interface; a reader thread hands frames to the namespace's backlog.
 */
public final class PcapDevice extends Device {
    private static final Logger LOG = LoggerFactory.getLogger(PcapDevice.class);
    private static final int SNAPLEN = 65_536;

    private final String ifname;
    private final PcapHandle rx;
    private final PcapHandle tx;
    private final Thread reader;
    private final byte[] txScratch = new byte[SNAPLEN];
    private final AtomicLong captured = new AtomicLong();
    private final AtomicLong injected = new AtomicLong();
    private final AtomicLong injectErrors = new AtomicLong();
    private volatile boolean closed;

    private PcapDevice(String name, long mac, String ifname, PcapHandle rx, PcapHandle tx) {
        super("pcap", name, mac);
        this.ifname = ifname;
        this.rx = rx;
        this.tx = tx;
        this.reader = Thread.ofPlatform().daemon(true).name("usnet-pcap-" + ifname).unstarted(this::readLoop);
    }

    /**
     * Opens {@code ifname} in kernel namespace {@code netns} (null: usnet's own) and registers a device named
     * {@code name} in {@code stack}. The device's MAC is the interface's unless {@code mac} is non-zero.
     */
    public static PcapDevice open(NetStack stack, String name, String netns, String ifname, long mac) throws TunException {
        PcapDevice d = create(name, netns, ifname, mac);
        stack.register(d);
        return d;
    }

    /**
     * Opens the interface without registering the device anywhere; frames captured before the device joins a
     * namespace are dropped.
     */
    public static PcapDevice create(String name, String netns, String ifname, long mac) throws TunException {
        PcapHandle[] h;
        try {
            h = netns == null ? openHandles(ifname) : Tun.callInNetns(netns, () -> openHandles(ifname));
        } catch (PcapNativeException e) {
            throw new IllegalStateException("pcap " + ifname + ": " + e.getMessage()
                    + " (capturing needs CAP_NET_RAW; run as root or grant it)", e);
        }
        long m = mac;
        if (m == 0) {
            m = macOf(ifname, netns);
        }
        PcapDevice d = new PcapDevice(name, m, ifname, h[0], h[1]);
        d.reader.start();
        return d;
    }

    private static PcapHandle[] openHandles(String ifname) throws PcapNativeException {
        PcapNetworkInterface nif = Pcaps.getDevByName(ifname);
        if (nif == null) {
            throw new IllegalArgumentException("no network interface '" + ifname + "' for pcap in this namespace");
        }
        PcapHandle rx = new PcapHandle.Builder(ifname).snaplen(SNAPLEN)
                .promiscuousMode(PcapNetworkInterface.PromiscuousMode.PROMISCUOUS).timeoutMillis(10)
                .immediateMode(true).direction(PcapHandle.PcapDirection.IN).build();
        try {
            PcapHandle tx = nif.openLive(SNAPLEN, PcapNetworkInterface.PromiscuousMode.NONPROMISCUOUS, 10);
            // The inject handle must not buffer anything it would never read.
            tx.setFilter("less 1", BpfProgram.BpfCompileMode.OPTIMIZE);
            return new PcapHandle[] {rx, tx};
        } catch (Exception e) {
            rx.close();
            throw new IllegalStateException("cannot open " + ifname + " for injection: " + e.getMessage(), e);
        }
    }

    private static long macOf(String ifname, String netns) {
        try {
            String path = "/sys/class/net/" + ifname + "/address";
            String text = netns == null ? java.nio.file.Files.readString(java.nio.file.Path.of(path))
                    : Tun.callInNetns(netns, () -> {
                        // sysfs shows the namespace of the mounting process; ask the kernel via ip instead.
                        Process p = new ProcessBuilder("ip", "-o", "link", "show", ifname).redirectErrorStream(true).start();
                        String out = new String(p.getInputStream().readAllBytes());
                        p.waitFor();
                        int i = out.indexOf("link/ether ");
                        return i < 0 ? "" : out.substring(i + 11, i + 28);
                    });
            return dev.usnet.core.wire.MacAddr.parse(text.trim());
        } catch (Exception e) {
            return 0x02_00_00_00_00_00L | (java.util.concurrent.ThreadLocalRandom.current().nextLong() & 0xff_ffff_ffffL);
        }
    }

    private void readLoop() {
        RawPacketListener l = frame -> {
            NetStack s = stack();
            if (s == null || frame.length == 0) {
                return;
            }
            Packet p = Packet.allocate(Buffers.HEADROOM, frame.length);
            p.buf().writeBytes(frame);
            captured.incrementAndGet();
            s.netifRx(this, p);
        };
        try {
            rx.loop(-1, l);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (!closed) {
                LOG.warn("pcap {}: capture stopped: {}", ifname, e.toString());
                setUp(false);
            }
        }
    }

    @Override
    protected void xmit(Packet p) {
        int len = p.length();
        try {
            if (len > txScratch.length) {
                throw new IllegalArgumentException("frame of " + len + " bytes exceeds the pcap snap length");
            }
            synchronized (txScratch) {
                p.buf().getBytes(p.start(), txScratch, 0, len);
                tx.sendPacket(txScratch, len);
            }
            injected.incrementAndGet();
        } catch (Exception e) {
            injectErrors.incrementAndGet();
            stats().txDrop();
        } finally {
            p.release();
        }
    }

    public String interfaceName() {
        return ifname;
    }

    public long captured() {
        return captured.get();
    }

    public long injected() {
        return injected.get();
    }

    public long injectErrors() {
        return injectErrors.get();
    }

    @Override
    protected void destroy() {
        closed = true;
        try {
            rx.breakLoop();
        } catch (Exception ignored) {
            // The loop may already have ended.
        }
        try {
            reader.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        rx.close();
        tx.close();
    }
}
