package dev.usnet.core.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.netem.LinkEmulation;
import dev.usnet.core.netem.NetemParams;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.LeakGuard;
import dev.usnet.core.testing.TestNet;
import java.nio.charset.StandardCharsets;

/**
 * Link-emulation specs ({@code usnet.netem.<dev>="rate 1mbit delay 10ms ..."}, topology {@code netem:}) from
 * arbitrary text: parsing gives parameters or an IllegalArgumentException with a message, nothing else; parsed
 * parameters print as a spec that parses back to the same parameters; and a veth emulating them passes frames
 * in virtual time with every frame accounted for (sent, lost, tail-dropped, duplicated), nothing held at the end
 * and no buffer leaked.
 */
class NetemSpecFuzzTest {
    @FuzzTest(maxDuration = "5m")
    void netem(byte[] data) {
        FuzzBytes in = new FuzzBytes(data);
        int frames = in.u8() % 40;
        int size = 60 + in.u16() % 1455;
        String spec = new String(in.rest(), StandardCharsets.ISO_8859_1);
        NetemParams p;
        try {
            p = NetemParams.parse(spec);
        } catch (IllegalArgumentException e) {
            if (e.getMessage() == null || e.getMessage().isBlank()) {
                throw new AssertionError("a bad spec needs a message", e);
            }
            return;
        }
        String canonical = p.format();
        NetemParams again;
        try {
            again = NetemParams.parse(canonical);
        } catch (IllegalArgumentException e) {
            throw new AssertionError("'" + spec + "' parsed, but its canonical form '" + canonical + "' does not", e);
        }
        if (!again.equals(p)) {
            throw new AssertionError("'" + spec + "' -> '" + canonical + "' -> '" + again.format() + "'");
        }
        long live = LeakGuard.liveBuffers();
        try (TestNet net = new TestNet()) {
            NetStack a = net.ns("a");
            NetStack b = net.ns("b");
            VethEnd[] pair = net.link(a, "va", "198.18.0.1/24", b, "vb", "198.18.0.2/24");
            pair[1].setRxHandler((dev, pk) -> {
                pk.release();
                return true;
            });
            pair[0].setNetem(p);
            byte[] f = Frames.udp(pair[0].mac(), pair[1].mac(), "198.18.0.1", "198.18.0.2", 64, size - 42, 1, false);
            for (int i = 0; i < frames; i++) {
                var pk = dev.usnet.core.buf.Packet.allocate(64, f.length);
                pk.buf().writeBytes(f);
                pair[0].transmit(pk);
                net.run(1_000_000L);
            }
            // The slowest emulation that parses still drains: at most 2^24 frames of 1514 bytes at 1 bit/s would
            // not, but here at most 40 frames wait, each at most an hour of delay plus its serialisation time.
            net.run(Long.MAX_VALUE / 4);
            LinkEmulation ne = pair[0].netem();
            long received = pair[1].stats().rxPackets;
            if (ne == null) {
                // No emulation is made before the first frame asks for one.
                if ((!p.isNone() && frames > 0) || received != frames) {
                    throw new AssertionError(spec + ": no emulation, " + frames + " sent, " + received + " received");
                }
            } else {
                LinkEmulation.Stats s = ne.stats();
                if (s.qlen() != 0) {
                    throw new AssertionError(spec + ": " + s.qlen() + " frames still held");
                }
                if (received != frames - s.dropped() + s.duplicated()) {
                    throw new AssertionError(spec + ": " + frames + " sent, " + received + " received, " + s);
                }
                if (a.drops().get(DropReason.NETEM_LOSS) != s.lost()
                        || a.drops().get(DropReason.NETEM_QUEUE_FULL) != s.queueDrops()) {
                    throw new AssertionError(spec + ": drop reasons " + a.drops().snapshot() + " disagree with " + s);
                }
            }
        }
        if (LeakGuard.liveBuffers() != live) {
            throw new AssertionError(spec + ": " + (LeakGuard.liveBuffers() - live) + " buffer(s) leaked");
        }
    }
}
