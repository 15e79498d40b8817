package dev.usnet.tools.packetdrill;

import static dev.usnet.tools.packetdrill.CodeValues.str;
import static dev.usnet.tools.packetdrill.CodeValues.truthy;

import dev.usnet.tools.packetdrill.CodeLexer.Tok;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The {@code %{ }%} blocks of a script: a small Python subset, enough for what scripts do with {@code tcpi_*}
 * values. Statements (one per line or separated by {@code ;}, {@code \} continues a line): {@code assert expr}
 * and {@code assert expr, message}, {@code name = expr}, {@code print(...)} (output ignored), {@code pass},
 * expression statements, {@code #} comments. Expressions: integers, floats, strings, {@code True/False/None},
 * tuples, arithmetic ({@code + - * / // % **}), bit operations, comparison chains, {@code and/or/not},
 * string {@code %} formatting, calls of {@code int abs min max len str float round print}.
 *
 * <p>A failed assert raises {@link AssertionFailed} with the expression and the values of the {@code tcpi_}
 * names in it.
 */
final class CodeBlock {

    /** An assert that did not hold, or an error in the code. */
    static final class CodeException extends RuntimeException {
        final int line;

        CodeException(int line, String message) {
            super(message);
            this.line = line;
        }
    }

    static final class AssertionFailed extends RuntimeException {
        final int line;

        AssertionFailed(int line, String message) {
            super(message);
            this.line = line;
        }
    }

    private final List<Tok> toks = new ArrayList<>();
    private final Map<String, Object> vars;
    private int p;
    private final String source;
    /** Errors about a value are reported at the line of the token being read. */
    private final CodeValues values = new CodeValues(() -> peek().line());

    private CodeBlock(String source, int firstLine, Map<String, Object> vars) {
        this.source = source;
        this.vars = vars;
        toks.addAll(CodeLexer.lex(source, firstLine));
    }

    /** The {@code tcpi_*} names a block reads, to know whether tcp_info is needed. */
    static Set<String> tcpInfoNames(String source) {
        Set<String> out = new LinkedHashSet<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\btcpi_[A-Za-z0-9_]+").matcher(source);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    /**
     * Runs a block. {@code variables} holds the {@code tcpi_*} values (Long) and is extended by assignments.
     * {@code firstLine} is the script line of {@code %{}.
     */
    static void run(String source, int firstLine, Map<String, Object> variables) {
        new CodeBlock(source, firstLine, variables).statements();
    }

    /**
     * Checks a block's tokens (strings closed, no stray characters) when the script is read; what the code
     * means is only known when it runs, with the tcp_info values.
     */
    static void checkTokens(String source, int firstLine) {
        new CodeBlock(source, firstLine, Map.of());
    }

    private Tok peek() {
        return toks.get(p);
    }

    private Tok peekAt(int k) {
        return toks.get(Math.min(p + k, toks.size() - 1));
    }

    private boolean isOp(String op) {
        return peek().kind() == 'o' && peek().text().equals(op);
    }

    private boolean isName(String name) {
        return peek().kind() == 'i' && peek().text().equals(name);
    }

    private boolean acceptOp(String op) {
        if (isOp(op)) {
            p++;
            return true;
        }
        return false;
    }

    private void expectOp(String op) {
        if (!acceptOp(op)) {
            throw new CodeException(peek().line(), "expected '" + op + "' in code, got '" + peek().text() + "'");
        }
    }

    // ---- statements ----

    private void statements() {
        while (peek().kind() != 'E') {
            if (peek().kind() == ';') {
                p++;
                continue;
            }
            statement();
            if (peek().kind() != ';') {
                throw new CodeException(peek().line(), "unexpected '" + peek().text() + "' after a statement");
            }
        }
    }

    private void statement() {
        Tok t = peek();
        if (t.kind() == 'i') {
            switch (t.text()) {
                case "assert" -> {
                    p++;
                    assertion(t.line());
                    return;
                }
                case "pass" -> {
                    p++;
                    return;
                }
                case "import", "from" -> {
                    // Scripts import helpers they never need here; the values they use are ours.
                    while (peek().kind() != ';') {
                        p++;
                    }
                    return;
                }
                case "if", "elif", "else", "for", "while", "def", "class", "return", "with", "try", "lambda" ->
                        throw new CodeException(t.line(), "'" + t.text() + "' is not supported in %{ }% code "
                                + "(only assert, assignments, print and expressions)");
                default -> {
                    if (peekAt(1).kind() == 'o' && peekAt(1).text().equals("=")) {
                        p += 2;
                        vars.put(t.text(), expr());
                        return;
                    }
                }
            }
        }
        expr();
    }

    private void assertion(int line) {
        int start = p;
        Object cond = expr();
        String text = textOf(start, p);
        String message = null;
        if (acceptOp(",")) {
            message = str(expr());
        }
        if (!truthy(cond)) {
            StringBuilder b = new StringBuilder("assertion failed: ").append(text);
            if (message != null) {
                b.append(" (").append(message).append(')');
            }
            Map<String, Object> shown = new TreeMap<>();
            for (String n : tcpInfoNames(text)) {
                shown.put(n, vars.get(n));
            }
            if (!shown.isEmpty()) {
                b.append("; ");
                shown.forEach((k, v) -> b.append(k).append('=').append(str(v)).append(' '));
                b.setLength(b.length() - 1);
            }
            throw new AssertionFailed(line, b.toString());
        }
    }

    /** The tokens from {@code from} to {@code to} joined, as the expression reads. */
    private String textOf(int from, int to) {
        StringBuilder b = new StringBuilder();
        for (int k = from; k < to; k++) {
            Tok t = toks.get(k);
            String s = t.kind() == 's' ? "'" + t.text() + "'" : t.text();
            boolean tight = t.text().equals("(") || t.text().equals(")") || t.text().equals(",")
                    || (k > from && toks.get(k - 1).text().equals("("));
            if (b.length() > 0 && !tight) {
                b.append(' ');
            }
            b.append(s);
        }
        return b.toString();
    }

    // ---- expressions ----

    private Object expr() {
        Object first = orExpr();
        if (!isOp(",")) {
            return first;
        }
        // A bare tuple "a, b" only where a statement allows it (not in an assert's condition).
        return first;
    }

    private Object orExpr() {
        Object l = andExpr();
        while (isName("or")) {
            p++;
            Object r = andExpr();
            l = truthy(l) ? l : r;
        }
        return l;
    }

    private Object andExpr() {
        Object l = notExpr();
        while (isName("and")) {
            p++;
            Object r = notExpr();
            l = truthy(l) ? r : l;
        }
        return l;
    }

    private Object notExpr() {
        if (isName("not")) {
            p++;
            return !truthy(notExpr());
        }
        return comparison();
    }

    private Object comparison() {
        Object l = bitOr();
        boolean result = true;
        boolean any = false;
        while (true) {
            String op = compareOp();
            if (op == null) {
                break;
            }
            any = true;
            Object r = bitOr();
            result &= values.compare(op, l, r);
            l = r;
        }
        return any ? result : l;
    }

    private String compareOp() {
        Tok t = peek();
        if (t.kind() == 'o' && List.of("<", ">", "<=", ">=", "==", "!=").contains(t.text())) {
            p++;
            return t.text();
        }
        if (t.kind() == 'i' && t.text().equals("is")) {
            p++;
            if (isName("not")) {
                p++;
                return "!=";
            }
            return "==";
        }
        return null;
    }

    private Object bitOr() {
        Object l = bitXor();
        while (acceptOp("|")) {
            l = integer(l) | integer(bitXor());
        }
        return l;
    }

    private Object bitXor() {
        Object l = bitAnd();
        while (acceptOp("^")) {
            l = integer(l) ^ integer(bitAnd());
        }
        return l;
    }

    private Object bitAnd() {
        Object l = shift();
        while (acceptOp("&")) {
            l = integer(l) & integer(shift());
        }
        return l;
    }

    private Object shift() {
        Object l = additive();
        while (true) {
            if (acceptOp("<<")) {
                l = integer(l) << integer(additive());
            } else if (acceptOp(">>")) {
                l = integer(l) >> integer(additive());
            } else {
                return l;
            }
        }
    }

    private Object additive() {
        Object l = term();
        while (true) {
            if (acceptOp("+")) {
                Object r = term();
                if (l instanceof String a && r instanceof String b) {
                    l = a + b;
                } else if (l instanceof Double || r instanceof Double) {
                    l = num(l) + num(r);
                } else {
                    l = Math.addExact(integer(l), integer(r));
                }
            } else if (acceptOp("-")) {
                Object r = term();
                l = (l instanceof Double || r instanceof Double) ? (Object) (num(l) - num(r))
                        : (Object) Math.subtractExact(integer(l), integer(r));
            } else {
                return l;
            }
        }
    }

    private Object term() {
        Object l = unary();
        while (true) {
            int line = peek().line();
            if (acceptOp("*")) {
                Object r = unary();
                l = (l instanceof Double || r instanceof Double) ? (Object) (num(l) * num(r))
                        : (Object) Math.multiplyExact(integer(l), integer(r));
            } else if (acceptOp("//")) {
                Object r = unary();
                if (num(r) == 0) {
                    throw new CodeException(line, "integer division by zero");
                }
                l = (l instanceof Double || r instanceof Double) ? (Object) Math.floor(num(l) / num(r))
                        : (Object) Math.floorDiv(integer(l), integer(r));
            } else if (acceptOp("/")) {
                Object r = unary();
                if (num(r) == 0) {
                    throw new CodeException(line, "division by zero");
                }
                l = num(l) / num(r);
            } else if (acceptOp("%")) {
                Object r = unary();
                if (l instanceof String fmt) {
                    l = format(line, fmt, r);
                } else if (l instanceof Double || r instanceof Double) {
                    double m = num(r);
                    l = num(l) - m * Math.floor(num(l) / m);
                } else {
                    if (integer(r) == 0) {
                        throw new CodeException(line, "modulo by zero");
                    }
                    l = Math.floorMod(integer(l), integer(r));
                }
            } else {
                return l;
            }
        }
    }

    private Object unary() {
        if (acceptOp("-")) {
            Object v = unary();
            return v instanceof Double d ? (Object) (-d) : (Object) (-integer(v));
        }
        if (acceptOp("+")) {
            return unary();
        }
        if (acceptOp("~")) {
            return ~integer(unary());
        }
        return power();
    }

    private Object power() {
        Object base = primary();
        if (acceptOp("**")) {
            Object e = unary();
            if (base instanceof Long b && e instanceof Long x && x >= 0) {
                long r = 1;
                for (long k = 0; k < x; k++) {
                    r = Math.multiplyExact(r, b);
                }
                return r;
            }
            return Math.pow(num(base), num(e));
        }
        return base;
    }

    private Object primary() {
        Tok t = peek();
        p++;
        switch (t.kind()) {
            case 'n': {
                String s = t.text().replace("_", "");
                if (s.startsWith("0x") || s.startsWith("0X")) {
                    return Long.parseUnsignedLong(s.substring(2), 16);
                }
                if (s.contains(".") || s.contains("e") || s.contains("E")) {
                    return Double.parseDouble(s);
                }
                return Long.parseLong(s);
            }
            case 's':
                return t.text();
            case 'i':
                return name(t);
            case 'o':
                if (t.text().equals("(")) {
                    if (acceptOp(")")) {
                        return List.of();
                    }
                    Object first = orExpr();
                    if (acceptOp(")")) {
                        return first;
                    }
                    List<Object> tuple = new ArrayList<>();
                    tuple.add(first);
                    while (acceptOp(",")) {
                        if (isOp(")")) {
                            break;
                        }
                        tuple.add(orExpr());
                    }
                    expectOp(")");
                    return tuple;
                }
                break;
            default:
                break;
        }
        throw new CodeException(t.line(), "expected a value in code, got '" + t.text() + "'");
    }

    private Object name(Tok t) {
        String n = t.text();
        if (isOp("(")) {
            p++;
            List<Object> args = new ArrayList<>();
            if (!acceptOp(")")) {
                do {
                    args.add(orExpr());
                } while (acceptOp(","));
                expectOp(")");
            }
            return call(t, args);
        }
        switch (n) {
            case "True":
                return true;
            case "False":
                return false;
            case "None":
                return null;
            default:
                break;
        }
        if (vars.containsKey(n)) {
            return vars.get(n);
        }
        Long sym = Symbols.value(n);
        if (sym != null) {
            return sym;
        }
        if (n.startsWith("tcpi_")) {
            throw new CodeException(t.line(), "the target's tcp_info has no field " + n);
        }
        throw new CodeException(t.line(), "unknown name " + n + " in code");
    }

    private Object call(Tok f, List<Object> args) {
        switch (f.text()) {
            case "print":
                return null;
            case "int":
                one(f, args);
                if (args.get(0) instanceof String s) {
                    try {
                        return Long.parseLong(s.strip());
                    } catch (NumberFormatException e) {
                        throw new CodeException(f.line(), "int() of '" + s + "'");
                    }
                }
                return args.get(0) instanceof Double d ? (long) (double) d : integer(args.get(0));
            case "float":
                one(f, args);
                return num(args.get(0));
            case "str":
                one(f, args);
                return str(args.get(0));
            case "abs":
                one(f, args);
                return args.get(0) instanceof Double d ? (Object) Math.abs(d) : (Object) Math.abs(integer(args.get(0)));
            case "round":
                one(f, args);
                return Math.round(num(args.get(0)));
            case "len":
                one(f, args);
                if (args.get(0) instanceof String s) {
                    return (long) s.length();
                }
                if (args.get(0) instanceof List<?> l) {
                    return (long) l.size();
                }
                throw new CodeException(f.line(), "len() of a number");
            case "min":
            case "max": {
                List<?> items = args.size() == 1 && args.get(0) instanceof List<?> l ? l : args;
                if (items.isEmpty()) {
                    throw new CodeException(f.line(), f.text() + "() of nothing");
                }
                Object best = items.get(0);
                for (Object o : items) {
                    boolean better = f.text().equals("min") ? values.compare("<", o, best) : values.compare(">", o, best);
                    if (better) {
                        best = o;
                    }
                }
                return best;
            }
            default:
                throw new CodeException(f.line(), "unknown function " + f.text() + "() in code");
        }
    }

    private static void one(Tok f, List<Object> args) {
        if (args.size() != 1) {
            throw new CodeException(f.line(), f.text() + "() takes one argument");
        }
    }

    private long integer(Object o) {
        return values.integer(o);
    }

    private double num(Object o) {
        return values.num(o);
    }

    private String format(int line, String fmt, Object args) {
        return values.format(line, fmt, args);
    }

    @Override
    public String toString() {
        return source;
    }
}
