package dev.usnet.core.testing;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Ipv4Addr;
import java.util.ArrayList;
import java.util.List;

/**
 * A virtual-time test network: namespaces on one deterministic scheduler, veth pairs, and "wires" — veth
 * ends in a tester namespace that inject frames and record what arrives, like the Linux oracle's tester.
 */
public final class TestNet implements AutoCloseable {
    public final VirtualScheduler sched = new VirtualScheduler();
    private final List<NetStack> stacks = new ArrayList<>();
    private final NetStack tester;
    private int macSeq;

    public TestNet() {
        tester = ns("tester");
    }

    public NetStack ns(String name) {
        NetStack s = new NetStack(name, sched, 42);
        stacks.add(s);
        return s;
    }

    /** A frame seen on a wire: its bytes and the virtual time it arrived. */
    public record Seen(byte[] data, long at) {}

    /** A tester-side veth end attached to a device under test. */
    public final class Wire {
        public final VethEnd end;
        public final VethEnd dutEnd;
        public final List<Seen> received = new ArrayList<>();

        Wire(VethEnd end, VethEnd dutEnd) {
            this.end = end;
            this.dutEnd = dutEnd;
            end.addTap((dev, p, tx, now) -> {
                if (!tx) {
                    byte[] a = new byte[p.length()];
                    p.buf().getBytes(p.start(), a);
                    received.add(new Seen(a, now));
                }
            });
            end.setRxHandler((dev, p) -> {
                p.release();
                return true;
            });
            end.setUp(true);
        }

        /** Sends {@code frame} into the device under test now. */
        public void send(byte[] frame) {
            Packet p = Packet.allocate(Buffers.HEADROOM, frame.length);
            p.buf().writeBytes(frame);
            end.transmit(p);
        }

        public List<byte[]> frames() {
            List<byte[]> l = new ArrayList<>();
            for (Seen s : received) {
                l.add(s.data());
            }
            return l;
        }

        public void clear() {
            received.clear();
        }
    }

    /** A veth {@code name} in {@code dut} (up) whose peer is a tester wire. */
    public Wire wire(NetStack dut, String name, long mac) {
        VethEnd[] pair = VethEnd.createPair(dut, name, mac, tester, "t-" + name + "-" + (++macSeq), 0x02_ee_00_00_00_00L | macSeq);
        pair[0].setUp(true);
        return new Wire(pair[1], pair[0]);
    }

    /** A veth pair between two namespaces, both ends up, with addresses (CIDR) when given. */
    public VethEnd[] link(NetStack a, String nameA, String cidrA, NetStack b, String nameB, String cidrB) {
        VethEnd[] pair = VethEnd.createPair(a, nameA, 0x02_aa_00_00_00_00L | (++macSeq), b, nameB,
                0x02_bb_00_00_00_00L | (++macSeq));
        pair[0].setUp(true);
        pair[1].setUp(true);
        addr(a, pair[0], cidrA);
        addr(b, pair[1], cidrB);
        return pair;
    }

    public static void addr(NetStack s, Device d, String cidr) {
        if (cidr == null) {
            return;
        }
        int slash = cidr.indexOf('/');
        s.devinet().add(d, Ipv4Addr.parse(cidr.substring(0, slash)), Integer.parseInt(cidr.substring(slash + 1)));
    }

    /** Runs everything due now (and what it triggers at the same instant). */
    public void settle() {
        sched.runFor(0);
    }

    public void run(long nanos) {
        sched.runFor(nanos);
    }

    @Override
    public void close() {
        for (NetStack s : stacks) {
            s.close();
        }
        sched.runFor(1);
    }
}
