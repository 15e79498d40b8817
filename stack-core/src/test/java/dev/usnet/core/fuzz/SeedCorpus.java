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
        Path ipv6Inputs = Path.of(args[1], "dev/usnet/core/fuzz/Ipv6InputFuzzTestInputs/input");
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
                    write(inputs.resolve(target), "fixture-" + name + "-" + n, w.toByteArray());
                    if (name.startsWith("router6")) {
                        // The same frames for the IPv6 input target: no variant byte, its own pause op code.
                        FrameScript.Writer w6 = new FrameScript.Writer(true);
                        long at = recs.get(i).ts;
                        for (Rec r : recs.subList(i, Math.min(recs.size(), i + 24))) {
                            long gap = r.ts - at;
                            if (gap > 0) {
                                w6.advance(63 - Long.numberOfLeadingZeros(gap));
                            }
                            at = r.ts;
                            if (r.data.length < 1600) {
                                w6.raw(r.port, r.data);
                            }
                        }
                        write(ipv6Inputs, "fixture-" + name + "-" + n, w6.toByteArray());
                    }
                    n++;
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
        ipv6Seeds(inputs.resolve("router"), 17, 3, 0, 4, 15);
        // The router's built IPv6 seeds for the IPv6 input target: without the variant byte, op codes of runIpv6.
        try (Stream<Path> built = Files.list(inputs.resolve("router"))) {
            for (Path p : built.filter(p -> p.getFileName().toString().startsWith("built-ipv6-")).sorted().toList()) {
                byte[] b = Files.readAllBytes(p);
                byte[] s = java.util.Arrays.copyOfRange(b, 1, b.length);
                s[0] = (byte) (s[0] - FrameScript.OP_IPV6 + 1);
                write(ipv6Inputs, p.getFileName().toString(), s);
            }
        }
        ipv6Seeds(inputs.resolve("bridge"), 6, 4, 0, 1, 5);
    }

    /**
     * Built IPv6 frames (the bytes follow the order {@link Ipv6Frames} reads them): an echo request, a UDP
     * datagram through, an extension-header chain (hop-by-hop router alert, destination options, a type 2 routing
     * header, an atomic fragment), an echo cut into three fragments sent out of order, a neighbour solicitation
     * for the target's address, an unsolicited override advertisement, and a router advertisement with a prefix
     * and an MTU. {@code n6} is the number of the context's IPv6 addresses (the specials follow them); the other
     * numbers are indexes of addresses in the context: the MAC/address of the sending host, the target's own
     * address, a forwarding destination, and a link-local sender.
     */
    private static void ipv6Seeds(Path dir, int n6, int host, int own, int far, int linkLocal) throws IOException {
        int v6 = FrameScript.OP_IPV6;
        write(dir, "built-ipv6-echo", new FrameScript.Writer().bytes(0, v6, 0, host, own, 0, host, 0, 0, 0, 0, 0, 1,
                0, 0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0).toByteArray());
        write(dir, "built-ipv6-udp", new FrameScript.Writer().bytes(0, v6, 0, host, far, 0, host, 0, 0, 0, 0, 0, 0,
                0x9c, 0x40, 3, 0x13, 0x89, 4, 1, 2, 3, 4, 0, 0).toByteArray());
        write(dir, "built-ipv6-exthdr", new FrameScript.Writer().bytes(0, v6, 0, host, far, 0, host, 0, 0, 0, 0,
                0x83, 0, 1, 2, 3, 3, 0, 0, 0, 100, 0, 0, 0, 7, 1, 200, far, 0, 1, 2, 0, 2, 0, 0).toByteArray());
        write(dir, "built-ipv6-fragments", new FrameScript.Writer().bytes(0, FrameScript.OP_FRAGMENTS6, 0, host, own, 0,
                host, 1, 0, 0, 0, 9, 63, 0x05, 0xdc, 2, 60, 120, 0, 2, 0, 0, 0, 1).toByteArray());
        int nd = FrameScript.OP_NDISC;
        write(dir, "built-ipv6-ns", new FrameScript.Writer().bytes(0, nd, 0, host, n6 + 4, own, 0, host, 0, 2, 0, own,
                1, 0, host, 0).toByteArray());
        write(dir, "built-ipv6-na", new FrameScript.Writer().bytes(0, nd, 0, host, n6 + 2, 0, host, 0, 3, 0, 0x20,
                host, 1, 1, host, 0).toByteArray());
        write(dir, "built-ipv6-ra", new FrameScript.Writer().bytes(0, nd, 0, linkLocal, n6 + 2, 0, host, 0, 1, 0, 64,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 64, 0xc0, 0, 0, n6 + 8, 0, 5, 3, 0, 0x00, 0xdc, 0).toByteArray());
    }

    private static void write(Path dir, String name, byte[] data) throws IOException {
        Files.createDirectories(dir);
        Files.write(dir.resolve(name), data);
    }
}
