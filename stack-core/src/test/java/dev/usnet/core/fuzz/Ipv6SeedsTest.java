package dev.usnet.core.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import java.io.IOException;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

/**
 * The built IPv6 seeds of the frame targets reach what they are named for, so the fuzzer starts past the IPv6
 * checks: each seed is run against a fresh namespace and the counters of the path it aims at must move.
 */
class Ipv6SeedsTest {
    private static Counters run(NamespaceUnderFuzz.Kind kind, String seed) throws IOException {
        String path = "/dev/usnet/core/fuzz/FrameFuzzTestInputs/" + kind.name().toLowerCase() + "/" + seed;
        byte[] data;
        try (InputStream s = Ipv6SeedsTest.class.getResourceAsStream(path)) {
            data = s.readAllBytes();
        }
        FuzzBytes in = new FuzzBytes(data);
        try (NamespaceUnderFuzz n = new NamespaceUnderFuzz(kind, in.u8())) {
            FrameScript.run(in, n.context(), n);
            assertEquals(0, n.dut().drops().get(DropReason.IPV6DISABLED), seed + ": IPv6 is on");
            Counters c = new Counters(new long[Mib.values().length]);
            for (Mib m : Mib.values()) {
                c.values[m.ordinal()] = n.dut().mib().get(m);
            }
            return c;
        }
    }

    /** The namespace's counters when its script ended. */
    private record Counters(long[] values) {
        long get(Mib m) {
            return values[m.ordinal()];
        }
    }

    @Test
    void echoIsAnswered() throws IOException {
        assertEquals(1, run(NamespaceUnderFuzz.Kind.ROUTER, "built-ipv6-echo").get(Mib.Icmp6OutEchoReplies));
        assertEquals(1, run(NamespaceUnderFuzz.Kind.BRIDGE, "built-ipv6-echo").get(Mib.Icmp6OutEchoReplies));
    }

    @Test
    void udpAndExtensionHeadersAreForwarded() throws IOException {
        assertEquals(1, run(NamespaceUnderFuzz.Kind.ROUTER, "built-ipv6-udp").get(Mib.Ip6OutForwDatagrams));
        assertEquals(1, run(NamespaceUnderFuzz.Kind.ROUTER, "built-ipv6-exthdr").get(Mib.Ip6OutForwDatagrams));
    }

    @Test
    void fragmentsAreReassembledAndAnswered() throws IOException {
        for (NamespaceUnderFuzz.Kind k : NamespaceUnderFuzz.Kind.values()) {
            Counters m = run(k, "built-ipv6-fragments");
            assertEquals(3, m.get(Mib.Ip6ReasmReqds), k + " fragments");
            assertEquals(1, m.get(Mib.Ip6ReasmOKs), k + " reassembled");
            assertEquals(1, m.get(Mib.Icmp6OutEchoReplies), k + " echo reply to the reassembled request");
        }
    }

    @Test
    void neighbourDiscoveryIsTaken() throws IOException {
        for (NamespaceUnderFuzz.Kind k : NamespaceUnderFuzz.Kind.values()) {
            Counters ns = run(k, "built-ipv6-ns");
            assertEquals(1, ns.get(Mib.Icmp6InNeighborSolicits), k + " NS");
            assertTrue(ns.get(Mib.Icmp6OutNeighborAdvertisements) >= 1, k + " NA in answer");
            assertEquals(1, run(k, "built-ipv6-na").get(Mib.Icmp6InNeighborAdvertisements), k + " NA");
            assertEquals(1, run(k, "built-ipv6-ra").get(Mib.Icmp6InRouterAdvertisements), k + " RA");
        }
    }
}
