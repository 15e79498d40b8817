package dev.usnet.core.conntrack;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Connection tracking's counters of one namespace, the fields {@code conntrack -S} prints (struct
 * ip_conntrack_stat). One line: a namespace's packets are handled by its one thread, Linux's per-CPU split has
 * nothing to split. As on a 6.x kernel, {@code insert} and {@code search_restart} are shown but not counted (they
 * read 0 there too: the number of entries is {@code conntrack -C}), and {@code found} counts only the tuples NAT
 * found taken ({@link ConntrackTable#tupleInUse}). The reasons behind
 * {@code invalid} and {@code error} are counted apart, per {@link ConntrackInvalid}.
 */
public final class ConntrackStats {
    long found;
    long invalid;
    long insert;
    long insertFailed;
    long drop;
    long earlyDrop;
    long error;
    long searchRestart;
    long clashResolve;
    long chainTooLong;
    private final long[] invalidBy = new long[ConntrackInvalid.values().length];

    void countInvalid(ConntrackInvalid why) {
        invalid++;
        invalidBy[why.ordinal()]++;
    }

    /** An ICMP message connection tracking could not use (counted as {@code error}, as nf_conntrack_handle_icmp). */
    void countError(ConntrackInvalid why) {
        error++;
        invalidBy[why.ordinal()]++;
    }

    public long found() {
        return found;
    }

    public long invalid() {
        return invalid;
    }

    public long insert() {
        return insert;
    }

    public long insertFailed() {
        return insertFailed;
    }

    public long drop() {
        return drop;
    }

    public long earlyDrop() {
        return earlyDrop;
    }

    public long error() {
        return error;
    }

    public long searchRestart() {
        return searchRestart;
    }

    public long clashResolve() {
        return clashResolve;
    }

    public long chainTooLong() {
        return chainTooLong;
    }

    /** Packets given no entry for {@code why} (under {@code invalid} or {@code error}). */
    public long byReason(ConntrackInvalid why) {
        return invalidBy[why.ordinal()];
    }

    /** The counters by their {@code conntrack -S} names, in its order. */
    public Map<String, Long> asMap() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("found", found);
        m.put("invalid", invalid);
        m.put("insert", insert);
        m.put("insert_failed", insertFailed);
        m.put("drop", drop);
        m.put("early_drop", earlyDrop);
        m.put("error", error);
        m.put("search_restart", searchRestart);
        m.put("clash_resolve", clashResolve);
        m.put("chaintoolong", chainTooLong);
        return m;
    }

    /** Invalid packets by reason, only the reasons seen. */
    public Map<String, Long> invalidReasons() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (ConntrackInvalid r : ConntrackInvalid.values()) {
            if (invalidBy[r.ordinal()] != 0) {
                m.put(r.name().toLowerCase(java.util.Locale.ROOT), invalidBy[r.ordinal()]);
            }
        }
        return m;
    }

    /** The line {@code conntrack -S} prints for CPU 0. */
    public String describe() {
        StringBuilder sb = new StringBuilder("cpu=0   \t");
        for (var e : asMap().entrySet()) {
            sb.append(e.getKey()).append('=').append(e.getValue()).append(' ');
        }
        return sb.toString();
    }
}
