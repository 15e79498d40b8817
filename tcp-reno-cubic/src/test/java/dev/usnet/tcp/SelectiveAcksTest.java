package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The receiver's SACK block list: RFC 2018 section 4 ordering, RFC 2883 D-SACK, Linux's four blocks. */
class SelectiveAcksTest {

    /** What one ACK would carry with {@code room} blocks of option space, as start,end pairs. */
    private static long[] sent(SelectiveAcks a, int room) {
        long[] s = new long[4];
        long[] e = new long[4];
        int n = a.write(s, e, room);
        long[] out = new long[2 * n];
        for (int i = 0; i < n; i++) {
            out[2 * i] = s[i];
            out[2 * i + 1] = e[i];
        }
        return out;
    }

    @Test
    void newBlockComesFirstAndTheOthersFollowMostRecentFirst() {
        SelectiveAcks a = new SelectiveAcks();
        a.newOfoSegment(2000, 3000);
        a.newOfoSegment(4000, 5000);
        a.newOfoSegment(6000, 7000);
        assertArrayEquals(new long[] {6000, 7000, 4000, 5000, 2000, 3000}, sent(a, 4));
        // A segment extending an older block moves that block to the front.
        a.newOfoSegment(3000, 3500);
        assertArrayEquals(new long[] {2000, 3500, 6000, 7000, 4000, 5000}, sent(a, 4));
    }

    @Test
    void extendingABlockMergesTheBlocksItNowTouches() {
        SelectiveAcks a = new SelectiveAcks();
        a.newOfoSegment(2000, 3000);
        a.newOfoSegment(4000, 5000);
        a.newOfoSegment(8000, 9000);
        // Fills the gap between the first two: one block 2000-5000, reported first.
        a.newOfoSegment(3000, 4000);
        assertEquals(2, a.count());
        assertArrayEquals(new long[] {2000, 5000, 8000, 9000}, sent(a, 4));
        // Overlapping on both sides (a retransmission covering more) widens without a new block.
        a.newOfoSegment(7500, 9500);
        assertArrayEquals(new long[] {7500, 9500, 2000, 5000}, sent(a, 4));
    }

    @Test
    void atMostFourBlocksAreKeptAndThreeFitNextToTimestamps() {
        SelectiveAcks a = new SelectiveAcks();
        for (int i = 0; i < 6; i++) {
            a.newOfoSegment(10_000 + 2000L * i, 11_000 + 2000L * i);
        }
        assertEquals(SelectiveAcks.MAX_BLOCKS, a.count());
        // The oldest (10000 and 12000) fell off; the newest first.
        assertArrayEquals(new long[] {20_000, 21_000, 18_000, 19_000, 16_000, 17_000, 14_000, 15_000}, sent(a, 4));
        assertArrayEquals(new long[] {20_000, 21_000, 18_000, 19_000, 16_000, 17_000}, sent(a, 3));
    }

    @Test
    void blocksGoAwayWhenRcvNxtReachesThem() {
        SelectiveAcks a = new SelectiveAcks();
        a.newOfoSegment(2000, 3000);
        a.newOfoSegment(4000, 5000);
        a.advance(1500);
        assertEquals(2, a.count());
        // The hole before 2000 filled: rcv_nxt ran to 3000, the first block is covered by the cumulative ACK.
        a.advance(3000);
        assertArrayEquals(new long[] {4000, 5000}, sent(a, 4));
        a.advance(5000);
        assertEquals(0, a.count());
        assertEquals(0, sent(a, 4).length);
    }

    @Test
    void dsackGoesFirstOnceAndTakesARoomOfTheOption() {
        SelectiveAcks a = new SelectiveAcks();
        a.newOfoSegment(2000, 3000);
        a.newOfoSegment(4000, 5000);
        a.newOfoSegment(6000, 7000);
        a.duplicate(500, 1000);
        assertTrue(a.hasDsack());
        assertEquals(3, a.pending(3));
        // With timestamps: the D-SACK and the two most recent blocks.
        assertArrayEquals(new long[] {500, 1000, 6000, 7000, 4000, 5000}, sent(a, 3));
        assertFalse(a.hasDsack(), "a duplicate is reported once");
        assertArrayEquals(new long[] {6000, 7000, 4000, 5000, 2000, 3000}, sent(a, 3));
    }

    @Test
    void dsackOfDuplicateOutOfOrderDataAndItsExtension() {
        SelectiveAcks a = new SelectiveAcks();
        a.newOfoSegment(2000, 4000);
        // RFC 2883 section 4.1.3: the duplicate lies inside the block that follows it.
        a.duplicate(2000, 3000);
        a.duplicate(3000, 3500);
        assertArrayEquals(new long[] {2000, 3500, 2000, 4000}, sent(a, 4));
        // Two duplicates that do not touch: the later one is reported.
        a.duplicate(100, 200);
        a.duplicate(300, 400);
        assertArrayEquals(new long[] {300, 400, 2000, 4000}, sent(a, 4));
    }

    @Test
    void sequenceNumbersWrap() {
        SelectiveAcks a = new SelectiveAcks();
        a.newOfoSegment(0xffff_fc00L, 0xffff_ffffL);
        a.newOfoSegment(0xffff_ffffL, 0x200L);
        assertArrayEquals(new long[] {0xffff_fc00L, 0x200L}, sent(a, 4));
        a.advance(0x100L);
        assertEquals(0, a.count());
    }
}
