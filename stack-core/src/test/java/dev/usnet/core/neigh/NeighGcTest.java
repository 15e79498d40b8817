package dev.usnet.core.neigh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TestNet;
import dev.usnet.core.wire.ArpPacket;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import org.junit.jupiter.api.Test;

/**
 * The neighbour table's bounds as Linux's: gc_thresh3 is a hard limit that only a forced GC of failed or 5-second-old
 * entries can make room under, gc_thresh2 forces that GC at most every 5 s, gc_thresh1 lets the periodic GC remove
 * entries unused for gc_stale_time, and entries a timer holds (resolving, reachable) are never forced out.
 */
class NeighGcTest {
    static final long R1 = 0x0200_0000_0101L;
    static final long R2 = 0x0200_0000_0102L;
    static final long H1 = 0x0200_0000_aa01L;
    static final long SEC = 1_000_000_000L;

    private static final class Router implements AutoCloseable {
        final TestNet net = new TestNet();
        final NetStack r = net.ns("r");
        final TestNet.Wire w1 = net.wire(r, "r1", R1);
        final TestNet.Wire w2 = net.wire(r, "r2", R2);

        Router() {
            r.knobs().set("net.ipv4.ip_forward", "1");
            r.knobs().set("net.ipv4.neigh.default.gc_thresh1", "4");
            r.knobs().set("net.ipv4.neigh.default.gc_thresh2", "8");
            r.knobs().set("net.ipv4.neigh.default.gc_thresh3", "16");
            TestNet.addr(r, w1.dutEnd, "198.18.1.1/24");
            TestNet.addr(r, w2.dutEnd, "198.18.0.1/16");
            r.neigh().addPermanent(w1.dutEnd, Ipv4Addr.parse("198.18.1.2"), H1);
        }

        /** An ARP request for the router's r2 address from host {@code i} of 198.18.0.0/16. */
        void arpFrom(int i) {
            long mac = 0x0200_1000_0000L + i;
            w2.send(Frames.arp(mac, MacAddr.BROADCAST, ArpPacket.OP_REQUEST, mac, host(i), 0, "198.18.0.1"));
        }

        static String host(int i) {
            return Ipv4Addr.format(Ipv4Addr.parse("198.18.100.0") + i);
        }

        int repliesOnR2() {
            int n = 0;
            for (byte[] f : w2.frames()) {
                if (Frames.u16(f, 12) == 0x0806 && Frames.u16(f, 14 + ArpPacket.OP) == ArpPacket.OP_REPLY) {
                    n++;
                }
            }
            return n;
        }

        @Override
        public void close() {
            net.close();
        }
    }

    @Test
    void anArpFloodFillsTheTableToGcThresh3AndFindsRoomOnlyForEntriesOlderThanFiveSeconds() {
        try (Router t = new Router()) {
            for (int i = 0; i < 40; i++) {
                t.arpFrom(i);
            }
            t.net.settle();
            // 16 of gc_thresh3 plus the permanent entry, which the limits do not count.
            assertEquals(17, t.r.neigh().size());
            assertEquals(16, t.repliesOnR2(), "no entry, no reply (arp_process answers only when neigh_event_ns could)");
            assertEquals(24, t.r.mib().get(Mib.NeighTableOverflow));
            assertEquals(24, t.r.drops().get(DropReason.NEIGH_CREATEFAIL), "each unanswered request is counted");
            // Six seconds on, the oldest are fair game: a forced GC takes the table down to gc_thresh2, oldest first.
            t.net.run(6 * SEC);
            t.w2.clear();
            for (int i = 100; i < 110; i++) {
                t.arpFrom(i);
            }
            t.net.settle();
            assertEquals(10, t.repliesOnR2());
            assertTrue(t.r.neigh().size() <= 17, "size " + t.r.neigh().size());
            assertNull(t.r.neigh().lookup(t.w2.dutEnd, Ipv4Addr.parse(Router.host(0))), "the oldest went first");
            assertNotNull(t.r.neigh().lookup(t.w2.dutEnd, Ipv4Addr.parse(Router.host(109))));
            assertNotNull(t.r.neigh().lookup(t.w1.dutEnd, Ipv4Addr.parse("198.18.1.2")), "permanent entries stay");
            assertEquals(24, t.r.mib().get(Mib.NeighTableOverflow));
        }
    }

