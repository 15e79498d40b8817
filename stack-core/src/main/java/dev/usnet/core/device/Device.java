package dev.usnet.core.device;

import dev.usnet.core.buf.ChecksumState;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.buf.PacketDevice;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.netem.LinkEmulation;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.netem.NetemSysctl;
import dev.usnet.core.stats.DeviceStats;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.LatencyPaths;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.MacAddr;

/**
 * A network device (struct net_device): receives frames from its driver side, transmits frames the stack
 * hands it, counts both, and lets taps see them. Subclasses implement only {@link #xmit}
 * (ndo_start_xmit).
 */
public abstract class Device implements PacketDevice {
    private final String kind;
    private volatile String name;
    private int ifindex;
    private volatile DeviceHost stack;
    private long mac;
    private volatile int mtu = 1500;
    private volatile boolean up;
    private volatile boolean promisc;
    private volatile boolean txChecksumOffload;
    private volatile boolean gsoOffload;
    // Generic receive offload (ethtool -K dev gro on): the device's GRO state, null while the feature is off.
    private volatile Gro gro;
    private volatile int neededHeadroom;
    private volatile RxHandler rxHandler;
    private volatile Object rxHandlerData;
    private volatile Device master;
    private volatile DevConf conf;
    private final DeviceStats stats = new DeviceStats();
    // Copied on change (rare), read per frame without allocating; one shared empty array until a tap is added.
    private volatile PacketTap[] taps = NO_TAPS;
    private static final PacketTap[] NO_TAPS = new PacketTap[0];
    private final Object netemLock = new Object();
    private volatile LinkEmulation netem;
    // The latency path the last packet leaving here took: a flood or a flow sends most packets the way the one
    // before went, so the namespace's path table is only searched when the ingress device changes. Namespace
    // thread only; forgotten when the device changes namespace.
    private LatencyPaths.Path lastPath;

    protected Device(String kind, String name, long mac) {
        this.kind = kind;
        this.name = name;
        this.mac = mac;
    }

    /** "veth", "bridge", "loopback", "tap", ... as {@code ip -d link} shows it. */
    public String kind() {
        return kind;
    }

    public String name() {
        return name;
    }

    public void rename(String newName) {
        this.name = newName;
    }

    public int ifindex() {
        return ifindex;
    }

    /**
     * The namespace the device is in, or null, as the caller's namespace type: devices sit below the namespace
     * and know it only as a {@link DeviceHost}; code above names the namespace class it knows it to be.
     */
    @SuppressWarnings("unchecked")
    public <H extends DeviceHost> H stack() {
        return (H) stack;
    }

    /** Called by a namespace when the device joins it (also on a move between namespaces). */
    public void attach(DeviceHost stack, int ifindex) {
        // Like a qdisc on a device that leaves its namespace: the emulation and what it holds go.
        LinkEmulation ne;
        synchronized (netemLock) {
            ne = netem;
            netem = null;
        }
        if (ne != null) {
            ne.close();
        }
        this.stack = stack;
        this.ifindex = ifindex;
        this.lastPath = null;
        this.conf = stack == null ? null : stack.knobs().dev(name);
    }

    /** This device's {@code net.ipv4.conf.<dev>.*} and {@code neigh.<dev>.*} settings in its namespace. */
    public DevConf conf() {
        return conf;
    }

    public long mac() {
        return mac;
    }

    public void setMac(long mac) {
        this.mac = mac;
    }

    public int mtu() {
        return mtu;
    }

    public void setMtu(int mtu) {
        if (mtu < 68 || mtu > 65535) {
            throw new IllegalArgumentException(name + ": MTU " + mtu + " out of range 68..65535");
        }
        this.mtu = mtu;
    }

    public boolean isUp() {
        return up;
    }

    /** Taking a device down drops what its link emulation holds (a qdisc reset). */
    public void setUp(boolean up) {
        boolean was = this.up;
        this.up = up;
        LinkEmulation ne = netem;
        if (!up && ne != null) {
            ne.purge();
        }
        if (was != up) {
            Device m = master;
            if (!up && m != null) {
                m.portDown(this);
            }
            notifyLinkChanged();
        }
    }

    /**
     * {@code port}, enslaved to this device, went down or lost its carrier (NETDEV_DOWN, NETDEV_CHANGE): a bridge
     * forgets what it learned behind it, so traffic for those addresses floods to the other ports at once.
     */
    protected void portDown(Device port) {
    }

    /**
     * {@code port}, enslaved to this device, leaves its namespace (deleted or moved; ndo_del_slave): a bridge
     * removes the port. Nothing for a device that has no ports.
     */
    public void releasePort(Device port) {
    }

