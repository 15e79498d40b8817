package dev.usnet.tools.compare;

import dev.usnet.tools.cli.UsageException;
import java.util.ArrayList;
import java.util.List;

/**
 * One of {@code n} disjoint parts of a comparison's matrix ({@code --shard K/N}, K from 0): run r (0-based, in
 * matrix order: variants in order, seeds within a variant) belongs to shard {@code r mod N}. Dealing the runs
 * round-robin rather than in blocks balances the parts: consecutive runs are the seeds of one variant and
 * neighbouring variants, so runs of similar cost spread over all shards, and a matrix whose later variants are
 * slower (a larger parameter, a slower preset) does not put them all on the last machine.
 */
record Shard(int k, int n) {
    /** More parts than this is a mistake, not a cluster: the matrix itself has at most {@link CompareCommand#MAX_RUNS} runs. */
    static final int MAX_SHARDS = CompareCommand.MAX_RUNS;

    Shard {
        if (n < 1 || k < 0 || k >= n) {
            throw new IllegalArgumentException(k + "/" + n);
        }
    }

    /** Parses {@code K/N}; a {@link UsageException} naming the option when it is malformed or K is out of range. */
    static Shard parse(String s) {
        String[] kn = s.trim().split("/", -1);
        int k;
        int n;
        try {
            if (kn.length != 2) {
                throw new NumberFormatException();
            }
            k = Integer.parseInt(kn[0].trim());
            n = Integer.parseInt(kn[1].trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--shard " + s + ": expected K/N, the K-th (from 0) of N parts, e.g. --shard 0/8");
        }
        if (n < 1 || n > MAX_SHARDS) {
            throw new UsageException("--shard " + s + ": N must be 1.." + MAX_SHARDS + ", got " + n);
        }
        if (k < 0 || k >= n) {
            throw new UsageException("--shard " + s + ": K must be 0.." + (n - 1) + " (shards are counted from 0), got " + k);
        }
        return new Shard(k, n);
    }

    /** Whether run {@code index} (0-based, in matrix order) is this shard's. */
    boolean owns(int index) {
        return index % n == k;
    }

    /** This shard's part of {@code plan}, in plan order. */
    <T> List<T> of(List<T> plan) {
        List<T> mine = new ArrayList<>();
        for (int i = k; i < plan.size(); i += n) {
            mine.add(plan.get(i));
        }
        return mine;
    }

    @Override
    public String toString() {
        return k + "/" + n;
    }
}
