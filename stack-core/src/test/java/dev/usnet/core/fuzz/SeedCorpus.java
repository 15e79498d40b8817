package dev.usnet.core.fuzz;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Writes the frame targets' seed corpora: the frames of the Linux conformance fixtures (recorded from a real
 * kernel), each fixture's ports merged in time order into scripts of at most 24 frames with the pauses between
 * them, plus one script per built-frame kind. Run from the repository root:
 * {@code java -cp ... dev.usnet.core.fuzz.SeedCorpus tools/conformance/fixtures stack-core/src/test/resources}.
 */
public final class SeedCorpus {
    private SeedCorpus() {}

    public static void main(String[] args) throws IOException {
        Path fixtures = Path.of(args[0]);
        Path inputs = Path.of(args[1], "dev/usnet/core/fuzz/FrameFuzzTestInputs");
        try (Stream<Path> dirs = Files.list(fixtures)) {
            for (Path fx : dirs.sorted().toList()) {
                String name = fx.getFileName().toString();
                String target = name.startsWith("router") ? "router" : "bridge";
                record Rec(long ts, int port, byte[] data) {}
                List<Rec> recs = new ArrayList<>();
                try (Stream<Path> pcaps = Files.list(fx.resolve("in"))) {
                    for (Path p : pcaps.sorted().toList()) {
                        String f = p.getFileName().toString();
                        int port = Math.max(0, Character.getNumericValue(f.charAt(f.indexOf('.') - 1)) - 1) % 3;
                        for (PcapRecord r : PcapReader.readAll(p)) {
                            recs.add(new Rec(r.timestampNanos(), port, r.data()));
                        }
                    }
                }
                recs.sort(Comparator.comparingLong(Rec::ts));
                int n = 0;
                for (int i = 0; i < recs.size(); i += 24) {
                    FrameScript.Writer w = new FrameScript.Writer().bytes(0);
                    long last = recs.get(i).ts;
                    for (Rec r : recs.subList(i, Math.min(recs.size(), i + 24))) {
                        long gap = r.ts - last;
                        if (gap > 0) {
                            w.advance(63 - Long.numberOfLeadingZeros(gap));
                        }
                        last = r.ts;
                        if (r.data.length < 1600) {
                            w.raw(r.port, r.data);
                        }
                    }
                    write(inputs.resolve(target), "fixture-" + name + "-" + (n++), w.toByteArray());
                }
            }
        }
        for (String target : List.of("router", "bridge")) {
            // Built frames with every choice zero: a valid UDP, IPv4-with-options, ARP, and a fragmented datagram.
            write(inputs.resolve(target), "built-udp", new FrameScript.Writer().bytes(0, FrameScript.OP_IPV4).toByteArray());
            write(inputs.resolve(target), "built-options-rr-ts", new FrameScript.Writer().bytes(0, FrameScript.OP_IPV4,
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 1, 3, 1, 4, 2, 0, 0).toByteArray());
            write(inputs.resolve(target), "built-tcp", new FrameScript.Writer().bytes(0, FrameScript.OP_IPV4, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, 0, 0, 0, 1).toByteArray());
            write(inputs.resolve(target), "built-icmp", new FrameScript.Writer().bytes(0, FrameScript.OP_IPV4, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, 0, 0, 0, 2).toByteArray());
            write(inputs.resolve(target), "built-arp", new FrameScript.Writer().bytes(0, FrameScript.OP_ARP).toByteArray());
            write(inputs.resolve(target), "built-fragments", new FrameScript.Writer().bytes(0, FrameScript.OP_FRAGMENTS,
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0xdc, 4, 60, 120, 200, 0, 3, 0, 2, 0, 1, 0, 0).toByteArray());
        }
    }

    private static void write(Path dir, String name, byte[] data) throws IOException {
        Files.createDirectories(dir);
        Files.write(dir.resolve(name), data);
    }
}
