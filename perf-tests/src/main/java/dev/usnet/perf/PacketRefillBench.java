package dev.usnet.perf;

import static dev.usnet.perf.BridgeForwardBench.check;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import io.netty.buffer.ByteBuf;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The baseline to subtract from {@link Ipv4ForwardBench} (same {@code ipLen}, same {@code shared}): the
 * per-operation refill of a fresh pooled packet from the header template, the optional {@code cloneShared()}
 * kept by the benchmark, and the releases, without the stack in between. For {@link BridgeForwardBench} the
 * {@code ipLen=64}/{@code 1500}, {@code shared=false} rows are the near equivalent (same allocator path; the
 * bridge writes 14 header bytes instead of 42).
 */
@State(Scope.Thread)
public class PacketRefillBench extends UsnetBench {
    @Param({"64", "1500", "65535"})
    int ipLen;

    @Param({"false", "true"})
    boolean shared;

    private Frames.Template template;
    private int frameLen;

    @Setup(Level.Trial)
    public void setup() {
        frameLen = EthernetFrame.HEADER_LEN + ipLen;
        template = Frames.udpHeaders(Ipv4ForwardBench.MAC_R1, Ipv4ForwardBench.MAC_H1, Ipv4Addr.parse("198.18.1.2"),
                Ipv4Addr.parse("198.18.2.2"), Ipv4ForwardBench.TTL, ipLen, true);
        Packet p = Frames.refill(template, frameLen);
        ByteBuf data = p.buf();
        check(p.length() == frameLen, "refill length " + p.length());
        check(data.getUnsignedByte(p.start() + EthernetFrame.HEADER_LEN + 8) == Ipv4ForwardBench.TTL, "refill TTL");
        refillAndRelease();
        p.release();
        check(data.refCnt() == 0, "refill buffer leaked");
    }

    @Benchmark
    public int refillAndRelease() {
        Packet p = Frames.refill(template, frameLen);
        int len = p.length();
        if (shared) {
            Packet keep = p.cloneShared();
            p.release();
            keep.release();
        } else {
            p.release();
        }
        return len;
    }
}
