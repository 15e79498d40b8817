package dev.usnet.core.nat;

import static dev.usnet.core.nat.NatFrames.a;
import static dev.usnet.core.nat.NatPortAllocator.NO_TUPLE;
import static dev.usnet.core.nat.NatPortAllocator.addr;
import static dev.usnet.core.nat.NatPortAllocator.pack;
import static dev.usnet.core.nat.NatPortAllocator.port;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.wire.Ipv4Packet;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Choosing a connection's new address and port: what stays, where a clash moves it, when nothing is left. */
class NatPortAllocatorTest {
    static final int TCP = Ipv4Packet.PROTO_TCP;
    static final int UDP = Ipv4Packet.PROTO_UDP;
    static final int ICMP = Ipv4Packet.PROTO_ICMP;
    static final int INSIDE = a("10.0.0.1");
    static final int SERVER = a("198.19.1.1");
    static final int OUTSIDE = a("198.18.0.1");

    private static NatPortAllocator seeded(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        return new NatPortAllocator(r::nextLong);
    }

    private static NfNatRange to(int addr) {
        return new NfNatRange(NfNatRange.MAP_IPS, addr, addr, 0, 0);
    }

    private static NfNatRange to(int addr, int minPort, int maxPort) {
        return new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_SPECIFIED, addr, addr, minPort, maxPort);
    }

    /** A table of taken tuples, as conntrack would answer, recording every question. */
    private static final class Table implements TupleInUse {
        final Set<List<Integer>> taken = new HashSet<>();
        final List<List<Integer>> asked = new ArrayList<>();

        Table take(int proto, int src, int srcPort, int dst, int dstPort) {
            taken.add(List.of(proto, src, srcPort, dst, dstPort));
            return this;
        }

        @Override
        public boolean inUse(int proto, int src, int srcPort, int dst, int dstPort) {
            List<Integer> t = List.of(proto, src, srcPort, dst, dstPort);
            asked.add(t);
            return taken.contains(t);
        }
    }

    private static final TupleInUse NOTHING_TAKEN = (p, s, sp, d, dp) -> false;
    private static final TupleInUse EVERYTHING_TAKEN = (p, s, sp, d, dp) -> true;

    @Test
    void sourceNatKeepsThePortWhenTheTupleIsFree() {
        long r = seeded(1).uniqueTuple(TCP, INSIDE, 34567, SERVER, 80, to(OUTSIDE), true, NOTHING_TAKEN,
                NatSourceMapping.NONE);
        assertEquals(pack(OUTSIDE, 34567), r);
    }

    @Test
    void aSourceAlreadyInTheRangeStaysWhole() {
        NfNatRange range = new NfNatRange(NfNatRange.MAP_IPS, a("10.0.0.0"), a("10.0.0.255"), 0, 0);
        long r = seeded(1).uniqueTuple(UDP, INSIDE, 5353, SERVER, 53, range, true, NOTHING_TAKEN, NatSourceMapping.NONE);
        assertEquals(pack(INSIDE, 5353), r);
    }

    @Test
    void aClashMovesTheSourcePortIntoTheRulesRange() {
        Table t = new Table().take(TCP, OUTSIDE, 34567, SERVER, 80);
        long r = seeded(2).uniqueTuple(TCP, INSIDE, 34567, SERVER, 80, to(OUTSIDE, 20000, 20999), true, t,
                NatSourceMapping.NONE);
        assertEquals(OUTSIDE, addr(r));
        assertTrue(port(r) >= 20000 && port(r) <= 20999, "port " + port(r));
        assertFalse(t.taken.contains(List.of(TCP, OUTSIDE, port(r), SERVER, 80)));
    }

    @Test
    void aPortOutsideTheRulesRangeMovesIntoItEvenWhenFree() {
        long r = seeded(3).uniqueTuple(TCP, INSIDE, 34567, SERVER, 80, to(OUTSIDE, 1024, 2000), true, NOTHING_TAKEN,
                NatSourceMapping.NONE);
        assertTrue(port(r) >= 1024 && port(r) <= 2000, "port " + port(r));
    }

    @Test
    void withoutAPortRangeAClashSearchesTheOriginalPortsClass() {
        int[][] classes = {{80, 1, 511}, {511, 1, 511}, {512, 600, 1023}, {700, 600, 1023}, {1023, 600, 1023},
                {1024, 1024, 65535}, {34567, 1024, 65535}};
        for (long seed = 0; seed < 20; seed++) {
            for (int[] c : classes) {
                Table t = new Table().take(UDP, OUTSIDE, c[0], SERVER, 53);
                long r = seeded(seed).uniqueTuple(UDP, INSIDE, c[0], SERVER, 53, to(OUTSIDE), true, t,
                        NatSourceMapping.NONE);
                assertNotEquals(NO_TUPLE, r);
                assertTrue(port(r) >= c[1] && port(r) <= c[2], "original " + c[0] + " got " + port(r));
            }
        }
    }

    @Test
    void theSearchStartsAtTheRandomOffsetAndStepsOneByOne() {
        // The offset 1000 in 1024-65535 is 2024; with it and 2025 taken the search lands on 2026.
        Table t = new Table().take(TCP, OUTSIDE, 2024, SERVER, 80).take(TCP, OUTSIDE, 2025, SERVER, 80);
        NatPortAllocator alloc = new NatPortAllocator(bound -> 1000);
        NfNatRange random = new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_RANDOM, OUTSIDE, OUTSIDE, 0, 0);
        assertEquals(pack(OUTSIDE, 2026), alloc.uniqueTuple(TCP, INSIDE, 40000, SERVER, 80, random, true, t,
                NatSourceMapping.NONE));
        // Random skips the "keep the port" steps: the free original port 40000 was never asked for.
        assertFalse(t.asked.contains(List.of(TCP, OUTSIDE, 40000, SERVER, 80)));
        assertFalse(t.asked.contains(List.of(TCP, INSIDE, 40000, SERVER, 80)));
    }

    @Test
    void theOffsetIsASixteenBitCounterThatWraps() {
        // Range 1024-65535 has 64512 ports; offset 65535 gives 1024 + 1023, the next offset wraps to 0: 1024.
        Table t = new Table().take(TCP, OUTSIDE, 2047, SERVER, 80);
        NatPortAllocator alloc = new NatPortAllocator(bound -> 65535);
        NfNatRange fully = new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_RANDOM_FULLY, OUTSIDE, OUTSIDE, 0, 0);
        assertEquals(pack(OUTSIDE, 1024), alloc.uniqueTuple(TCP, INSIDE, 40000, SERVER, 80, fully, true, t,
                NatSourceMapping.NONE));
    }

    @Test
    void anExhaustedSmallRangeGivesNoTupleAfterTryingEachPortOnce() {
        Table t = new Table();
        for (int p = 1000; p <= 1009; p++) {
            t.take(TCP, OUTSIDE, p, SERVER, 80);
        }
        assertEquals(NO_TUPLE, seeded(4).uniqueTuple(TCP, INSIDE, 1000, SERVER, 80, to(OUTSIDE, 1000, 1009), true, t,
                NatSourceMapping.NONE));
        Set<Integer> tried = new HashSet<>();
        for (List<Integer> q : t.asked) {
            tried.add(q.get(2));
        }
        assertEquals(Set.of(1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009), tried);
    }

    @Test
    void aFullLargeRangeIsSearchedInHalvingWindowsThenGivenUp() {
        int[] asked = {0};
        TupleInUse counting = (p, s, sp, d, dp) -> {
            asked[0]++;
            return true;
        };
        assertEquals(NO_TUPLE, seeded(5).uniqueTuple(TCP, INSIDE, 40000, SERVER, 80, to(OUTSIDE, 1024, 65535), true,
                counting, NatSourceMapping.NONE));
        // The original (in range, taken), then 128 + 64 + 32 + 16 + 8 candidates.
        assertEquals(1 + 128 + 64 + 32 + 16 + 8, asked[0]);
    }

    @Test
    void theSearchTellsTheTableHowManyTriesAreLeftInEachWindow() {
        List<Integer> left = new ArrayList<>();
        TupleInUse counting = new TupleInUse() {
            @Override
            public boolean inUse(int proto, int src, int srcPort, int dst, int dstPort) {
                return true;
            }

            @Override
            public boolean inUse(int proto, int src, int srcPort, int dst, int dstPort, int attemptsLeft) {
                left.add(attemptsLeft);
                return true;
            }
        };
        seeded(12).uniqueTuple(TCP, INSIDE, 40000, SERVER, 80, to(OUTSIDE, 1024, 65535), true, counting,
                NatSourceMapping.NONE);
        assertEquals(248, left.size());
        assertEquals(List.of(128, 127), left.subList(0, 2));
        assertEquals(1, left.get(127));
        assertEquals(64, left.get(128));
        assertEquals(List.of(8, 7, 6, 5, 4, 3, 2, 1), left.subList(240, 248));
    }

    @Test
    void aOnePortRangeIsTakenOrNothing() {
        assertEquals(pack(OUTSIDE, 5000), seeded(6).uniqueTuple(UDP, INSIDE, 40000, SERVER, 53, to(OUTSIDE, 5000, 5000),
                true, NOTHING_TAKEN, NatSourceMapping.NONE));
        Table t = new Table().take(UDP, OUTSIDE, 5000, SERVER, 53);
        assertEquals(NO_TUPLE, seeded(6).uniqueTuple(UDP, INSIDE, 40000, SERVER, 53, to(OUTSIDE, 5000, 5000), true, t,
                NatSourceMapping.NONE));
    }

    @Test
    void destinationNatWithoutPortsKeepsThePortEvenWhenTaken() {
        int backend = a("10.0.0.2");
        assertEquals(pack(backend, 80), seeded(7).uniqueTuple(TCP, SERVER, 5555, OUTSIDE, 80, to(backend), false,
                NOTHING_TAKEN, NatSourceMapping.NONE));
        // Destination NAT cannot move a port it was not given: the clash is left to source NAT at postrouting.
        assertEquals(pack(backend, 80), seeded(7).uniqueTuple(TCP, SERVER, 5555, OUTSIDE, 80, to(backend), false,
                EVERYTHING_TAKEN, NatSourceMapping.NONE));
    }

    @Test
    void destinationNatWithAPortRangeMovesTheDestinationPort() {
        int backend = a("10.0.0.2");
        Table t = new Table();
        long r = seeded(8).uniqueTuple(TCP, SERVER, 5555, OUTSIDE, 80, to(backend, 8080, 8089), false, t,
                NatSourceMapping.NONE);
        assertEquals(backend, addr(r));
        assertTrue(port(r) >= 8080 && port(r) <= 8089);
        // The question was about the destination port, the client's source port untouched.
        assertEquals(List.of(TCP, SERVER, 5555, backend, port(r)), t.asked.get(t.asked.size() - 1));
    }

    @Test
    void destinationNatFillsAPortRangeInOrderFromItsFirstPort() {
        // As a 6.18 kernel did for "dnat to 198.18.0.2:21000-21010" with 21000 and 21001 taken: 21002.
        int backend = a("198.18.0.2");
        Table t = new Table().take(UDP, INSIDE, 6000, backend, 21000).take(UDP, INSIDE, 6000, backend, 21001);
        NatPortAllocator neverDrawn = new NatPortAllocator(bound -> {
            throw new AssertionError("a destination NAT's first window is not random");
        });
        assertEquals(pack(backend, 21002), neverDrawn.uniqueTuple(UDP, INSIDE, 6000, a("198.18.0.50"), 5000,
                to(backend, 21000, 21010), false, t, NatSourceMapping.NONE));
        assertEquals(pack(backend, 21000), neverDrawn.uniqueTuple(UDP, INSIDE, 6003, a("198.18.0.50"), 5000,
                to(backend, 21000, 21010), false, t, NatSourceMapping.NONE));
    }

    @Test
    void destinationNatWithRandomDrawsItsStart() {
        int backend = a("198.18.0.2");
        NatPortAllocator alloc = new NatPortAllocator(bound -> 5);
        NfNatRange random = new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_SPECIFIED | NfNatRange.PROTO_RANDOM,
                backend, backend, 21000, 21010);
        assertEquals(pack(backend, 21005), alloc.uniqueTuple(UDP, INSIDE, 6000, a("198.18.0.50"), 5000, random, false,
                NOTHING_TAKEN, NatSourceMapping.NONE));
    }

    @Test
    void anEchoIdIsKeptWhenFreeAndMovedAnywhereInSixteenBitsOnAClash() {
        assertEquals(pack(OUTSIDE, 7), seeded(9).uniqueTuple(ICMP, INSIDE, 7, SERVER, 0x0800, to(OUTSIDE), true,
                NOTHING_TAKEN, NatSourceMapping.NONE));
        Set<Integer> ids = new HashSet<>();
        for (long seed = 0; seed < 50; seed++) {
            Table t = new Table().take(ICMP, OUTSIDE, 7, SERVER, 0x0800);
            long r = seeded(seed).uniqueTuple(ICMP, INSIDE, 7, SERVER, 0x0800, to(OUTSIDE), true, t,
                    NatSourceMapping.NONE);
            assertNotEquals(7, port(r));
            ids.add(port(r));
        }
        // Ids come from all of 0-65535, not the port class of 7 (1-511).
        assertTrue(ids.stream().anyMatch(i -> i > 511) && ids.size() > 40);
    }

    @Test
    void destinationNatOfAnEchoMovesTheIdNotAPort() {
        int backend = a("10.0.0.2");
        Table t = new Table().take(ICMP, SERVER, 7, backend, 0x0800);
        long r = seeded(10).uniqueTuple(ICMP, SERVER, 7, OUTSIDE, 0x0800, to(backend), false, t, NatSourceMapping.NONE);
        assertEquals(backend, addr(r));
        // Not random: the search starts at the bottom of 0-65535.
        assertEquals(0, port(r));
        assertEquals(List.of(ICMP, SERVER, 0, backend, 0x0800), t.asked.get(t.asked.size() - 1));
    }

    @Test
    void anEarlierMappingOfTheSameSourceIsReused() {
        NatSourceMapping earlier = (proto, src, srcPort, range) ->
                proto == UDP && src == INSIDE && srcPort == 5353 ? pack(OUTSIDE, 61000) : NO_TUPLE;
        long r = seeded(11).uniqueTuple(UDP, INSIDE, 5353, a("198.19.9.9"), 53, to(OUTSIDE), true, NOTHING_TAKEN, earlier);
        assertEquals(pack(OUTSIDE, 61000), r);
    }

    @Test
    void theAddressIsTheSameForTheSamePairAndSpreadOverTheRange() {
        NfNatRange pool = new NfNatRange(NfNatRange.MAP_IPS, a("198.18.0.10"), a("198.18.0.19"), 0, 0);
        Set<Integer> used = new HashSet<>();
        for (int i = 1; i <= 200; i++) {
            int src = a("10.0.0.0") + i;
            int chosen = NatPortAllocator.bestAddress(src, SERVER, pool);
            assertEquals(chosen, NatPortAllocator.bestAddress(src, SERVER, pool));
            assertTrue(Integer.compareUnsigned(chosen, pool.minAddr()) >= 0
                    && Integer.compareUnsigned(chosen, pool.maxAddr()) <= 0);
            used.add(chosen);
        }
        assertEquals(10, used.size(), "200 sources reach every one of 10 addresses");
    }

    @Test
    void persistentKeepsASourcesAddressWhateverItTalksTo() {
        NfNatRange pool = new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PERSISTENT, a("198.18.0.10"),
                a("198.18.0.19"), 0, 0);
        NfNatRange plain = new NfNatRange(NfNatRange.MAP_IPS, a("198.18.0.10"), a("198.18.0.19"), 0, 0);
        Set<Integer> persistent = new HashSet<>();
        Set<Integer> perPair = new HashSet<>();
        for (int d = 1; d <= 50; d++) {
            persistent.add(NatPortAllocator.bestAddress(INSIDE, a("198.19.0.0") + d, pool));
            perPair.add(NatPortAllocator.bestAddress(INSIDE, a("198.19.0.0") + d, plain));
        }
        assertEquals(1, persistent.size());
        assertTrue(perPair.size() > 1);
    }

    /**
     * A 6.18 kernel's choices (nftables {@code snat to 198.19.0.10-198.19.0.19}, datagrams from 198.18.0.1 to
     * 198.18.0.100 ... 198.18.0.139, captured on the peer): the last octet of the source each got. With
     * {@code persistent} every one got 198.19.0.11.
     */
    private static final int[] KERNEL_CHOICES = {14, 18, 10, 14, 19, 18, 11, 17, 16, 11, 17, 11, 13, 13, 18, 14, 15, 10, 17, 16, 14, 15, 11, 15, 18, 10, 16, 11, 14, 13, 19, 19, 14, 13, 18, 10, 11, 16, 14, 10};

    @Test
    void theAddressChoiceIsTheKernelsForFortyDestinations() {
        NfNatRange pool = new NfNatRange(NfNatRange.MAP_IPS, a("198.19.0.10"), a("198.19.0.19"), 0, 0);
        NfNatRange persistent = new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PERSISTENT, a("198.19.0.10"),
                a("198.19.0.19"), 0, 0);
        int src = a("198.18.0.1");
        for (int i = 0; i < KERNEL_CHOICES.length; i++) {
            int dst = a("198.18.0." + (100 + i));
            assertEquals(a("198.19.0." + KERNEL_CHOICES[i]), NatPortAllocator.bestAddress(src, dst, pool), "to " + dst);
            assertEquals(a("198.19.0.11"), NatPortAllocator.bestAddress(src, dst, persistent));
        }
    }

    @Test
    void theAddressHashIsLookup3OverTheSourceSeededWithTheDestination() {
        // Jenkins' hashword over the 16-byte address field (IPv4 address as loaded little-endian, then zeros),
        // computed here step by step with the mix and final this class shares with the published vectors.
        NfNatRange pool = new NfNatRange(NfNatRange.MAP_IPS, a("198.18.0.0"), a("198.18.0.255"), 0, 0);
        int src = INSIDE;
        int dst = SERVER;
        int[] abc = new int[3];
        int init = Jhash.INITVAL + 16 + Integer.reverseBytes(dst);
        abc[0] = init + Integer.reverseBytes(src);
        abc[1] = init;
        abc[2] = init;
        Jhash.mix(abc);
        int c = Jhash.fin(abc[0], abc[1], abc[2]);
        int expected = pool.minAddr() + (int) (((c & 0xffff_ffffL) * 256) >>> 32);
        assertEquals(expected, NatPortAllocator.bestAddress(src, dst, pool));
    }

    @Test
    void jenkinsPublishedVectorsHoldForTheMixAndFinalUsed() {
        assertEquals(0xdeadbeef, hashlittle(new byte[0], 0));
        assertEquals(0xbd5b7dde, hashlittle(new byte[0], 0xdeadbeef));
        assertEquals(0x17770551, hashlittle("Four score and seven years ago".getBytes(), 0));
    }

    /** lookup3's hashlittle for a byte string, built on {@link Jhash#mix} and {@link Jhash#fin}. */
    private static int hashlittle(byte[] k, int initval) {
        int[] abc = new int[3];
        int init = Jhash.INITVAL + k.length + initval;
        abc[0] = init;
        abc[1] = init;
        abc[2] = init;
        int len = k.length;
        int off = 0;
        while (len > 12) {
            abc[0] += le(k, off, 4);
            abc[1] += le(k, off + 4, 4);
            abc[2] += le(k, off + 8, 4);
            Jhash.mix(abc);
            len -= 12;
            off += 12;
        }
        if (len == 0) {
            return abc[2];
        }
        abc[0] += le(k, off, Math.min(4, len));
        if (len > 4) {
            abc[1] += le(k, off + 4, Math.min(4, len - 4));
        }
        if (len > 8) {
            abc[2] += le(k, off + 8, len - 8);
        }
        return Jhash.fin(abc[0], abc[1], abc[2]);
    }

    private static int le(byte[] k, int off, int n) {
        int v = 0;
        for (int i = 0; i < n; i++) {
            v |= (k[off + i] & 0xff) << (8 * i);
        }
        return v;
    }
}
