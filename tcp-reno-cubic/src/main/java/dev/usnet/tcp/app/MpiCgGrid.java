package dev.usnet.tcp.app;

/**
 * NAS CG's 2-D process grid (NPB 3.x MPI, {@code setup_proc_info} and {@code setup_submatrix_info}): the ranks,
 * a power of two, form {@code nprows × npcols} with {@code npcols = nprows} (an even power) or
 * {@code 2 × nprows} (an odd one), so 128 ranks are 8 × 16 and 4 are 2 × 2. Rank {@code me} sits at row
 * {@code me / npcols}, column {@code me % npcols}.
 *
 * <p>The partners are NAS CG's: the row reduction's and the dot products' partner at step {@code i}
 * ({@code 1..log2(npcols)}) is the rank of the same row whose column differs by {@code npcols / 2^i} in the
 * {@code i}-th bit from the top ({@code reduce_exch_proc}); the transpose partner ({@code exch_proc}) mirrors the
 * rank across the grid's diagonal, by pairs of columns when {@code npcols = 2 × nprows}. Every partner relation is
 * symmetric, so two partners are always at the same step of their iteration.
 */
public final class MpiCgGrid {
    /** NAS CG class B's matrix order: the vector length the default message size derives from. */
    public static final int CLASS_B_NA = 75_000;

    private final int ranks;
    private final int nprows;
    private final int npcols;
    private final int l2npcols;

    /** The grid of {@code ranks} ranks; a power of two is required (NAS CG refuses other counts). */
    public MpiCgGrid(int ranks) {
        if (ranks < 1 || Integer.bitCount(ranks) != 1) {
            throw new IllegalArgumentException("pattern cg needs a power of two ranks (NAS CG's process grid), got " + ranks);
        }
        int log = Integer.numberOfTrailingZeros(ranks);
        this.ranks = ranks;
        this.nprows = 1 << (log / 2);
        this.npcols = ranks / nprows;
        this.l2npcols = Integer.numberOfTrailingZeros(npcols);
    }

    public int ranks() {
        return ranks;
    }

    public int nprows() {
        return nprows;
    }

    public int npcols() {
        return npcols;
    }

    /** log2(npcols): the steps of a row reduction or a dot product's all-reduce. */
    public int l2npcols() {
        return l2npcols;
    }

    /** reduce_exch_proc(i), {@code i} in 1..l2npcols: the column partner at distance npcols / 2^i. */
    public int reducePartner(int me, int i) {
        int row = me / npcols;
        int col = me % npcols;
        int div = npcols >> (i - 1);
        int c = (col + div / 2) % div + col / div * div;
        return row * npcols + c;
    }

    /** exch_proc: the transpose partner (may be {@code me} itself, on the diagonal). */
    public int transposePartner(int me) {
        if (npcols == nprows) {
            return me % nprows * nprows + me / nprows;
        }
        int pair = me / 2;
        return 2 * (pair % nprows * nprows + pair / nprows) + me % 2;
    }

    /**
     * The default size of a vector message, bytes: one rank's share of the q vector, {@code na / npcols} doubles
     * (NAS's send_len: the row block {@code na / nprows} on a square grid, half of it on a 1:2 grid), rounded up.
     */
    public int defaultVectorBytes() {
        return 8 * ((CLASS_B_NA + npcols - 1) / npcols);
    }

    @Override
    public String toString() {
        return nprows + " x " + npcols;
    }
}
