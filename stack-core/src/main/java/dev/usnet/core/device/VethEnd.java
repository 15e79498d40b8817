package dev.usnet.core.device;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.wire.EthernetFrame;

/**
 * One end of a veth pair: what it transmits, its peer receives, as the very same {@link Packet} (no copy),
 * through the peer namespace's receive backlog like the kernel's veth_xmit → netif_rx.
 */
public final class VethEnd extends Device {
    private volatile VethEnd peer;

    VethEnd(String name, long mac) {
        super("veth", name, mac);
    }

    /** Creates a connected pair; each end joins its namespace. */
    public static VethEnd[] createPair(DeviceHost a, String nameA, long macA, DeviceHost b, String nameB, long macB) {
        VethEnd ea = new VethEnd(nameA, macA);
        VethEnd eb = new VethEnd(nameB, macB);
        ea.peer = eb;
        eb.peer = ea;
        a.register(ea);
        b.register(eb);
        return new VethEnd[] {ea, eb};
    }

    public VethEnd peer() {
        return peer;
    }

    /** The peer's carrier follows this end's state, so its watchers hear of it too. */
    @Override
    public void setUp(boolean up) {
        boolean was = isUp();
        super.setUp(up);
        VethEnd p = peer;
        if (was != up && p != null) {
            Device m = p.master();
            if (!up && m != null) {
                m.portDown(p);
            }
            p.notifyLinkChanged();
        }
    }

    @Override
    public boolean hasCarrier() {
        VethEnd p = peer;
        return isUp() && p != null && p.isUp();
    }

    @Override
    protected void xmit(Packet p) {
        VethEnd to = peer;
        DeviceHost ps = to == null ? null : to.stack();
        if (ps == null) {
            stats().txDrop();
            stack().drop(p, DropReason.NO_CARRIER);
            return;
        }
        // is_skb_forwardable: the peer drops what exceeds its MTU, unless it is a GSO super-frame.
        if (!p.isGso() && p.length() > to.mtu() + EthernetFrame.HEADER_LEN + EthernetFrame.VLAN_TAG_LEN) {
            to.stats().rxDrop();
            stack().drop(p, DropReason.PKT_TOO_BIG);
            return;
        }
        // skb_scrub_packet: the frame starts a new life in the peer namespace, and skb_orphan releases its sender's
        // charge here (dev_forward_skb): a TCP sender behind a veth is never held back by TCP small queues for
        // what waits beyond it (the host's bridge, qdisc and NIC). With link emulation on this end the frame was
        // completed already when it left the emulated wire.
        p.orphan();
        p.resetHop();
        p.scrubNetfilter(ps != stack());
        ps.netifRx(to, p);
    }

    @Override
    protected void destroy() {
        VethEnd p = peer;
        peer = null;
        if (p != null) {
            p.peer = null;
            if (p.stack() != null) {
                p.stack().unregister(p);
            }
        }
    }
}