    /** Tells whoever monitors this device's namespace that its state or carrier changed (RTM_NEWLINK). */
    protected final void notifyLinkChanged() {
        DeviceHost s = stack;
        if (s == null) {
            return;
        }
        s.netdevChanged(this);
        LinkListener l = s.listener();
        if (l != null) {
            l.linkChanged(this);
        }
    }

    /** Link-layer carrier (IFF_LOWER_UP): a veth has it only while its peer is up. */
    public boolean hasCarrier() {
        return up;
    }

    public boolean isPromisc() {
        return promisc;
    }

    public void setPromisc(boolean promisc) {
        this.promisc = promisc;
    }

    /** The tx-checksumming offload feature ({@code ethtool -K dev tx on|off}). */
    public boolean txChecksumOffload() {
        return txChecksumOffload;
    }

    /** Switching it off must really switch it off: later packets get complete checksums in software. */
    public void setTxChecksumOffload(boolean on) {
        this.txChecksumOffload = on;
    }

    /** Generic segmentation offload: may be handed super-frames larger than the MTU. */
    public boolean gsoOffload() {
        return gsoOffload;
    }

    public void setGsoOffload(boolean on) {
        this.gsoOffload = on;
    }

    /**
     * The generic-receive-offload feature ({@code ethtool -K dev gro on|off}): frames taken off the receive
     * backlog for this device go through {@link Gro} first. Off by default (docs/data-plane.md, "GRO").
     */
    public boolean groEnabled() {
        return gro != null;
    }

    /**
     * Turns GRO on or off. Turning it off while a backlog run holds packets cannot happen (runs and settings share
     * the namespace thread in virtual time; in real time a flow held during the change is flushed at the run's end).
     */
    public void setGro(boolean on) {
        if (on && gro == null) {
            gro = new Gro(this);
        } else if (!on && gro != null && gro.heldFlows() == 0) {
            gro = null;
        }
    }

    /** This device's GRO state and counters, or null while the feature is off. */
    public Gro gro() {
        return gro;
    }

    /**
     * dev->needed_headroom: bytes the device needs in front of the link-layer header beyond it (a tunnel's outer
     * headers, say), so that what it transmits can be prepended to in place.
     */
    public int neededHeadroom() {
        return neededHeadroom;
    }

    public void setNeededHeadroom(int bytes) {
        if (bytes < 0 || bytes > MAX_NEEDED_HEADROOM) {
            throw new IllegalArgumentException(name + ": needed_headroom " + bytes + " out of range 0.."
                    + MAX_NEEDED_HEADROOM);
        }
        this.neededHeadroom = bytes;
    }

    /** Upper bound of {@link #setNeededHeadroom}: Linux keeps needed_headroom in an unsigned short. */
    public static final int MAX_NEEDED_HEADROOM = 65535;

    /**
     * IFF_NOARP: a layer-3 device (a TUN) has no link-layer addresses to resolve, so the neighbour layer hands it
     * packets for any next hop at once. Its frames still carry an Ethernet slot, which such a device ignores.
     */
    public boolean noArp() {
        return false;
    }

    /** dev->hard_header_len: every usnet device speaks Ethernet. */
    public int hardHeaderLen() {
        return EthernetFrame.HEADER_LEN;
    }

    /**
     * LL_RESERVED_SPACE(dev): the headroom in front of the network header a packet must have to leave by this
     * device without being copied, (hard_header_len + needed_headroom) rounded down to HH_DATA_MOD (16) plus
     * HH_DATA_MOD: 16 for plain Ethernet, 80 with VXLAN's 50.
     */
    public int llReservedSpace() {
        return ((hardHeaderLen() + neededHeadroom) & ~(HH_DATA_MOD - 1)) + HH_DATA_MOD;
    }

    private static final int HH_DATA_MOD = 16;

    public DeviceStats stats() {
        return stats;
    }

    public RxHandler rxHandler() {
        return rxHandler;
    }

    public void setRxHandler(RxHandler h) {
        this.rxHandler = h;
    }

    /**
     * dev->rx_handler_data: what the rx_handler keeps on the device (a bridge, its port), so it finds it in O(1)
     * per frame rather than searching its ports.
     */
    public Object rxHandlerData() {
        return rxHandlerData;
    }

    public void setRxHandlerData(Object data) {
        this.rxHandlerData = data;
    }

    /** The bridge this device is a port of, or null. */
    public Device master() {
        return master;
    }

