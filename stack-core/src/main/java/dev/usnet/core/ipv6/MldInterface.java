package dev.usnet.core.ipv6;

import dev.usnet.core.time.Timeout;
import java.util.HashMap;
import java.util.Map;

/**
 * The MLD state of one device (the mc_* fields of Linux's inet6_dev): what the last MLDv2 query taught (robustness,
 * query interval, query response interval), until when an MLDv1 querier keeps the device in MLDv1, the pending
 * answer to a general query, and the pending per-group answers. Namespace thread only.
 */
final class MldInterface {
    /** Robustness variable; starts at mld_qrv. */
    int qrv;
    /** Query interval (RFC 3810 default 125 s) and query response interval (10 s) in nanoseconds. */
    long qiNanos = 125_000_000_000L;
    long qriNanos = 10_000_000_000L;
    /** MLDv1 mode while the clock is before this (mc_v1_seen); {@link Long#MIN_VALUE}: no MLDv1 querier heard. */
    long v1SeenUntil = Long.MIN_VALUE;
    /** The answer to a general query (mc_gq_work). */
    Timeout generalQueryAnswer;
    /** Per group (keyed by its low 64 bits and high 64 bits), the pending answer to a query (mca_work). */
    final Map<Group, Timeout> groupAnswers = new HashMap<>();

    record Group(long hi, long lo) {}

    MldInterface(int qrv) {
        this.qrv = qrv;
    }

    void cancelAll() {
        if (generalQueryAnswer != null) {
            generalQueryAnswer.cancel();
            generalQueryAnswer = null;
        }
        for (Timeout t : groupAnswers.values()) {
            t.cancel();
        }
        groupAnswers.clear();
    }
}
