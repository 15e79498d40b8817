package dev.usnet.core.ipv4;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per-remote-address state that Linux keeps in its inet_peer cache and that three rate limits share, in
 * jiffies: ICMP errors (icmpv4_xrlim_allow: icmp_ratelimit per message, bursts of six), routing errors
 * (ip_error: one per second, bursts of five) and redirects (ip_rt_send_redirect: nine, 20 ms doubling,
 * reset after silence). Because they share rate_tokens and rate_last, one limit affects the others exactly as
 * in the kernel: e.g. with icmp_ratelimit 0 an ICMP error in a later jiffy empties the ip_error bucket.
 */
final class InetPeers {
    private static final int XRLIM_BURST_FACTOR = 6;
    private static final int PEERS = 4096;
    private static final int REDIRECT_NUMBER = 9;

    private static final class Peer {
        long rateTokens;
        long rateLast;
        int redirects;
    }

    // Made by the first peer (most namespaces never send an ICMP error or a redirect).
    private Map<Integer, Peer> peers;
    private long globalCredit = Long.MIN_VALUE;
    private long globalStamp;

    private Peer peer(int addr, long nowJ, int hz) {
        if (peers == null) {
            peers = new LinkedHashMap<>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Integer, Peer> e) {
                    return size() > PEERS;
                }
            };
        }
        return peers.computeIfAbsent(addr, a -> {
            Peer p = new Peer();
            // As inet_getpeer: far enough in the past that the first computation yields a full bucket.
            p.rateLast = nowJ - 60L * hz;
            return p;
        });
    }

    /**
     * icmp_global_allow: icmp_msgs_per_sec with icmp_msgs_burst, namespace-wide. While credit is left, yes; once
     * it is spent, the bucket is refilled only after at least HZ/50 jiffies (20 ms) and by what that time is worth
     * (at most a second's), so the long-run rate is icmp_msgs_per_sec. A message that is sent then spends a credit
     * ({@link #globalConsume}).
     */
    boolean globalAllow(long nowJ, int hz, int perSec, int burst) {
        if (perSec == 0) {
            return true;
        }
        if (globalCredit == Long.MIN_VALUE) {
            globalCredit = burst;
            globalStamp = nowJ - hz;
        }
        if (globalCredit > 0) {
            return true;
        }
        long delta = Math.min(nowJ - globalStamp, hz);
        if (delta < hz / 50) {
            return false;
        }
        long incr = perSec * delta / hz;
        if (incr == 0) {
            return false;
        }
        globalStamp = nowJ;
        globalCredit = Math.min(globalCredit + incr, burst);
        return true;
    }

    /**
     * icmp_global_consume: an ICMP error passed both limits and goes out. Linux spends a random 0 to 2 credits (1 on
     * average, so the bucket's state cannot be read from outside); usnet spends exactly 1, keeping runs comparable.
     */
    void globalConsume() {
        if (globalCredit != Long.MIN_VALUE) {
            globalCredit--;
        }
    }

    /** inet_peer_xrlim_allow with {@code timeoutJ} jiffies per message; time advances only in a new jiffy. */
    boolean xrlimAllow(int dst, long nowJ, int hz, long timeoutJ) {
        Peer p = peer(dst, nowJ, hz);
        long token = p.rateTokens;
        long delta = nowJ - p.rateLast;
        if (delta != 0) {
            p.rateLast = nowJ;
            token = Math.min(token + delta, XRLIM_BURST_FACTOR * timeoutJ);
        }
        boolean ok = token >= timeoutJ;
        if (ok) {
            token -= timeoutJ;
        }
        p.rateTokens = token;
        return ok;
    }

    /** ip_error: routing errors cost ip_rt_error_cost (1 s) from a bucket of ip_rt_error_burst (5 s). */
    boolean ipErrorAllow(int src, long nowJ, int hz) {
        Peer p = peer(src, nowJ, hz);
        long cost = hz;
        long burst = 5L * hz;
        p.rateTokens = Math.min(p.rateTokens + (nowJ - p.rateLast), burst);
        p.rateLast = nowJ;
        if (p.rateTokens >= cost) {
            p.rateTokens -= cost;
            return true;
        }
        return false;
    }

    /** ip_rt_send_redirect's back-off: returns true when a redirect may go out now. */
    boolean redirectAllow(int src, long nowJ, int hz) {
        Peer p = peer(src, nowJ, hz);
        long load = Math.max(1, hz / 50);
        long silence = load << (REDIRECT_NUMBER + 1);
        if (nowJ - p.rateLast > silence) {
            p.rateTokens = 0;
            p.redirects = 0;
        }
        if (p.redirects >= REDIRECT_NUMBER) {
            p.rateLast = nowJ;
            return false;
        }
        if (p.redirects == 0 || nowJ - p.rateLast > (load << p.redirects)) {
            p.rateLast = nowJ;
            p.redirects++;
            return true;
        }
        return false;
    }
}
