package dev.usnet.tools.compare;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One side-by-side table of a comparison report: one subject (an app, a path, a namespace), a row per variant,
 * a column per metric, each cell the metric's median over the variant's seeds with min–max when they differ.
 *
 * <p>The variant that differs most from the baseline (row 0) is the one with the largest relative difference
 * in any simulated column: for medians b (baseline) and v, |v - b| / max(|b|, |v|), 0 when both are 0 and 1
 * when only one run has the metric. Columns of wall-clock measurements are left out of that score: they differ
 * between two runs of the same variant.
 *
 * <p>A difference is ranked only when it is larger than the noise the seeds show: with several seeds, when the
 * variant's values and the baseline's do not overlap (every seed of one above every seed of the other); with one
 * seed there is no spread to judge by, and the report says so. Differences of a handful of events (a count column
 * with both sides under {@link #SMALL_COUNT}) and tables whose numbers follow from timing rather than from
 * the variant (a bridge's flood path) are {@link Rank#MINOR}: listed after the others and never in bold over a
 * major difference.
 */
final class MetricTable {
    /** A metric; {@code measured}: taken by the wall clock, not simulated; {@code count}: a number of events. */
    record Column(String name, boolean measured, boolean count) {}

    /** How much a difference is to be believed, most first. */
    enum Rank {
        /** Beyond the seeds' spread (or one seed) in a number of some size. */
        MAJOR,
        /** A few events, or a table whose numbers the variant does not set (see {@link #minorBecause}). */
        MINOR
    }

    /** The variant that differs most, the column where it does, its score and rank. */
    record Most(int row, int column, double score, Rank rank) {}

    /**
     * A count difference with both sides below this is a handful of events (0 → 3 drops, 1 → 51 flood packets):
     * worth listing, but it ranks after differences in numbers of some size, which a few retransmitted ARP
     * requests or timer firings cannot make.
     */
    static final double SMALL_COUNT = 100;

    private final String title;
    private final List<String> rows;
    private final List<Column> columns;
    /** values[row][column][seed], NaN where a run has no such metric. */
    private final double[][][] values;
    private final List<String> notes;
    /** Why every difference in this table is minor, or null. */
    private final String minorBecause;

    MetricTable(String title, List<String> rows, List<Column> columns, double[][][] values, List<String> notes) {
        this(title, rows, columns, values, notes, null);
    }

    MetricTable(String title, List<String> rows, List<Column> columns, double[][][] values, List<String> notes,
                String minorBecause) {
        this.title = title;
        this.rows = List.copyOf(rows);
        this.columns = List.copyOf(columns);
        this.values = values;
        this.notes = notes == null ? List.of() : List.copyOf(notes);
        this.minorBecause = minorBecause;
    }

    /** Why this table's differences rank last (a flood path), or null. */
    String minorBecause() {
        return minorBecause;
    }

    String title() {
        return title;
    }

    String columnName(int c) {
        return columns.get(c).name();
    }

    /** The median of a row's column over its seeds (the mean of the middle two for an even count); NaN if none. */
    double median(int row, int column) {
        double[] v = present(values[row][column]);
        if (v.length == 0) {
            return Double.NaN;
        }
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static double[] present(double[] v) {
        return Arrays.stream(v).filter(x -> !Double.isNaN(x)).toArray();
    }

    static double relativeDifference(double b, double v) {
        if (Double.isNaN(b) && Double.isNaN(v)) {
            return 0;
        }
        if (Double.isNaN(b) || Double.isNaN(v)) {
            return 1;
        }
        double d = Math.max(Math.abs(b), Math.abs(v));
        return d == 0 ? 0 : Math.abs(v - b) / d;
    }

    /**
     * Differences up to this are not differences: latency percentiles come from histograms with 3 significant
     * digits (0.1 % buckets), so two runs that behave alike can still show two adjacent buckets.
     */
    static final double NOT_A_DIFFERENCE = 0.01;

    /**
     * The row (not the baseline) that differs most from row 0: the largest score among {@link Rank#MAJOR}
     * differences, else among minor ones; null when none differs in a simulated column beyond the seeds' spread.
     */
    Most mostDifferent() {
        return mostDifferent(false);
    }

    /**
     * As {@link #mostDifferent()}; with {@code measuredToo} wall-clock columns count as well (a real-clock
     * comparison's summary, which has nothing else to list; never the bold choice).
     */
    Most mostDifferent(boolean measuredToo) {
        Most best = null;
        for (int r = 1; r < rows.size(); r++) {
            for (int c = 0; c < columns.size(); c++) {
                if (columns.get(c).measured() && !measuredToo || !beyondSpread(r, c)) {
                    continue;
                }
                double s = relativeDifference(median(0, c), median(r, c));
                if (s <= NOT_A_DIFFERENCE) {
                    continue;
                }
                Most m = new Most(r, c, s, rank(r, c));
                if (best == null || m.rank().compareTo(best.rank()) < 0
                        || m.rank() == best.rank() && s > best.score()) {
                    best = m;
                }
            }
        }
        return best;
    }

    private Rank rank(int r, int c) {
        if (minorBecause != null) {
            return Rank.MINOR;
        }
        if (columns.get(c).count()) {
            double large = Math.max(Math.abs(nanToZero(median(0, c))), Math.abs(nanToZero(median(r, c))));
            if (large < SMALL_COUNT) {
                return Rank.MINOR;
            }
        }
        return Rank.MAJOR;
    }

    private static double nanToZero(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    /**
     * Whether row r's values in column c lie wholly apart from the baseline's: every seed of one above every seed
     * of the other. With one seed per variant that is any difference (the report says the ranking is unreliable).
     */
    boolean beyondSpread(int r, int c) {
        double[] b = present(values[0][c]);
        double[] v = present(values[r][c]);
        if (b.length <= 1 || v.length <= 1) {
            return true;
        }
        double bMin = Arrays.stream(b).min().orElseThrow();
        double bMax = Arrays.stream(b).max().orElseThrow();
        double vMin = Arrays.stream(v).min().orElseThrow();
        double vMax = Arrays.stream(v).max().orElseThrow();
        return vMin > bMax || vMax < bMin;
    }

    /** The table in Markdown: a heading, the rows (the one that differs most in bold), and a line saying why. */
    String markdown(int headingLevel) {
        StringBuilder b = new StringBuilder();
        b.append("#".repeat(headingLevel)).append(' ').append(title).append("\n\n");
        Most most = mostDifferent();
        b.append("| variant |");
        for (Column c : columns) {
            b.append(' ').append(c.name()).append(c.measured() ? " ‡" : "").append(" |");
        }
        b.append("\n|---|");
        b.append("---:|".repeat(columns.size()));
        b.append('\n');
        for (int r = 0; r < rows.size(); r++) {
            boolean bold = most != null && most.row() == r;
            String label = rows.get(r) + (r == 0 ? " (baseline)" : "");
            b.append("| ").append(bold ? "**" + label + "**" : label).append(" |");
            for (int c = 0; c < columns.size(); c++) {
                String cell = cell(r, c);
                b.append(' ').append(bold && most.column() == c ? "**" + cell + "**" : cell).append(" |");
            }
            b.append('\n');
        }
        b.append('\n');
        if (rows.size() > 1) {
            if (most == null) {
                b.append("No variant differs from the baseline by more than 1 % in a simulated column")
                        .append(values[0].length > 0 && values[0][0].length > 1 ? " beyond the seeds' spread" : "")
                        .append(".\n\n");
            } else {
                double base = median(0, most.column());
                double v = median(most.row(), most.column());
                b.append("Differs most from the baseline: **").append(rows.get(most.row())).append("**, in ")
                        .append(columns.get(most.column()).name()).append(": ").append(format(base)).append(" → ")
                        .append(format(v)).append(change(base, v))
                        .append(most.rank() == Rank.MINOR ? " (minor: " + minorReason(most) + ")" : "").append(".\n\n");
            }
        }
        for (String n : notes) {
            b.append(n).append("\n\n");
        }
        return b.toString();
    }

    /** Why {@code m} ranks as minor, in words for the report. */
    String minorReason(Most m) {
        return minorBecause != null ? minorBecause
                : "fewer than " + format(SMALL_COUNT) + " " + columns.get(m.column()).name() + " on both sides";
    }

    private static String change(double base, double v) {
        if (Double.isNaN(base) || Double.isNaN(v) || base == 0) {
            return "";
        }
        return String.format(Locale.ROOT, " (%+.1f%%)", 100.0 * (v - base) / Math.abs(base));
    }

    private String cell(int r, int c) {
        double[] v = present(values[r][c]);
        if (v.length == 0) {
            return "—";
        }
        double med = median(r, c);
        double min = Arrays.stream(v).min().orElseThrow();
        double max = Arrays.stream(v).max().orElseThrow();
        return min == max ? format(med) : format(med) + " (" + format(min) + "–" + format(max) + ")";
    }

    /** At most three decimals, trailing zeros dropped: 12, 0.5, 3.142. */
    static String format(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        BigDecimal d = BigDecimal.valueOf(v).setScale(3, RoundingMode.HALF_EVEN).stripTrailingZeros();
        return d.scale() < 0 ? d.setScale(0).toPlainString() : d.toPlainString();
    }

    /** Builds a table row by row. */
    static final class Builder {
        private final String title;
        private final List<String> rows;
        private final int seeds;
        private final List<Column> columns = new ArrayList<>();
        private final List<double[][]> byColumn = new ArrayList<>();
        private final List<String> notes = new ArrayList<>();
        private String minorBecause;

        Builder(String title, List<String> rows, int seeds) {
            this.title = title;
            this.rows = rows;
            this.seeds = seeds;
        }

        /** A column; {@code v[row][seed]}, NaN where absent. */
        Builder column(String name, boolean measured, double[][] v) {
            return column(name, measured, false, v);
        }

        /** A column; {@code count}: its values are numbers of events (packets, drops, retransmissions). */
        Builder column(String name, boolean measured, boolean count, double[][] v) {
            columns.add(new Column(name, measured, count));
            byColumn.add(v);
            return this;
        }

        /** Every difference in this table ranks as minor, for this reason (said in the report). */
        Builder minor(String because) {
            minorBecause = because;
            return this;
        }

        Builder note(String n) {
            notes.add(n);
            return this;
        }

        int columnCount() {
            return columns.size();
        }

        MetricTable build() {
            double[][][] values = new double[rows.size()][columns.size()][];
            for (int r = 0; r < rows.size(); r++) {
                for (int c = 0; c < columns.size(); c++) {
                    values[r][c] = byColumn.get(c)[r];
                }
            }
            return new MetricTable(title, rows, columns, values, notes, minorBecause);
        }

        int seeds() {
            return seeds;
        }
    }
}
