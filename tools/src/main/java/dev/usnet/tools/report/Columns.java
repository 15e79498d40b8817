package dev.usnet.tools.report;

import java.util.ArrayList;
import java.util.List;

/**
 * Rows of text cells laid out in aligned columns, each as wide as its widest cell, two spaces apart: the leading
 * name columns left-aligned, the count columns after them right-aligned, as {@code ip -s link} and {@code nstat}
 * line their numbers up.
 */
public final class Columns {
    private final List<String[]> rows = new ArrayList<>();
    private final int n;
    private final int names;

    /** {@code names}: how many leading columns hold names (left-aligned); the rest hold counts. */
    public Columns(int names, String... header) {
        this.n = header.length;
        this.names = names;
        rows.add(header);
    }

    public Columns row(Object... cells) {
        if (cells.length != n) {
            throw new IllegalArgumentException("expected " + n + " cells, got " + cells.length);
        }
        String[] r = new String[n];
        for (int i = 0; i < n; i++) {
            r[i] = String.valueOf(cells[i]);
        }
        rows.add(r);
        return this;
    }

    /** The header, then every row; each line indented by {@code indent}. */
    public List<String> lines(String indent) {
        int[] w = new int[n];
        for (String[] r : rows) {
            for (int i = 0; i < n; i++) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        List<String> out = new ArrayList<>(rows.size());
        for (String[] r : rows) {
            StringBuilder b = new StringBuilder(indent);
            for (int i = 0; i < n; i++) {
                if (i > 0) {
                    b.append("  ");
                }
                String pad = " ".repeat(w[i] - r[i].length());
                if (i < names) {
                    b.append(r[i]).append(i == n - 1 ? "" : pad);
                } else {
                    b.append(pad).append(r[i]);
                }
            }
            out.add(b.toString());
        }
        return out;
    }
}
