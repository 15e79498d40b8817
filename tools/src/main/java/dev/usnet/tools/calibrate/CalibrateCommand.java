package dev.usnet.tools.calibrate;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.nat.NatCore;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.nftables.Nftables;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code usnet calibrate}: measures usnet's own per-operation costs on this machine, in process (a few
 * hundred ms each, no JMH forks), and prints them as the {@code usnet.cpu.*} knobs of the CPU model
 * (docs/cpu-model.md). The per-packet costs are what the namespace's {@code CpuAccount} measured around its
 * backlog runs, so they are what the model stands for.
 */
@Command(name = "calibrate", mixinStandardHelpOptions = true,
        description = "Measures per-operation costs here and prints them as usnet.cpu.* --set lines.")
public final class CalibrateCommand implements Callable<Integer> {
    private static final long MAC_DUT1 = 0x02_00_00_00_01_01L;
    private static final long MAC_DUT2 = 0x02_00_00_00_01_02L;
    private static final long MAC_H1 = 0x02_00_00_00_aa_01L;
    private static final long MAC_H2 = 0x02_00_00_00_bb_02L;

    @Spec
    CommandSpec spec;

    @Option(names = "--packets", description = "Frames per path (default ${DEFAULT-VALUE}).")
    int packets = 200_000;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        // Each path four times: the first pass warms the JIT; of the other three the least is reported, since on a
        // shared machine what other processes take only ever adds to a pass (the costs are differences of paths,
        // and a single pass's noise easily exceeds a conntrack lookup).
        long[] least = new long[Path.values().length];
        Arrays.fill(least, Long.MAX_VALUE);
        for (int pass = 0; pass < 4; pass++) {
            for (Path path : Path.values()) {
                long ns = perPacket(path);
                if (pass > 0) {
                    least[path.ordinal()] = Math.min(least[path.ordinal()], ns);
                }
            }
        }
        long l2 = least[Path.L2_ONLY.ordinal()];
        long bridge = least[Path.BRIDGE.ordinal()];
        long router = least[Path.ROUTER.ordinal()];
        long tracked = least[Path.ROUTER_CONNTRACK.ordinal()];
        long trackedNew = least[Path.ROUTER_CONNTRACK_NEW.ordinal()];
        long natted = least[Path.ROUTER_MASQUERADE.ordinal()];
        long ruled = least[Path.ROUTER_RULES.ordinal()];
        long copyPs = copyPicosPerByte();
        long csumPs = checksumPicosPerByte();
        out.println("# usnet calibrate: per-operation costs measured here (" + packets + " frames a path, the least"
                + " of three passes); noisy, run it twice");
        out.println("# per frame: receive only " + l2 + " ns, bridged " + bridge + " ns, routed " + router + " ns");
        out.println("# routed with conntrack: " + tracked + " ns (known flow), " + trackedNew
                + " ns (a new UDP connection each frame); with masquerade: " + natted + " ns; through " + RULES
                + " nftables rules: " + ruled + " ns");
        out.println("--set usnet.cpu.l2_rx_ns=" + l2);
        out.println("--set usnet.cpu.bridge_fwd_ns=" + Math.max(0, bridge - l2));
        out.println("--set usnet.cpu.ip_fwd_ns=" + Math.max(0, router - l2));
        out.println("--set usnet.cpu.copy_ps_per_byte=" + copyPs);
        out.println("--set usnet.cpu.csum_ps_per_byte=" + csumPs);
        out.println("--set usnet.cpu.ct_lookup_ns=" + Math.max(0, tracked - router));
        out.println("--set usnet.cpu.ct_new_ns=" + Math.max(0, trackedNew - tracked));
        out.println("--set usnet.cpu.nat_ns=" + Math.max(0, natted - tracked));
        out.println("--set usnet.cpu.nft_rule_ns=" + Math.max(0, (ruled - router) / RULES));
        out.println("# not measured here (defaults stand): usnet.cpu.local_deliver_ns, usnet.cpu.cow_copy_ns");
        out.flush();
        return 0;
    }

    /**
     * What the frames go through: receive only (an EtherType nobody handles), a bridge, a router, and the router
     * with connection tracking on (every frame of one UDP flow, so each finds its entry), with every frame opening
     * a new UDP connection (source and destination ports counted up: an entry made and confirmed per frame), and
     * with tracking plus a masquerade chain at postrouting (every frame of the flow rewritten to the outgoing
     * address), and the router with a forward chain of {@link #RULES} rules none of which matches (each reads the
     * source address; no connection tracking).
     */
    private enum Path { L2_ONLY, BRIDGE, ROUTER, ROUTER_CONNTRACK, ROUTER_CONNTRACK_NEW, ROUTER_MASQUERADE, ROUTER_RULES }

    /** Rules each frame of the ruleset path is evaluated against. */
    private static final int RULES = 20;

    /** Measured ns per frame of the device-under-test namespace's backlog runs on {@code path}. */
    private long perPacket(Path path) {
        VirtualScheduler sched = new VirtualScheduler(1_000_000_000L);
        NetStack dut = new NetStack("calibrate-dut", sched, 1);
        NetStack sink = new NetStack("calibrate-sink", sched, 1);
        try {
            VethEnd[] in = VethEnd.createPair(dut, "in", MAC_DUT1, sink, "s-in", MAC_H1);
            VethEnd[] out = VethEnd.createPair(dut, "out", MAC_DUT2, sink, "s-out", MAC_H2);
            for (VethEnd[] pair : new VethEnd[][] {in, out}) {
                pair[0].setUp(true);
                pair[1].setUp(true);
                pair[1].setRxHandler((dev, p) -> {
                    p.release();
                    return true;
                });
            }
            byte[] frame;
            switch (path) {
                case L2_ONLY -> frame = frame(MAC_DUT1, MAC_H1, 0x88b5);
                case BRIDGE -> {
                    Bridge br = new Bridge("br0", 0x02_00_00_00_00_feL);
                    dut.register(br);
                    br.addPort(in[0]);
                    br.addPort(out[0]);
                    br.setUp(true);
                    // H2 is learnt behind "out" by one frame from it.
                    inject(dut, out[0], frame(MAC_H1, MAC_H2, 0x88b5), 1, false, sched);
                    frame = frame(MAC_H2, MAC_H1, 0x88b5);
                }
                default -> {
                    dut.knobs().set("net.ipv4.ip_forward", "1");
                    dut.devinet().add(in[0], Ipv4Addr.parse("198.18.1.1"), 24);
                    dut.devinet().add(out[0], Ipv4Addr.parse("198.18.2.1"), 24);
                    dut.neigh().addPermanent(out[0], Ipv4Addr.parse("198.18.2.2"), MAC_H2);
                    frame = frame(MAC_DUT1, MAC_H1, 0x0800);
                    if (path == Path.ROUTER_RULES) {
                        StringBuilder rules = new StringBuilder("table ip calibrate {\n chain forward {\n"
                                + "  type filter hook forward priority filter; policy accept;\n");
                        for (int i = 0; i < RULES; i++) {
                            rules.append("  ip saddr 198.19.").append(i).append(".1 counter\n");
                        }
                        Nftables.of(dut.ipv4()).apply(rules.append(" }\n}\n").toString());
                    } else if (path != Path.ROUTER) {
                        // Room for every connection the new-connection path opens, so none is refused.
                        dut.knobs().set("net.netfilter.nf_conntrack_max", Integer.toString(Math.max(262_144,
                                2 * packets)));
                        ConntrackCore.of(dut.ipv4()).get();
                    }
                    if (path == Path.ROUTER_MASQUERADE) {
                        NatCore nat = NatCore.of(dut.ipv4());
                        nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC,
                                (p, st) -> nat.masquerade(p, NfNatRange.NONE, st.out()));
                    }
                }
            }
            if (path == Path.ROUTER_CONNTRACK || path == Path.ROUTER_MASQUERADE) {
                // The flow's first frame opens its connection outside the measurement.
                inject(dut, in[0], frame, 1, false, sched);
            }
            long before = dut.cpu().measuredNanos();
            inject(dut, in[0], frame, packets, path == Path.ROUTER_CONNTRACK_NEW, sched);
            // Receive only: the frame's ethertype has no handler, so it ends as UNHANDLED_PROTO right after L2.
            long drops = dut.drops().total()
                    - (path == Path.L2_ONLY ? dut.drops().get(dev.usnet.core.stats.DropReason.UNHANDLED_PROTO) : 0);
            if (drops != 0) {
                throw new IllegalStateException("calibrate: " + path + " dropped " + dut.drops().snapshot());
            }
            checkNetfilterWork(dut, path);
            return (dut.cpu().measuredNanos() - before) / packets;
        } finally {
            dut.close();
            sink.close();
            sched.runFor(1);
        }
    }

    /** The netfilter paths really did their work: a wrong setup must not report a cost. */
    private void checkNetfilterWork(NetStack dut, Path path) {
        long lookups = dut.cpu().conntrackLookups();
        long creates = dut.cpu().conntrackCreates();
        long rewrites = dut.cpu().natRewrites();
        boolean ok = switch (path) {
            case L2_ONLY, BRIDGE, ROUTER -> lookups == 0 && rewrites == 0 && dut.cpu().nftRules() == 0;
            case ROUTER_RULES -> lookups == 0 && rewrites == 0 && dut.cpu().nftRules() == (long) RULES * packets;
            case ROUTER_CONNTRACK -> lookups == packets + 1 && creates == 1 && rewrites == 0;
            case ROUTER_CONNTRACK_NEW -> lookups == packets && creates == packets && rewrites == 0;
            case ROUTER_MASQUERADE -> lookups == packets + 1 && creates == 1 && rewrites == packets + 1;
        };
        if (!ok) {
            throw new IllegalStateException("calibrate: " + path + " did " + lookups + " conntrack lookups, "
                    + creates + " new entries, " + rewrites + " NAT rewrites for " + packets + " frames");
        }
    }

    /**
     * Hands {@code n} copies of {@code frame} to {@code dev}'s receive; with {@code newFlows} each one's UDP ports
     * are counted up so each opens a connection of its own.
     */
    private static void inject(NetStack dut, VethEnd dev, byte[] frame, int n, boolean newFlows,
                               VirtualScheduler sched) {
        for (int i = 0; i < n; i++) {
            Packet p = Packet.allocate(Buffers.HEADROOM, frame.length);
            p.buf().writeBytes(frame);
            if (newFlows) {
                int udp = p.start() + 14 + 20;
                p.buf().setShort(udp, 1024 + i % 60_000);
                p.buf().setShort(udp + 2, 9 + i / 60_000);
            }
            dut.netifRx(dev, p);
            if (i % 512 == 511) {
                sched.runFor(0);
            }
        }
        sched.runFor(0);
    }

    /** A 1500-byte frame: Ethernet, and for IPv4 a UDP datagram 198.18.1.2 → 198.18.2.2 with a valid header. */
    private static byte[] frame(long dst, long src, int type) {
        byte[] f = new byte[1500];
        for (int i = 0; i < 6; i++) {
            f[i] = (byte) (dst >>> (40 - 8 * i));
            f[6 + i] = (byte) (src >>> (40 - 8 * i));
        }
        f[12] = (byte) (type >>> 8);
        f[13] = (byte) type;
        if (type == 0x0800) {
            int ip = 14;
            int total = f.length - 14;
            f[ip] = 0x45;
            f[ip + 2] = (byte) (total >>> 8);
            f[ip + 3] = (byte) total;
            f[ip + 8] = 64;
            f[ip + 9] = 17;
            byte[] srcA = {(byte) 198, 18, 1, 2};
            byte[] dstA = {(byte) 198, 18, 2, 2};
            System.arraycopy(srcA, 0, f, ip + 12, 4);
            System.arraycopy(dstA, 0, f, ip + 16, 4);
            int c = Checksum.compute(io.netty.buffer.Unpooled.wrappedBuffer(f), ip, 20);
            f[ip + 10] = (byte) (c >>> 8);
            f[ip + 11] = (byte) c;
            int udp = ip + 20;
            int ulen = total - 20;
            f[udp] = 0x30;
            f[udp + 1] = 0x39;
            f[udp + 2] = 0x00;
            f[udp + 3] = 0x09;
            f[udp + 4] = (byte) (ulen >>> 8);
            f[udp + 5] = (byte) ulen;
        }
        return f;
    }

    private static final int BLOCK = 65_536;

    private static long copyPicosPerByte() {
        ByteBuf src = PooledByteBufAllocator.DEFAULT.directBuffer(BLOCK);
        ByteBuf dst = PooledByteBufAllocator.DEFAULT.directBuffer(BLOCK);
        try {
            src.writeZero(BLOCK);
            long bytes = 0;
            long t0 = System.nanoTime();
            long end = t0 + 300_000_000L;
            long t;
            do {
                for (int i = 0; i < 64; i++) {
                    dst.clear();
                    dst.writeBytes(src, 0, BLOCK);
                }
                bytes += 64L * BLOCK;
                t = System.nanoTime();
            } while (t < end);
            return (t - t0) * 1000 / bytes;
        } finally {
            src.release();
            dst.release();
        }
    }

    private static long checksumPicosPerByte() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(BLOCK);
        try {
            b.writeZero(BLOCK);
            long bytes = 0;
            int sink = 0;
            long t0 = System.nanoTime();
            long end = t0 + 300_000_000L;
            long t;
            do {
                for (int i = 0; i < 16; i++) {
                    sink += Checksum.compute(b, 0, BLOCK);
                }
                bytes += 16L * BLOCK;
                t = System.nanoTime();
            } while (t < end);
            if (sink == 42) {
                System.out.print("");
            }
            return (t - t0) * 1000 / bytes;
        } finally {
            b.release();
        }
    }
}
