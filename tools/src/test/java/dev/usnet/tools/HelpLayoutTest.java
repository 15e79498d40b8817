package dev.usnet.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every command's {@code --help} reads well in an 80-column terminal. */
class HelpLayoutTest {
    private static final int COLUMNS = 80;
    /** A line that ends inside a dotted name or abbreviation ({@code usnet.tcp.} / {@code kernel}). */
    private static final Pattern ENDS_IN_A_DOTTED_NAME = Pattern.compile(".*[A-Za-z0-9_]\\.$");
    /** Its continuation: lower case, and not a row of the command list ({@code "  reno   One ..."}). */
    private static final Pattern CONTINUES = Pattern.compile("\\s*[a-z0-9_](?!\\S*\\s{2,}).*");

    private static void collect(CommandLine cl, String name, List<String[]> out) {
        out.add(new String[] {name, cl.getUsageMessage(CommandLine.Help.Ansi.OFF)});
        for (var e : cl.getSubcommands().entrySet()) {
            if (!e.getKey().equals("help")) {
                collect(e.getValue(), name + " " + e.getKey(), out);
            }
        }
    }

    static List<String[]> everyUsage() {
        List<String[]> l = new ArrayList<>();
        collect(Usnet.commandLine(), "usnet", l);
        return l;
    }

    @Test
    void noUsageLineIsWiderThan80ColumnsOrBrokenInsideAWordOrAParagraph() {
        List<String> problems = new ArrayList<>();
        for (String[] u : everyUsage()) {
            String[] lines = u[1].split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                String l = lines[i];
                String where = u[0] + " --help, line " + (i + 1) + ": ";
                if (l.length() > COLUMNS) {
                    problems.add(where + l.length() + " columns: " + l);
                }
                String next = i + 1 < lines.length ? lines[i + 1] : "";
                if (ENDS_IN_A_DOTTED_NAME.matcher(l).matches() && CONTINUES.matcher(next).matches()) {
                    problems.add(where + "a name broken at a dot: '" + l.strip() + "' / '" + next.strip() + "'");
                }
                // A paragraph line far shorter than the width, continued on the next: an early break.
                boolean prose = !l.isEmpty() && !Character.isWhitespace(l.charAt(0)) && !l.startsWith("Usage:");
                if (prose && l.length() < COLUMNS / 2 && !next.isEmpty() && Character.isLowerCase(next.charAt(0))) {
                    problems.add(where + "paragraph broken early: '" + l + "' / '" + next + "'");
                }
            }
        }
        assertEquals(List.of(), problems, String.join("\n", problems));
    }

    @Test
    void everyOptionOfEveryCommandIsDescribed() {
        List<String> bare = new ArrayList<>();
        walk(Usnet.commandLine(), "usnet", bare);
        assertEquals(List.of(), bare);
    }

    private static void walk(CommandLine cl, String name, List<String> bare) {
        for (CommandLine.Model.OptionSpec o : cl.getCommandSpec().options()) {
            if (String.join("", o.description()).isBlank()) {
                bare.add(name + " " + o.longestName());
            }
        }
        for (var e : cl.getSubcommands().entrySet()) {
            walk(e.getValue(), name + " " + e.getKey(), bare);
        }
    }
}