    public void setMaster(Device master) {
        this.master = master;
    }

    public synchronized void addTap(PacketTap tap) {
        PacketTap[] t = java.util.Arrays.copyOf(taps, taps.length + 1);
        t[t.length - 1] = tap;
        taps = t;
    }

    public synchronized void removeTap(PacketTap tap) {
        PacketTap[] t = taps;
        for (int i = 0; i < t.length; i++) {
            if (t[i] == tap) {
                PacketTap[] n = new PacketTap[t.length - 1];
                System.arraycopy(t, 0, n, 0, i);
                System.arraycopy(t, i + 1, n, i, t.length - i - 1);
                taps = t.length == 1 ? NO_TAPS : n;
                return;
            }
        }
    }

    /**
     * A frame arrives from the wire side (netif_receive_skb): stamped, counted, shown to taps, then given
     * to the rx_handler (bridge) or the namespace's protocol demux. Runs on the namespace's thread.
     */
    public final void receive(Packet p) {
        if (rxAccount(p)) {
            deliver(p);
        }
    }

    /**
     * A frame the receive backlog run took off for this device (the driver's poll, napi_gro_receive): received
     * and counted as {@link #receive} does, then, with GRO on, possibly held and merged with the frames behind it
     * until the run ends ({@link Gro#flush}). The device counters count wire frames, as a driver does; taps and
     * everything above see what GRO delivers.
     */
    public final void napiReceive(Packet p) {
        Gro g = gro;
        if (g == null) {
            receive(p);
        } else if (rxAccount(p)) {
            g.receive(p);
        }
    }

    /** Stamps and counts a frame arriving; false (frame dropped) when the device is down or has no namespace. */
    private boolean rxAccount(Packet p) {
        DeviceHost s = stack;
        if (!up || s == null) {
            stats.rxDrop();
            dropDown(p, s);
            return false;
        }
        p.setDev(this);
        p.setFlooded(false);
        p.setRxTimeNanos(s.now());
        int len = p.length();
        boolean mcast = len >= EthernetFrame.HEADER_LEN && MacAddr.isMulticast(MacAddr.get(p.buf(), p.start()));
        stats.rx(len, mcast);
        return true;
    }

    /** netif_receive_skb after the driver: taps see the frame, then the rx_handler (bridge) or the protocols. */
    final void deliver(Packet p) {
        DeviceHost s = stack;
        for (PacketTap t : taps) {
            t.tap(this, p, false, p.rxTimeNanos());
        }
        RxHandler h = rxHandler;
        if (h != null && h.handleFrame(this, p)) {
            return;
        }
        s.l2Receive(p);
    }

    /**
     * The stack hands a complete frame to the device (dev_queue_xmit): checksum completed in software when
     * the device does not offload it, latency recorded for the path it took (the stack's part, before any link
     * emulation), through the device's link emulation when it has one ({@code usnet.netem.<dev>.*}), then
     * tapped, counted and sent.
     */
    public final void transmit(Packet p) {
        DeviceHost s = stack;
        if (!up || !hasCarrier()) {
            stats.txDrop();
            dropDown(p, s);
            return;
        }
        if (p.isGso() && !gsoOffload && GsoSegmentation.segment(this, p)) {
            // Never hand a super-frame to a device that did not enable GSO: its segments went out instead.
            return;
        }
        if (p.csumState() == ChecksumState.PARTIAL && !txChecksumOffload) {
            completeChecksum(p, s);
        }
        long now = s.now();
        recordPath(p, s, now);
        DevConf c = conf;
        NetemParams np = c == null ? null : NetemSysctl.NETEM.get(c);
        LinkEmulation ne = netem;
        if (np != null || (ne != null && ne.queueLength() > 0)) {
            // Link emulation (the device's netem qdisc); with its settings removed, what it still holds
            // leaves first, in order.
            if (ne == null) {
                ne = createNetem(s);
            }
            if (ne != null) {
                ne.enqueue(p, np != null ? np : NetemParams.NONE);
                return;
            }
        }
        send(p, now);
    }

