package dev.usnet.perf;

import dev.usnet.core.buf.Buffers;
import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.VirtualScheduler;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import dev.usnet.core.wire.TcpSegment;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One train of {@code segments} in-order 1448-byte TCP segments of one flow, sent over a veth into the receiving
 * namespace's backlog and taken off by one backlog run, with GRO on the receiving end ({@code gro=true}: merged into
 * one packet, a copy of each payload into a pooled 64 KiB buffer) or off (each delivered). What arrives above the
 * device is released at once. Per operation: building the segments from a template (pooled buffers), the veth, the
 * backlog run, GRO. With {@code -prof gc}, {@code gc.alloc.rate.norm} is the heap allocated per train.
 */
@State(Scope.Thread)
public class GroBench extends UsnetBench {
    @Param({"true", "false"})
    boolean gro;

    @Param({"16"})
    int segments;

    private static final int MSS = 1448;
    private static final int FRAME = 14 + 20 + 32 + MSS;
    private VirtualScheduler sched;
    private NetStack a;
    private NetStack b;
    private VethEnd[] pair;
    private final byte[] template = new byte[FRAME];
    private long seq;
    private int id;
    long delivered;

    @Setup
    public void setup() {
        sched = new VirtualScheduler();
        a = new NetStack("a", sched, 1);
        b = new NetStack("b", sched, 1);
        pair = VethEnd.createPair(a, "eth0", 0x0200_0000_0a01L, b, "eth0", 0x0200_0000_0b01L);
        pair[0].setUp(true);
        pair[1].setUp(true);
        pair[1].setGro(gro);
        pair[1].setRxHandler((dev, p) -> {
            delivered += p.length();
            p.release();
            return true;
        });
        ByteBuf t = io.netty.buffer.Unpooled.wrappedBuffer(template);
        t.writerIndex(0);
        EthernetFrame.write(t, 0, pair[1].mac(), pair[0].mac(), EthernetFrame.ETH_P_IP);
        Ipv4Packet.writeHeader(t, 14, 0, FRAME - 14, 0, Ipv4Packet.FLAG_DF, 64, 6, Ipv4Addr.parse("198.18.0.1"),
                Ipv4Addr.parse("198.18.0.2"));
        TcpSegment.writeHeader(t, 34, 40000, 5001, 0, 1, 32, TcpSegment.ACK_FLAG, 1024);
        t.setInt(54, 0x0101080a);
        t.setInt(58, 100);
        t.setInt(62, 50);
    }

    @Benchmark
    public long train() {
        for (int i = 0; i < segments; i++) {
            Packet p = Packet.allocate(Buffers.HEADROOM, FRAME);
            ByteBuf buf = p.buf();
            int s = buf.writerIndex();
            buf.writeBytes(template);
            buf.setShort(s + 14 + Ipv4Packet.ID, id++);
            buf.setShort(s + 14 + Ipv4Packet.CHECKSUM, 0);
            buf.setShort(s + 14 + Ipv4Packet.CHECKSUM, Checksum.compute(buf, s + 14, 20));
            buf.setInt(s + 34 + TcpSegment.SEQ, (int) seq);
            seq += MSS;
            // A sender with tx-checksumming leaves the TCP checksum partial; GRO trusts it, as Linux does.
            p.setChecksum(dev.usnet.core.buf.ChecksumState.PARTIAL, s + 34, TcpSegment.CHECKSUM);
            pair[0].transmit(p);
        }
        sched.runFor(0);
        return delivered;
    }

    @TearDown
    public void tearDown() {
        a.close();
        b.close();
    }
}
