package dev.usnet.core.buf;

/**
 * What forwarding does to a packet whose bytes are shared with another holder before it edits headers
 * (knob {@code usnet.forward.cow}).
 */
public enum CowPolicy {
    /** Today's Linux (skb_cow / pskb_expand_head): copy only the headers of a shared packet, keep sharing the payload. */
    HEAD_COPY("head-copy"),
    /** Linux 2.6.20: copy the whole shared packet before editing it. */
    FULL_COPY("full-copy"),
    /** Copy every forwarded packet, shared or not: the upper bound of copying cost. */
    ALWAYS_COPY("always-copy"),
    /** The OpenVZ hack: forward shared packets without decrementing TTL, so without copying. */
    SKIP_TTL("skip-ttl");

    private final String knobValue;

    CowPolicy(String knobValue) {
        this.knobValue = knobValue;
    }

    public String knobValue() {
        return knobValue;
    }

    public static CowPolicy parse(String v) {
        for (CowPolicy p : values()) {
            if (p.knobValue.equals(v)) {
                return p;
            }
        }
        throw new IllegalArgumentException("usnet.forward.cow: '" + v
                + "' is not one of head-copy, full-copy, always-copy, skip-ttl");
    }
}
