package dev.usnet.core.knob;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * The known names closest to a mistyped one, by edit distance (insertions, deletions, substitutions and
 * swaps of two neighbouring letters, each counting 1), for
 * "did you mean" hints: a hint names a near miss instead of listing every name there is.
 */
public final class NearestNames {
    private NearestNames() {}

    /**
     * The candidates nearest to {@code name} (case-insensitively), at most {@code limit} of them, all at the
     * smallest distance found; empty when none is within a third of the name's length (at least 1).
     */
    public static List<String> nearest(String name, Collection<String> candidates, int limit) {
        String n = name.toLowerCase(Locale.ROOT);
        int max = Math.max(1, n.length() / 3);
        int best = Integer.MAX_VALUE;
        List<String> found = new ArrayList<>();
        for (String c : candidates) {
            int d = distance(n, c.toLowerCase(Locale.ROOT));
            if (d > max || d > best) {
                continue;
            }
            if (d < best) {
                best = d;
                found.clear();
            }
            if (found.size() < limit) {
                found.add(c);
            }
        }
        return found;
    }

    /** How many names {@link #listing} spells out before it counts the rest. */
    static final int LISTED = 12;

    /**
     * What exists, for an error about {@code wanted} that is not there: every name when there are at most
     * {@value #LISTED}, else the first of them, how many there are and the nearest to {@code wanted} (a topology of
     * ten thousand containers would otherwise put all their names into every such message).
     */
    public static String listing(String wanted, Collection<String> names) {
        if (names.size() <= LISTED) {
            return String.join(", ", names);
        }
        List<String> first = names.stream().limit(LISTED).toList();
        List<String> near = nearest(wanted, names, 3);
        return String.join(", ", first) + ", ... (" + names.size() + " in all"
                + (near.isEmpty() ? "" : "; nearest to '" + wanted + "': " + String.join(", ", near)) + ")";
    }

    /** The nearest candidate, or null (see {@link #nearest(String, Collection, int)}). */
    public static String nearest(String name, Collection<String> candidates) {
        List<String> l = nearest(name, candidates, 1);
        return l.isEmpty() ? null : l.get(0);
    }

    /** Edit distance with adjacent transpositions (optimal string alignment): "dealy" is 1 from "delay". */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int c = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + c);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
