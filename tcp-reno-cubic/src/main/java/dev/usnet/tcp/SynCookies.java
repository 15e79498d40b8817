package dev.usnet.tcp;

import dev.usnet.core.stack.NetStack;

/**
 * SYN cookies (RFC 4987; Linux's syncookies.c): a listener whose SYN queue overflows (or every listener, with
 * net.ipv4.tcp_syncookies = 2) answers a SYN without keeping state, putting in the SYN-ACK's sequence number a
 * keyed hash of the 4-tuple, a counter that advances every 60 s and the index of the peer's MSS in
 * {@link #MSS_TABLE}; with timestamps, the low 6 bits of the SYN-ACK's TS value carry the peer's window scale and
 * whether it offered SACK (and ECN). The final ACK gives all of it back: a cookie from this or the previous
 * period whose hash matches makes the connection; anything else is counted as failed. The keys are drawn per
 * namespace from its random source when the first cookie is made.
 */
final class SynCookies {
    /** Linux's msstab: the MSS a cookie can say (the largest not above the peer's), by 2-bit index. */
    static final int[] MSS_TABLE = {536, 1300, 1440, 1460};
    static final int COOKIE_BITS = 24;
    static final long COOKIE_MASK = (1L << COOKIE_BITS) - 1;
    /** TCP_SYNCOOKIE_PERIOD: the counter advances every minute. */
    static final long PERIOD_NANOS = 60_000_000_000L;
    /** MAX_SYNCOOKIE_AGE: a cookie is good in the period it was made and the next. */
    static final int MAX_AGE = 2;
    /** TCP_SYNCOOKIE_VALID: final ACKs are checked as cookies only this long after the last cookie was sent. */
    static final long VALID_NANOS = MAX_AGE * PERIOD_NANOS;
    /** The option bits in a cookie's TS value (TSBITS, TS_OPT_WSCALE_MASK, TS_OPT_SACK, TS_OPT_ECN). */
    static final int TS_BITS = 6;
    static final int TS_WSCALE_MASK = 0xf;
    static final int TS_SACK = 0x10;
    static final int TS_ECN = 0x20;

    /** What a cookie's timestamp echo says (cookie_timestamp_decode), packed: {@link #REJECT} or these bits. */
    static final int REJECT = -1;
    static final int OPT_TS = 0x100;
    static final int OPT_SACK = 0x200;
    static final int OPT_WSCALE = 0x400;

    private final NetStack stack;
    // syncookie_secret[0], [1] and the timestamp-offset key, two longs each; null until the first cookie.
    private long[] keys;

    SynCookies(NetStack stack) {
        this.stack = stack;
    }

    private long[] keys() {
        if (keys == null) {
            long[] k = new long[6];
            for (int i = 0; i < k.length; i++) {
                k[i] = stack.random().nextLong();
            }
            keys = k;
        }
        return keys;
    }

    /** tcp_cookie_time: the 60-second period {@code now} falls in. */
    static long counter(long now) {
        return Long.divideUnsigned(now, PERIOD_NANOS) & 0xffff_ffffL;
    }

    /** The index in {@link #MSS_TABLE} of the largest MSS not above {@code mss} (0 for anything below 536). */
    static int mssIndex(int mss) {
        int i = MSS_TABLE.length - 1;
        while (i > 0 && mss < MSS_TABLE[i]) {
            i--;
        }
        return i;
    }

    private long hash(int saddr, int daddr, int sport, int dport, long count, int c) {
        long[] k = keys();
        return SipHash.hash4(k[2 * c], k[2 * c + 1], saddr, daddr, sport << 16 | dport, (int) count) & 0xffff_ffffL;
    }