    @Test
    void packetsToUnresolvedNextHopsStopAtGcThresh3WhileTheyResolveThenFailedEntriesMakeRoom() {
        try (Router t = new Router()) {
            for (int i = 0; i < 40; i++) {
                t.w1.send(Frames.udp(H1, R1, "198.18.1.2", Router.host(1000 + i), 64, 100, i, false));
            }
            t.net.settle();
            assertEquals(17, t.r.neigh().size());
            assertEquals(24, t.r.drops().get(DropReason.NEIGH_CREATEFAIL),
                    "resolving entries hold a timer: nothing to force out");
            assertEquals(16 * (14 + 20 + 8 + 100 + NeighTable.TRUESIZE_OVERHEAD), t.r.neigh().queuedBytes(),
                    "one packet queued per resolving entry");
            // After three solicitations each entry fails, its packet answered with host unreachable.
            t.net.run(4 * SEC);
            assertEquals(0, t.r.neigh().queuedBytes());
            assertEquals(16, t.r.drops().get(DropReason.NEIGH_FAILED));
            // Failed entries are the first a forced GC removes, so new next hops resolve again.
            t.w1.send(Frames.udp(H1, R1, "198.18.1.2", Router.host(2000), 64, 100, 99, false));
            t.net.settle();
            assertNotNull(t.r.neigh().lookup(t.w2.dutEnd, Ipv4Addr.parse(Router.host(2000))));
            assertEquals(24, t.r.drops().get(DropReason.NEIGH_CREATEFAIL));
            assertTrue(t.r.neigh().forcedGcRuns() > 0);
        }
    }

    @Test
    void anEntryFailingIsNotCollectedByTheGcItsOwnIcmpErrorsForce() {
        try (Router t = new Router()) {
            t.r.knobs().set("net.ipv4.neigh.default.gc_thresh2", "1");
            t.r.knobs().set("net.ipv4.neigh.default.gc_thresh3", "2");
            t.net.run(6 * SEC);
            // From a host the router has no entry for, two packets to an unresolved next hop.
            long h3 = 0x0200_0000_aa03L;
            t.w1.send(Frames.udp(h3, R1, "198.18.1.3", Router.host(7), 64, 20, 1, false));
            t.w1.send(Frames.udp(h3, R1, "198.18.1.3", Router.host(7), 64, 20, 2, false));
            t.net.run(4 * SEC);
            // The failing entry's host unreachables need an entry for 198.18.1.3, whose creation forces a GC; the
            // failing entry is held while its handler runs, so its second packet is answered too, not dropped.
            assertEquals(0, t.r.drops().get(DropReason.NEIGH_DEAD));
            assertEquals(2, t.r.drops().get(DropReason.NEIGH_FAILED));
            Neighbour back = t.r.neigh().lookup(t.w1.dutEnd, Ipv4Addr.parse("198.18.1.3"));
            assertNotNull(back);
            assertEquals(2, back.queued(), "both errors wait for 198.18.1.3's resolution");
        }
    }

    @Test
    void aReachableEntryIsNeverForcedOut() {
        try (Router t = new Router()) {
            String legit = Router.host(5000);
            long legitMac = 0x0200_2000_0001L;
            t.w1.send(Frames.udp(H1, R1, "198.18.1.2", legit, 64, 20, 1, false));
            t.net.settle();
            t.w2.send(Frames.arp(legitMac, R2, ArpPacket.OP_REPLY, legitMac, legit, R2, "198.18.0.1"));
            t.net.settle();
            Neighbour n = t.r.neigh().lookup(t.w2.dutEnd, Ipv4Addr.parse(legit));
            assertEquals(NudState.REACHABLE, n.state());
            t.net.run(6 * SEC);
            for (int i = 0; i < 60; i++) {
                t.arpFrom(i);
            }
            t.net.settle();
            assertEquals(NudState.REACHABLE, n.state());
            assertEquals(n, t.r.neigh().lookup(t.w2.dutEnd, Ipv4Addr.parse(legit)), "still in the table");
        }
    }

    @Test
    void fromGcThresh1ThePeriodicGcRemovesEntriesUnusedForGcStaleTime() {
        try (Router t = new Router()) {
            for (int i = 0; i < 6; i++) {
                t.arpFrom(i);
            }
            t.net.settle();
            assertEquals(7, t.r.neigh().size());
            t.net.run(50 * SEC);
            assertEquals(7, t.r.neigh().size(), "unused for less than gc_stale_time (60 s)");
            t.net.run(30 * SEC);
            assertEquals(1, t.r.neigh().size(), "only the permanent entry is left");
        }
    }

    @Test
    void belowGcThresh1NothingIsCollected() {
        try (Router t = new Router()) {
            t.r.knobs().set("net.ipv4.neigh.default.gc_thresh1", "128");
            t.arpFrom(1);
            t.net.settle();
            t.net.run(200 * SEC);
            assertEquals(2, t.r.neigh().size(), "a small table keeps its stale entries, as Linux's");
        }
    }
}
