package dev.usnet.tools.topology.file;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What one {@code ${...}} of a topology file gives (docs/topology.md, "Parameters").
 * An expression: {@code cond := cmp ('?' cond ':' cond)?}, {@code cmp := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)?},
 * {@code sum := product (('+'|'-') product)*}, {@code product := unary (('*'|'/'|'%') unary)*}, {@code unary :=
 * '-' unary | '(' cond ')' | integer | "text" | name}. Arithmetic and {@code < <= > >=} take integers; {@code ==}
 * and {@code !=} also compare text (a string literal, or a parameter whose value is not an integer) and give 1 or
 * 0; {@code c ? a : b} gives a when c is not 0, else b, either an integer or a text. {@code /} and {@code %}
 * truncate like C's, so {@code ${i/250}.${i%250}} spreads thousands of entries over octets.
 */
final class ParamExpression {
    private static final Pattern FORMAT = Pattern.compile("0?[0-9]{0,2}[dxX]");

    /** What a parameter name stands for; null once its being undefined is reported at {@code w}. */
    interface Values {
        String value(String name, String inner, Where w);
    }

    /**
     * {@code NAME} gives the parameter's text as it is; anything else is integer arithmetic ({@code + - *},
     * parentheses, integer parameters and literals), optionally formatted with {@code :FMT} ({@code 02x}, {@code d}).
     */
    static String evaluate(String inner, Where w, Problems problems, Values values) {
        String expr = inner;
        String fmt = null;
        int colon = formatColon(inner);
        if (colon >= 0) {
            fmt = inner.substring(colon + 1).trim();
            expr = inner.substring(0, colon);
            if (!FORMAT.matcher(fmt).matches()) {
                problems.add(w, "${" + inner + "}: format '" + fmt + "' is not one of d, x, X with an optional width"
                        + " like 02x");
                return null;
            }
        }
        String t = expr.trim();
        if (fmt == null && TopologyParams.NAME.matcher(t).matches()) {
            String v = values.value(t, inner, w);
            return v;
        }
        try {
            ParamExpression e = new ParamExpression(t, inner, w, problems, values);
            Object r = e.parse();
            if (r instanceof Str str) {
                if (fmt != null) {
                    problems.add(w, "${" + inner + "}: format '" + fmt + "' applies to integers, and the result is the"
                            + " text \"" + str.text() + "\"");
                    return null;
                }
                return str.text();
            }
            long n = (Long) r;
            return fmt == null ? Long.toString(n) : String.format(Locale.ROOT, "%" + fmt, n);
        } catch (BadExpression x) {
            return null;
        }
    }

    /**
     * Where {@code inner}'s {@code :FMT} starts: the last ':' outside string literals that does not close a
     * conditional's {@code ? :}; -1 when there is none.
     */
    static int formatColon(String inner) {
        int open = 0;
        int found = -1;
        boolean quoted = false;
        for (int i = 0; i < inner.length(); i++) {
            char c = inner.charAt(i);
            if (c == '"') {
                quoted = !quoted;
            } else if (!quoted && c == '?') {
                open++;
            } else if (!quoted && c == ':') {
                if (open > 0) {
                    open--;
                } else {
                    found = i;
                }
            }
        }
        return found;
    }

    /** A text value in an expression: a string literal, or a parameter whose value is not an integer. */
    private record Str(String text, String param) {}

    private final String s;
    private final String inner;
    private final Where w;
    private final Problems problems;
    private final Values values;
    private int pos;

    private ParamExpression(String s, String inner, Where w, Problems problems, Values values) {
        this.s = s;
        this.inner = inner;
        this.w = w;
        this.problems = problems;
        this.values = values;
    }

    Object parse() throws BadExpression {
        if (s.isEmpty()) {
            throw bad("empty; expected a parameter name or integer arithmetic like i+10");
        }
        Object v = cond();
        skipSpaces();
        if (pos < s.length()) {
            throw bad("unexpected '" + s.charAt(pos) + "' (expected + - * / % ( ) == != < <= > >= ? : integers,"
                    + " \"text\" and parameter names)");
        }
        return v;
    }

    private Object cond() throws BadExpression {
        Object c = cmp();
        skipSpaces();
        if (pos >= s.length() || s.charAt(pos) != '?') {
            return c;
        }
        pos++;
        if (!(c instanceof Long test)) {
            throw bad("the condition before '?' is the text \"" + ((Str) c).text() + "\"; expected a comparison"
                    + " like mode == \"netns\" or an integer");
        }
        Object a = cond();
        skipSpaces();
        if (pos >= s.length() || s.charAt(pos) != ':') {
            throw bad("'?' without its ':' (write c ? a : b)");
        }
        pos++;
        Object b = cond();
        return test != 0 ? a : b;
    }

