package dev.usnet.core.ipv6;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The per-peer token buckets IPv6 rate-limits its errors and redirects with (inet_peer and
 * inet_peer_xrlim_allow): each peer earns a token per jiffy up to six timeouts' worth and spends a timeout's worth
 * per message; a new peer starts with a full bucket. Touched only on the error path, so a map keyed by address is
 * fine.
 */
final class Inet6Peers {
    /** XRLIM_BURST_FACTOR: how many timeouts' worth of tokens a peer may save up. */
    private static final int BURST_FACTOR = 6;
    /** Linux backdates a new peer's last refill by 60 s, which fills its bucket. */
    private static final long NEW_PEER_BACKDATE_S = 60;

    private record Key(long hi, long lo) {}

    private static final class Bucket {
        long tokens;
        long last;
    }

    /**
     * At most this many peers, the least recently used forgotten first — the bound IPv4's {@code InetPeers} keeps too
     * (Linux's inet_peer cache is garbage-collected above inet_peer_threshold): errors to ever new sources, as a scan
     * or a fuzzer sends, must not grow the namespace without end. A forgotten peer starts again with a full bucket.
     */
    static final int PEERS = 4096;

    private final Map<Key, Bucket> peers = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, Bucket> e) {
            return size() > PEERS;
        }
    };

    /** How many peers are remembered now. */
    int size() {
        return peers.size();
    }

    /** Whether a message to {@code hi}/{@code lo} may go now ({@code nowJ} jiffies), {@code timeoutJ} apart on average. */
    boolean allow(long hi, long lo, long nowJ, int hz, long timeoutJ) {
        Bucket b = peers.get(new Key(hi, lo));
        if (b == null) {
            b = new Bucket();
            b.last = nowJ - NEW_PEER_BACKDATE_S * hz;
            peers.put(new Key(hi, lo), b);
        }
        long token = b.tokens + (nowJ - b.last);
        b.last = nowJ;
        if (token > BURST_FACTOR * timeoutJ) {
            token = BURST_FACTOR * timeoutJ;
        }
        boolean ok = false;
        if (token >= timeoutJ) {
            token -= timeoutJ;
            ok = true;
        }
        b.tokens = token;
        return ok;
    }
}