    /**
     * secure_tcp_syn_cookie: the initial sequence number for a SYN from {@code saddr}:{@code sport} to
     * {@code daddr}:{@code dport} with sequence number {@code seq}, encoding {@code mssIndex} and the period.
     */
    long initSequence(int saddr, int daddr, int sport, int dport, long seq, int mssIndex, long now) {
        long count = counter(now);
        long cookie = hash(saddr, daddr, sport, dport, 0, 0) + seq + (count << COOKIE_BITS)
                + (hash(saddr, daddr, sport, dport, count, 1) + mssIndex & COOKIE_MASK);
        return cookie & 0xffff_ffffL;
    }

    /**
     * __cookie_v4_check: the MSS a final ACK's cookie encodes, or 0 when it is not one of ours, is older than
     * {@link #MAX_AGE} periods, or its index is out of the table. {@code ack} and {@code seq} are the ACK's own
     * numbers (the cookie is {@code ack - 1}, the peer's ISN {@code seq - 1}).
     */
    int check(int saddr, int daddr, int sport, int dport, long ack, long seq, long now) {
        long count = counter(now);
        long cookie = ack - 1 - hash(saddr, daddr, sport, dport, 0, 0) - (seq - 1) & 0xffff_ffffL;
        long diff = count - (cookie >>> COOKIE_BITS) & (0xffff_ffffL >>> COOKIE_BITS);
        if (diff >= MAX_AGE) {
            return 0;
        }
        long mssIndex = cookie - hash(saddr, daddr, sport, dport, count - diff & 0xffff_ffffL, 1) & COOKIE_MASK;
        return mssIndex < MSS_TABLE.length ? MSS_TABLE[(int) mssIndex] : 0;
    }

    /**
     * An IPv6 address folded to the 32 bits the cookie and timestamp-offset hashes take, by a keyed hash of all its
     * 128 bits (Linux hashes the whole addresses at once, __cookie_v6_init_sequence; folding first keeps one
     * arithmetic for both families, and the key keeps the fold unpredictable to a peer choosing addresses).
     */
    int fold6(long hi, long lo) {
        long[] k = keys();
        return (int) SipHash.hash4(k[4], k[5], (int) (hi >>> 32), (int) hi, (int) (lo >>> 32), (int) lo);
    }

    /**
     * secure_tcp_ts_off: the timestamp offset of a connection from {@code laddr} to {@code raddr}, a keyed hash of
     * the addresses, so the final ACK's echo can be read back without state.
     */
    long tsOffset(int laddr, int raddr) {
        long[] k = keys();
        return SipHash.hash2(k[4], k[5], laddr, raddr) & 0xffff_ffffL;
    }

    /**
     * cookie_init_timestamp: {@code tsNowMs} (the clock without the offset) with its low 6 bits replaced by the
     * options (the peer's window scale or 0xf for none, SACK), never ahead of the clock.
     */
    static long initTimestamp(long tsNowMs, boolean wscaleOk, int sndWscale, boolean sackOk) {
        long options = wscaleOk ? sndWscale : TS_WSCALE_MASK;
        if (sackOk) {
            options |= TS_SACK;
        }
        long now = tsNowMs & 0xffff_ffffL;
        long ts = now >>> TS_BITS << TS_BITS | options;
        if (ts > now) {
            ts -= 1L << TS_BITS;
        }
        return ts & 0xffff_ffffL;
    }

    /**
     * cookie_timestamp_decode: the options a final ACK's timestamp echo (offset removed) recovers, or
     * {@link #REJECT} when it claims one this namespace no longer allows. Without a timestamp the connection gets
     * none of them.
     */
    static int decodeTimestamp(boolean sawTs, long echo, boolean timestamps, boolean sack, boolean windowScaling) {
        if (!sawTs) {
            return 0;
        }
        if (!timestamps) {
            return REJECT;
        }
        int r = OPT_TS;
        if ((echo & TS_SACK) != 0) {
            if (!sack) {
                return REJECT;
            }
            r |= OPT_SACK;
        }
        int ws = (int) (echo & TS_WSCALE_MASK);
        if (ws == TS_WSCALE_MASK) {
            return r;
        }
        if (!windowScaling) {
            return REJECT;
        }
        return r | OPT_WSCALE | ws;
    }
}