    /**
     * A packet received on another device of this namespace leaves through this one: its forwarding latency
     * (receive stamp to now), size and copy-on-write bytes go to the path {@code in->this}. Routed and bridged
     * packets reach {@link #transmit} this way; a bridge also calls it for a frame it delivers to its own stack.
     * The receive stamp is set with the device ({@link #receive}), so a device, not a non-zero stamp, tells a
     * received packet from a local one: in virtual time the first packets are received at time 0. Allocates
     * nothing once the path exists.
     */
    protected final void recordPath(Packet p, DeviceHost s, long now) {
        Device in = p.dev();
        if (in != null && in != this && in.stack == s) {
            boolean flooded = p.isFlooded();
            LatencyPaths.Path path = lastPath;
            if (path == null || path.inIfindex() != in.ifindex || path.isFlood() != flooded) {
                // A flooded copy goes to its ingress port's flood path: a path per (ingress, egress) pair would make
                // every broadcast of N ports N paths, and N containers that each ARP once N² of them.
                path = flooded ? s.latency().floodPath(in.ifindex, in.name) : s.latency().path(in.ifindex, ifindex, in.name, name);
                lastPath = path;
            }
            path.record(now, now - p.rxTimeNanos(), p.length(), p.cowBytes());
        }
    }

    /** After the qdisc: taps see the frame (dev_queue_xmit_nit), it is counted and handed to the driver. */
    private void send(Packet p, long now) {
        for (PacketTap t : taps) {
            t.tap(this, p, true, now);
        }
        stats.tx(p.length());
        xmit(p);
    }

    /** A frame meeting a down device: counted as DEV_DOWN in its namespace, or just freed when it has none. */
    private static void dropDown(Packet p, DeviceHost s) {
        if (s != null) {
            s.drop(p, DropReason.DEV_DOWN);
        } else {
            p.release();
        }
    }

    /** A frame leaving the link emulation: the device may have gone down or lost its peer meanwhile. */
    private void netemOutput(Packet p) {
        DeviceHost s = stack;
        if (s == null || !up || !hasCarrier()) {
            stats.txDrop();
            dropDown(p, s);
            return;
        }
        send(p, s.now());
    }

    private LinkEmulation createNetem(DeviceHost s) {
        synchronized (netemLock) {
            LinkEmulation ne = netem;
            if (ne == null && stack == s) {
                // What it drops is a transmit drop here, counted in the namespace it was created in.
                LinkEmulation.TxDrop txDrop = (q, reason) -> {
                    stats.txDrop();
                    s.drop(q, reason);
                };
                ne = new LinkEmulation(name, s.name(), s.seed(), s.scheduler(), txDrop, this::netemOutput);
                netem = ne;
            }
            return ne;
        }
    }

    /**
     * This device's link emulation with its counters and queue, or null when none was ever asked for in its
     * current namespace.
     */
    public LinkEmulation netem() {
        return netem;
    }

    /** This device's link-emulation settings ({@code usnet.netem.<dev>.*}); {@link NetemParams#NONE} when none. */
    public NetemParams netemParams() {
        DevConf c = conf;
        NetemParams p = c == null ? null : NetemSysctl.NETEM.get(c);
        return p == null ? NetemParams.NONE : p;
    }

    /**
     * Sets this device's link emulation ({@code tc qdisc replace dev DEV root netem ...}): the same as setting
     * its {@code usnet.netem.<dev>.*} knobs, in its namespace. Applies to frames sent afterwards; frames
     * already held keep their departure times. {@link NetemParams#NONE} removes it.
     */
    public void setNetem(NetemParams params) {
        DeviceHost s = stack;
        if (s == null) {
            throw new IllegalStateException(name + " is not in a namespace");
        }
        s.knobs().set(NetemSysctl.NETEM, name, params);
    }

    /** skb_checksum_help: finishes a partial L4 checksum in software. */
    static void completeChecksum(Packet p, DeviceHost s) {
        var b = p.buf();
        int start = p.csumStart();
        int field = start + p.csumOffset();
        int end = b.writerIndex();
        if (start < b.readerIndex() || field + 2 > end) {
            p.setChecksum(ChecksumState.NONE, 0, 0);
            return;
        }
        // The field holds the folded pseudo-header sum; summing the region including it completes the checksum.
        int c = Checksum.compute(b, start, end - start);
        if (s != null) {
            s.cpu().checksummed(end - start);
        }
        b.setShort(field, c == 0 ? 0xffff : c);
        p.setChecksum(ChecksumState.NONE, 0, 0);
    }

    /** Sends the frame on; owns {@code p} from here. */
    protected abstract void xmit(Packet p);

    /** Called when the device is deleted, after it left its namespace. */
    protected void destroy() {
    }

    /** Deletes the device: it leaves its namespace and, for a veth, takes its peer with it. */
    public void delete() {
        DeviceHost s = stack;
        if (s != null) {
            s.unregister(this);
        }
        destroy();
    }

    @Override
    public String toString() {
        return name + "(" + kind + ", ifindex " + ifindex + ")";
    }
}
