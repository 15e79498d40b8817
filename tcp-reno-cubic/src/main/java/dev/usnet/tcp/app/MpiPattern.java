package dev.usnet.tcp.app;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What every rank of an MPI job does in one iteration, as a list of {@link MpiStep}s (the same list every
 * iteration). Each pattern's partners are reciprocal step by step, so blocking exchanges never deadlock.
 */
public enum MpiPattern {
    /**
     * NAS CG's conj_grad iteration on its 2-D grid ({@link MpiCgGrid}): compute (the sparse matrix-vector
     * product); the row reduction of the partial q vector, log2(npcols) pairwise exchanges of {@code size} bytes
     * (nearest column partner first, as NAS runs {@code i = l2npcols..1}); the transpose exchange of {@code size}
     * bytes (none on the diagonal); compute; the all-reduce of p·q, log2(npcols) exchanges of one double (8
     * bytes); compute; the all-reduce of r·r, the same.
     */
    CG,
    /**
     * Pairwise all-to-all (MPI_Alltoall's pairwise algorithm): compute, then for k = 1..R-1 send {@code size}
     * bytes to rank (me + k) mod R while receiving as much from (me - k) mod R.
     */
    ALLTOALL,
    /** A ring shift: compute, then send {@code size} bytes to rank me + 1 while receiving from me - 1 (mod R). */
    RING;

    /** The name in a topology file: {@code cg}, {@code alltoall}, {@code ring}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static MpiPattern of(String label) {
        for (MpiPattern p : values()) {
            if (p.label().equals(label)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown MPI pattern '" + label + "' (expected cg, alltoall, ring)");
    }

    /** The default message size of this pattern for {@code ranks} ranks, or 0 when the pattern has none. */
    public int defaultSize(int ranks) {
        return this == CG ? new MpiCgGrid(ranks).defaultVectorBytes() : 0;
    }

    /** Checks that the pattern can run on {@code ranks} ranks; throws IllegalArgumentException saying why not. */
    public void check(int ranks) {
        if (ranks < 2) {
            throw new IllegalArgumentException("an MPI job needs at least 2 ranks, got " + ranks);
        }
        if (this == CG) {
            new MpiCgGrid(ranks);
        }
    }

    /** Rank {@code me}'s steps in one iteration of {@code ranks} ranks with vector messages of {@code size} bytes. */
    public MpiStep[] steps(int me, int ranks, int size) {
        List<MpiStep> s = new ArrayList<>();
        switch (this) {
            case CG -> {
                MpiCgGrid g = new MpiCgGrid(ranks);
                s.add(MpiStep.COMPUTE);
                for (int i = g.l2npcols(); i >= 1; i--) {
                    s.add(MpiStep.exchange(g.reducePartner(me, i), size));
                }
                int t = g.transposePartner(me);
                if (g.l2npcols() > 0 && t != me) {
                    s.add(MpiStep.exchange(t, size));
                }
                for (int dot = 0; dot < 2; dot++) {
                    s.add(MpiStep.COMPUTE);
                    for (int i = 1; i <= g.l2npcols(); i++) {
                        s.add(MpiStep.exchange(g.reducePartner(me, i), 8));
                    }
                }
            }
            case ALLTOALL -> {
                s.add(MpiStep.COMPUTE);
                for (int k = 1; k < ranks; k++) {
                    s.add(new MpiStep((me + k) % ranks, size, (me - k + ranks) % ranks, size));
                }
            }
            case RING -> {
                s.add(MpiStep.COMPUTE);
                s.add(new MpiStep((me + 1) % ranks, size, (me - 1 + ranks) % ranks, size));
            }
        }
        return s.toArray(new MpiStep[0]);
    }

    /** Bytes all ranks send in one iteration. */
    public long bytesPerIteration(int ranks, int size) {
        long total = 0;
        for (int r = 0; r < ranks; r++) {
            for (MpiStep st : steps(r, ranks, size)) {
                total += st.sendBytes();
            }
        }
        return total;
    }
}
