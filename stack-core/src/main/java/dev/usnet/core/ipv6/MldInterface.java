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

    /** The reported groups as last synchronised, in list order; empty while the device is down. */
    java.util.List<dev.usnet.core.wire.Ipv6Addr> joined = java.util.List.of();
    /** Per group, how many more state-change reports carry its change-to-exclude record (mca_crcount). */
    final java.util.LinkedHashMap<dev.usnet.core.wire.Ipv6Addr, Integer> joinCounts = new java.util.LinkedHashMap<>();
    /** Per group left, how many more state-change reports carry its change-to-include record (the mc_tomb list). */
    final java.util.LinkedHashMap<dev.usnet.core.wire.Ipv6Addr, Integer> leaveCounts = new java.util.LinkedHashMap<>();
    /** State-change reports still to send (mc_ifc_count) and the next one (mc_ifc_work). */
    int ifcCount;
    Timeout ifcWork;
    /** MLDv1 groups we reported last (MAF_LAST_REPORTER): leaving one sends a done. */
    final java.util.Set<dev.usnet.core.wire.Ipv6Addr> lastReporter = new java.util.HashSet<>();

    /** The source of this device's report delays (seeded by its MAC, so replays repeat them). */
    final java.util.SplittableRandom random;

    MldInterface(int qrv, long mac) {
        this.qrv = qrv;
        this.random = new java.util.SplittableRandom(mac * 0x9e37_79b9_7f4a_7c15L);
    }

    void cancelAll() {
        if (ifcWork != null) {
            ifcWork.cancel();
            ifcWork = null;
        }
        ifcCount = 0;
        joinCounts.clear();
        leaveCounts.clear();
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