    private Object cmp() throws BadExpression {
        Object a = sumValue();
        skipSpaces();
        String op = null;
        for (String o : new String[] {"==", "!=", "<=", ">=", "<", ">"}) {
            if (s.startsWith(o, pos)) {
                op = o;
                break;
            }
        }
        if (op == null) {
            return a;
        }
        pos += op.length();
        Object b = sumValue();
        boolean r;
        if (op.equals("==") || op.equals("!=")) {
            boolean eq = a instanceof Long x && b instanceof Long y ? x.longValue() == y.longValue() : text(a).equals(text(b));
            r = op.equals("==") == eq;
        } else {
            long x = num(a);
            long y = num(b);
            r = switch (op) {
                case "<" -> x < y;
                case "<=" -> x <= y;
                case ">" -> x > y;
                default -> x >= y;
            };
        }
        return r ? 1L : 0L;
    }

    private Object sumValue() throws BadExpression {
        Object first = product();
        skipSpaces();
        if (pos >= s.length() || s.charAt(pos) != '+' && s.charAt(pos) != '-') {
            return first;
        }
        long v = num(first);
        while (true) {
            skipSpaces();
            if (pos < s.length() && (s.charAt(pos) == '+' || s.charAt(pos) == '-')) {
                char op = s.charAt(pos++);
                long r = num(product());
                try {
                    v = op == '+' ? Math.addExact(v, r) : Math.subtractExact(v, r);
                } catch (ArithmeticException e) {
                    throw bad("overflows a 64-bit integer");
                }
            } else {
                return v;
            }
        }
    }

    private Object product() throws BadExpression {
        Object first = unary();
        skipSpaces();
        char op0 = pos < s.length() ? s.charAt(pos) : 0;
        if (op0 != '*' && op0 != '/' && op0 != '%') {
            return first;
        }
        long v = num(first);
        while (true) {
            skipSpaces();
            char op = pos < s.length() ? s.charAt(pos) : 0;
            if (op == '*' || op == '/' || op == '%') {
                pos++;
                long r = num(unary());
                if (op != '*' && r == 0) {
                    throw bad("division by zero");
                }
                try {
                    v = op == '*' ? Math.multiplyExact(v, r) : op == '/' ? Math.divideExact(v, r) : v % r;
                } catch (ArithmeticException e) {
                    throw bad("overflows a 64-bit integer");
                }
            } else {
                return v;
            }
        }
    }

    private Object unary() throws BadExpression {
        skipSpaces();
        if (pos >= s.length()) {
            throw bad("ends where a number or parameter name should be");
        }
        char c = s.charAt(pos);
        if (c == '-') {
            pos++;
            long v = num(unary());
            if (v == Long.MIN_VALUE) {
                throw bad("overflows a 64-bit integer");
            }
            return -v;
        }
        if (c == '(') {
            pos++;
            Object v = cond();
            skipSpaces();
            if (pos >= s.length() || s.charAt(pos) != ')') {
                throw bad("'(' without its ')'");
            }
            pos++;
            return v;
        }
        if (c == '"') {
            int end = s.indexOf('"', pos + 1);
            if (end < 0) {
                throw bad("'\"' without its closing '\"'");
            }
            String text = s.substring(pos + 1, end);
            pos = end + 1;
            return new Str(text, null);
        }
        int start = pos;
        if (Character.isDigit(c)) {
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) {
                pos++;
            }
            try {
                return Long.parseLong(s.substring(start, pos));
            } catch (NumberFormatException e) {
                throw bad("number " + s.substring(start, pos) + " overflows a 64-bit integer");
            }
        }
        if (Character.isLetter(c) || c == '_') {
            while (pos < s.length() && (Character.isLetterOrDigit(s.charAt(pos)) || s.charAt(pos) == '_')) {
                pos++;
            }
            String name = s.substring(start, pos);
            String v = values.value(name, inner, w);
            if (v == null) {
                throw new BadExpression();
            }
            try {
                return Long.parseLong(v.trim().replace("_", ""));
            } catch (NumberFormatException e) {
                return new Str(v, name);
            }
        }
        throw bad("unexpected '" + c + "' (expected + - * / % ( ) == != < <= > >= ? : integers, \"text\" and"
                + " parameter names)");
    }

    private long num(Object v) throws BadExpression {
        if (v instanceof Long n) {
            return n;
        }
        Str t = (Str) v;
        throw bad(t.param() != null ? "parameter " + t.param() + " is \"" + t.text() + "\", not an integer, so it"
                + " cannot be used in arithmetic"
                : "\"" + t.text() + "\" is text, not an integer, so it cannot be used in arithmetic");
    }

    private String text(Object v) {
        return v instanceof Str t ? t.text() : Long.toString((Long) v);
    }

    private void skipSpaces() {
        while (pos < s.length() && s.charAt(pos) == ' ') {
            pos++;
        }
    }

    private BadExpression bad(String why) {
        problems.add(w, "${" + inner + "}: " + why);
        return new BadExpression();
    }

    /** Thrown once an expression's problem is reported. */
    private static final class BadExpression extends Exception {
        BadExpression() {
            super(null, null, false, false);
        }
    }
}
