package dev.usnet.tools.packetdrill.usnet;

import dev.usnet.tools.packetdrill.TargetException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The backtick commands of packetdrill scripts, understood rather than run (the usnet namespace has no shell): the
 * sysctl settings published scripts make ({@code sysctl -q net.ipv4.tcp_sack=1}, {@code echo 1 >
 * /proc/sys/net/ipv4/tcp_sack}), the same through a helper script they source ({@code ../common/defaults.sh}, read
 * relative to the script's directory), {@code ip tcp_metrics flush} (usnet keeps no TCP metrics), and the test
 * device's queue ({@code tc qdisc add|replace dev tun0 root pfifo [limit N]}). Statements may be joined by
 * {@code ;}, {@code &&} and newlines; output redirections to /dev/null are ignored; {@code $((...))} integer
 * arithmetic is evaluated. Anything else fails naming the line and the command.
 */
final class ShellCommands {
    /** What the commands act on. */
    interface Effects {
        void sysctl(String key, String value);

        String readSysctl(String key);

        /** -1: a pfifo with no limit given. */
        void transmitQueueLimit(int packets);
    }

    private static final int MAX_DEPTH = 4;
    private final Effects effects;
    private final Path scriptDir;

    ShellCommands(Effects effects, Path scriptDir) {
        this.effects = effects;
        this.scriptDir = scriptDir;
    }

    /** Runs {@code text} from script line {@code line}; returns what the commands printed. */
    String run(String text, int line) {
        StringBuilder out = new StringBuilder();
        run(text, line, "", 0, out);
        return out.toString();
    }

    private void run(String text, int line, String where, int depth, StringBuilder out) {
        for (List<String> words : statements(text, line, where)) {
            if (!words.isEmpty()) {
                runOne(words, line, where, depth, out);
            }
        }
    }

    private TargetException refuse(int line, String where, List<String> words, String why) {
        return new TargetException("line " + line + where + ": usnet target does not run shell commands: '"
                + String.join(" ", words) + "'" + (why.isEmpty() ? "" : " (" + why + ")"));
    }

    private void runOne(List<String> words, int line, String where, int depth, StringBuilder out) {
        // Redirections: to /dev/null they only silence; into /proc/sys they are a sysctl write (echo V > file).
        String procTarget = null;
        List<String> w = new ArrayList<>();
        for (int i = 0; i < words.size(); i++) {
            String t = words.get(i);
            if (t.equals("2>&1") || t.equals(">&2") || t.equals("1>&2")) {
                continue;
            }
            if (t.equals(">") || t.equals("2>") || t.equals(">>") || t.equals("1>")) {
                if (i + 1 >= words.size()) {
                    throw refuse(line, where, words, "redirection without a file");
                }
                String file = words.get(++i);
                procTarget = redirect(file, t, procTarget, line, where, words);
                continue;
            }
            if (t.matches("(1|2)?>>?\\S+")) {
                String file = t.replaceFirst("^(1|2)?>>?", "");
                procTarget = redirect(file, t.startsWith("2") ? "2>" : ">", procTarget, line, where, words);
                continue;
            }
            w.add(t);
        }
        if (w.isEmpty()) {
            return;
        }
        String cmd = w.get(0);
        if (procTarget != null) {
            if (!cmd.equals("echo") || w.size() < 2) {
                throw refuse(line, where, words, "only 'echo VALUE > /proc/sys/...' writes a sysctl");
            }
            effects.sysctl(procTarget, String.join(" ", w.subList(1, w.size())));
            return;
        }
        switch (cmd) {
            case "true", ":" -> { }
            case "sysctl" -> sysctl(w, line, where, words, out);
            case "ip" -> {
                if (w.size() >= 3 && w.get(1).equals("tcp_metrics") && w.get(2).equals("flush")) {
                    return; // usnet keeps no TCP metrics: nothing to flush.
                }
                throw refuse(line, where, words, "of ip, only 'ip tcp_metrics flush' is understood");
            }
            case "tc" -> tc(w, line, where, words);
            case "sh", "bash", "source", "." -> {
                if (w.size() != 2) {
                    throw refuse(line, where, words, "a helper script is run without arguments");
                }
                helper(w.get(1), line, depth, out);
            }
            default -> {
                if (cmd.endsWith(".sh")) {
                    if (w.size() != 1) {
                        throw refuse(line, where, words, "a helper script is run without arguments");
                    }
                    helper(cmd, line, depth, out);
                    return;
                }
                throw refuse(line, where, words, "");
            }
        }
    }

    private String redirect(String file, String op, String procTarget, int line, String where, List<String> words) {
        if (file.equals("/dev/null")) {
            return procTarget;
        }
        if ((op.equals(">") || op.equals("1>")) && file.startsWith("/proc/sys/")) {
            return file;
        }
        throw refuse(line, where, words, "output can only go to /dev/null or a /proc/sys file");
    }

    private void sysctl(List<String> w, int line, String where, List<String> words, StringBuilder out) {
        boolean quiet = false;
        boolean any = false;
        for (String a : w.subList(1, w.size())) {
            if (a.startsWith("-") && a.length() > 1 && !a.contains("=")) {
                for (char c : a.substring(1).toCharArray()) {
                    switch (c) {
                        case 'q' -> quiet = true;
                        case 'w', 'e' -> { }
                        default -> throw refuse(line, where, words, "sysctl option -" + c + " is not understood");
                    }
                }
                continue;
            }
            any = true;
            int eq = a.indexOf('=');
            if (eq < 0) {
                String key = Sysctls.normalize(a);
                out.append(key).append(" = ").append(effects.readSysctl(key)).append('\n');
                continue;
            }
            String key = a.substring(0, eq);
            String value = a.substring(eq + 1);
            try {
                effects.sysctl(key, value);
            } catch (TargetException e) {
                throw new TargetException("line " + line + where + ": " + e.getMessage(), e);
            }
            if (!quiet) {
                out.append(Sysctls.normalize(key)).append(" = ").append(value).append('\n');
            }
        }
        if (!any) {
            throw refuse(line, where, words, "sysctl without a setting");
        }
    }

    private void tc(List<String> w, int line, String where, List<String> words) {
        // tc qdisc add|replace dev tun0 root pfifo [limit N]; tc qdisc del dev tun0 root
        if (w.size() >= 6 && w.get(1).equals("qdisc") && w.get(3).equals("dev") && w.get(5).equals("root")) {
            String dev = w.get(4);
            if (!dev.equals("tun0")) {
                throw refuse(line, where, words, "the usnet target has only the device tun0");
            }
            String op = w.get(2);
            if (op.equals("del") || op.equals("delete")) {
                if (w.size() == 6) {
                    effects.transmitQueueLimit(-1);
                    return;
                }
            } else if ((op.equals("add") || op.equals("replace") || op.equals("change")) && w.size() >= 7
                    && w.get(6).equals("pfifo")) {
                if (w.size() == 7) {
                    effects.transmitQueueLimit(-1);
                    return;
                }
                if (w.size() == 9 && w.get(7).equals("limit")) {
                    try {
                        effects.transmitQueueLimit(Integer.parseInt(w.get(8)));
                        return;
                    } catch (NumberFormatException e) {
                        throw refuse(line, where, words, "pfifo limit must be a number of packets");
                    }
                }
            }
        }
        throw refuse(line, where, words, "of tc, only 'tc qdisc add|replace|del dev tun0 root [pfifo [limit N]]' is understood");
    }

    private void helper(String name, int line, int depth, StringBuilder out) {
        if (depth >= MAX_DEPTH) {
            throw new TargetException("line " + line + ": helper scripts nest deeper than " + MAX_DEPTH + " at " + name);
        }
        if (scriptDir == null) {
            throw new TargetException("line " + line + ": helper script " + name + " cannot be found: the script's "
                    + "directory is not known");
        }
        Path p = scriptDir.resolve(name).normalize();
        String text;
        try {
            text = Files.readString(p);
        } catch (IOException e) {
            throw new TargetException("line " + line + ": cannot read helper script " + p + ": " + e.getMessage(), e);
        }
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String l = lines[i].strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            run(l, line, " (" + p.getFileName() + " line " + (i + 1) + ")", depth + 1, out);
        }
    }

    // ---- words ----

    /** Splits into statements at ;, && and newlines, each into words, with quotes and $((...)) resolved. */
    static List<List<String>> statements(String text, int line, String where) {
        List<List<String>> result = new ArrayList<>();
        List<String> words = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean inWord = false;
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (c == '\'' || c == '"') {
                int end = text.indexOf(c, i + 1);
                if (end < 0) {
                    throw new TargetException("line " + line + where + ": unterminated quote in '" + text + "'");
                }
                String q = text.substring(i + 1, end);
                cur.append(c == '"' ? expand(q, line, where) : q);
                inWord = true;
                i = end + 1;
                continue;
            }
            if (c == '$' && text.startsWith("$((", i)) {
                int end = text.indexOf("))", i);
                if (end < 0) {
                    throw new TargetException("line " + line + where + ": unterminated $(( in '" + text + "'");
                }
                cur.append(expand(text.substring(i, end + 2), line, where));
                inWord = true;
                i = end + 2;
                continue;
            }
            boolean sep = c == ';' || c == '\n' || (c == '&' && i + 1 < n && text.charAt(i + 1) == '&');
            if (sep || Character.isWhitespace(c)) {
                if (inWord) {
                    words.add(cur.toString());
                    cur.setLength(0);
                    inWord = false;
                }
                if (sep) {
                    result.add(words);
                    words = new ArrayList<>();
                    i += c == '&' ? 2 : 1;
                } else {
                    i++;
                }
                continue;
            }
            if (c == '#' && !inWord) {
                // A comment runs to the end of the line.
                int nl = text.indexOf('\n', i);
                i = nl < 0 ? n : nl;
                continue;
            }
            cur.append(c);
            inWord = true;
            i++;
        }
        if (inWord) {
            words.add(cur.toString());
        }
        result.add(words);
        return result;
    }

    /** Evaluates every {@code $((expr))} in {@code s}; any other $ is refused (there are no variables). */
    private static String expand(String s, int line, String where) {
        StringBuilder b = new StringBuilder();
        int i = 0;
        while (i < s.length()) {
            int d = s.indexOf('$', i);
            if (d < 0) {
                b.append(s, i, s.length());
                break;
            }
            b.append(s, i, d);
            if (!s.startsWith("$((", d)) {
                throw new TargetException("line " + line + where + ": shell variables are not understood by the usnet "
                        + "target: '" + s + "'");
            }
            int end = s.indexOf("))", d);
            if (end < 0) {
                throw new TargetException("line " + line + where + ": unterminated $(( in '" + s + "'");
            }
            String expr = s.substring(d + 3, end);
            try {
                b.append(new Arithmetic(expr).evaluate());
            } catch (IllegalArgumentException e) {
                throw new TargetException("line " + line + where + ": $((" + expr + ")): " + e.getMessage(), e);
            }
            i = end + 2;
        }
        return b.toString();
    }

    /** Shell integer arithmetic: + - * / % and parentheses over decimal and 0x numbers. */
    static final class Arithmetic {
        private final String s;
        private int pos;

        Arithmetic(String s) {
            this.s = s;
        }

        long evaluate() {
            long v = sum();
            skip();
            if (pos != s.length()) {
                throw new IllegalArgumentException("unexpected '" + s.substring(pos) + "'");
            }
            return v;
        }

        private void skip() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }

        private long sum() {
            long v = product();
            while (true) {
                skip();
                if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) {
                    char op = s.charAt(pos++);
                    long r = product();
                    v = op == '+' ? v + r : v - r;
                } else {
                    return v;
                }
            }
        }

        private long product() {
            long v = unary();
            while (true) {
                skip();
                if (pos < s.length() && "*/%".indexOf(s.charAt(pos)) >= 0) {
                    char op = s.charAt(pos++);
                    long r = unary();
                    if (op != '*' && r == 0) {
                        throw new IllegalArgumentException("division by zero");
                    }
                    v = op == '*' ? v * r : op == '/' ? v / r : v % r;
                } else {
                    return v;
                }
            }
        }

        private long unary() {
            skip();
            if (pos < s.length() && s.charAt(pos) == '-') {
                pos++;
                return -unary();
            }
            if (pos < s.length() && s.charAt(pos) == '(') {
                pos++;
                long v = sum();
                skip();
                if (pos >= s.length() || s.charAt(pos) != ')') {
                    throw new IllegalArgumentException("missing ')'");
                }
                pos++;
                return v;
            }
            int start = pos;
            while (pos < s.length() && Character.isLetterOrDigit(s.charAt(pos))) {
                pos++;
            }
            if (start == pos) {
                throw new IllegalArgumentException("expected a number at '" + s.substring(start) + "'");
            }
            try {
                return Long.decode(s.substring(start, pos));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + s.substring(start, pos) + "' is not a number");
            }
        }
    }
}
