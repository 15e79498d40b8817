package dev.usnet.tools.compare;

import dev.usnet.tools.topology.file.Expectation;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a comparison's report says of the variants as a whole, apart from its tables: the largest differences from
 * the baseline over all tables, and the file's expectations judged per variant.
 */
record CompareVerdicts(List<List<CompareRunner.Run>> groups, List<String> rows, int seeds, boolean realClock) {
    /**
     * The tables in which a variant differs from the baseline: major differences first, each rank by size (at most
     * 20). With the real clock these are measurements and say so.
     */
    String summary(List<MetricTable> tables) {
        if (groups.size() < 2) {
            return "";
        }
        List<MetricTable> differing = new ArrayList<>(tables.stream().filter(t -> t.mostDifferent(realClock) != null).toList());
        differing.sort(java.util.Comparator.<MetricTable, MetricTable.Rank>comparing(t -> t.mostDifferent(realClock).rank())
                .thenComparing(t -> -t.mostDifferent(realClock).score()));
        StringBuilder b = new StringBuilder("## Largest differences from the baseline\n\n");
        if (differing.isEmpty()) {
            return b.append("No variant differs from the baseline by more than 1 % in any ")
                    .append(realClock ? "number" : "simulated number").append(seeds > 1 ? " beyond the seeds' spread" : "")
                    .append(".\n\n").toString();
        }
        if (realClock) {
            b.append("Measured on the wall clock (‡), not simulated: noise of this machine is part of every number.\n\n");
        }
        b.append("| table | variant | column | baseline | variant's | relative difference | rank |\n|---|---|---|---:|---:|---:|---|\n");
        for (MetricTable t : differing.subList(0, Math.min(20, differing.size()))) {
            MetricTable.Most m = t.mostDifferent(realClock);
            b.append("| ").append(t.title()).append(" | ").append(rows.get(m.row())).append(" | ")
                    .append(t.columnName(m.column())).append(realClock ? " ‡" : "").append(" | ")
                    .append(MetricTable.format(t.median(0, m.column())))
                    .append(" | ").append(MetricTable.format(t.median(m.row(), m.column()))).append(" | ")
                    .append(String.format(Locale.ROOT, "%.3f", m.score())).append(" | ")
                    .append(m.rank() == MetricTable.Rank.MAJOR ? (seeds > 1 ? "beyond the seeds' spread" : "one seed")
                            : "minor: " + t.minorReason(m)).append(" |\n");
        }
        if (differing.size() > 20) {
            b.append("\n(").append(differing.size() - 20).append(" more tables differ; see below.)\n");
        }
        return b.append('\n').toString();
    }

    /** The file's {@code expect:} lines against each run: held, or what the run had instead. */
    void expectations(StringBuilder b) {
        List<Expectation> ex = groups.getFirst().getFirst().planned().spec().expectations();
        if (ex.isEmpty()) {
            return;
        }
        b.append("## Expectations\n\n| variant |");
        for (Expectation x : ex) {
            b.append(" `").append(x.text()).append("` |");
        }
        b.append("\n|---|").append("---|".repeat(ex.size())).append('\n');
        for (int g = 0; g < groups.size(); g++) {
            b.append("| ").append(rows.get(g)).append(g == 0 ? " (baseline)" : "").append(" |");
            for (int i = 0; i < ex.size(); i++) {
                List<String> failed = new ArrayList<>();
                int held = 0;
                for (CompareRunner.Run r : groups.get(g)) {
                    List<Expectation> own = r.planned().spec().expectations();
                    if (i >= own.size()) {
                        continue;
                    }
                    java.math.BigDecimal v = own.get(i).actual(r.result().results());
                    if (own.get(i).holds(v)) {
                        held++;
                    } else {
                        failed.add(v == null ? "absent" : v.stripTrailingZeros().toPlainString());
                    }
                }
                String cell = failed.isEmpty() ? "held" : "**failed** (was " + String.join(", ", failed) + ")";
                b.append(' ').append(seeds > 1 && !failed.isEmpty() ? held + " of " + groups.get(g).size() + " held; " + cell
                        : cell).append(" |");
            }
            b.append('\n');
        }
        b.append('\n');
    }
}
