package dev.usnet.core.ipv4;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * ICMP output rate limits as Linux applies them: a namespace-wide token bucket (icmp_msgs_per_sec,
 * icmp_msgs_burst) and a per-destination bucket (icmp_ratelimit ms per message, bursts of six, the
 * inet_peer XRLIM rule), for the types in icmp_ratemask; redirects follow their own exponential back-off
 * (ip_rt_send_redirect: 9 redirects, 20 ms doubling, reset after 20 s of silence).
 */
final class IcmpRateLimiter {
    private static final int BURST_FACTOR = 6;
    private static final int PEERS = 4096;
    private static final long REDIRECT_LOAD_NS = 20_000_000L;
    private static final int REDIRECT_NUMBER = 9;
    private static final long REDIRECT_SILENCE_NS = REDIRECT_LOAD_NS << (REDIRECT_NUMBER + 1);

    private static final class Peer {
        long rateLast;
        long rateTokens;
        int redirects;
        long redirectLast;
    }

    private final Map<Integer, Peer> peers = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Peer> e) {
            return size() > PEERS;
        }
    };
    private long globalTokens = -1;
    private long globalLast;

    private Peer peer(int addr, long now) {
        return peers.computeIfAbsent(addr, a -> {
            Peer p = new Peer();
            p.rateLast = now - 60_000_000_000L;
            return p;
        });
    }

    boolean globalAllow(long now, int perSec, int burst) {
        if (perSec == 0) {
            return true;
        }
        if (globalTokens < 0) {
            globalTokens = burst;
            globalLast = now;
        }
        long elapsed = now - globalLast;
        long refill = elapsed * perSec / 1_000_000_000L;
        if (refill > 0) {
            globalTokens = Math.min(burst, globalTokens + refill);
            globalLast = now;
        }
        if (globalTokens > 0) {
            globalTokens--;
            return true;
        }
        return false;
    }

    boolean peerAllow(int dst, long now, long timeoutNs) {
        if (timeoutNs == 0) {
            return true;
        }
        Peer p = peer(dst, now);
        long token = p.rateTokens + (now - p.rateLast);
        p.rateLast = now;
        token = Math.min(token, BURST_FACTOR * timeoutNs);
        boolean ok = token >= timeoutNs;
        if (ok) {
            token -= timeoutNs;
        }
        p.rateTokens = token;
        return ok;
    }

    boolean redirectAllow(int dst, long now) {
        Peer p = peer(dst, now);
        if (now - p.redirectLast > REDIRECT_SILENCE_NS) {
            p.redirects = 0;
        }
        if (p.redirects >= REDIRECT_NUMBER) {
            p.redirectLast = now;
            return false;
        }
        if (p.redirects == 0 || now - p.redirectLast > (REDIRECT_LOAD_NS << p.redirects)) {
            p.redirects++;
            p.redirectLast = now;
            return true;
        }
        return false;
    }
}
