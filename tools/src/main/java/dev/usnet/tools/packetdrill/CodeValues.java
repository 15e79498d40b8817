package dev.usnet.tools.packetdrill;

import dev.usnet.tools.packetdrill.CodeBlock.CodeException;
import java.util.List;
import java.util.Locale;
import java.util.function.IntSupplier;

/**
 * The values of {@code %{ }%} code ({@link CodeBlock}) as Python treats them: integers (Long), floats (Double),
 * booleans, strings, None (null) and tuples (List); their truth, their text, and {@code %} formatting.
 */
final class CodeValues {
    /** The script line an error about a value is reported at. */
    private final IntSupplier errorLine;

    CodeValues(IntSupplier errorLine) {
        this.errorLine = errorLine;
    }

    static boolean isNumber(Object o) {
        return o instanceof Long || o instanceof Double || o instanceof Boolean;
    }

    long integer(Object o) {
        if (o instanceof Long l) {
            return l;
        }
        if (o instanceof Boolean b) {
            return b ? 1 : 0;
        }
        if (o instanceof Double d && d == Math.rint(d)) {
            return (long) (double) d;
        }
        throw new CodeException(errorLine.getAsInt(), "expected an integer in code, got " + str(o));
    }

    double num(Object o) {
        if (o instanceof Double d) {
            return d;
        }
        if (o instanceof Long || o instanceof Boolean) {
            return integer(o);
        }
        throw new CodeException(errorLine.getAsInt(), "expected a number in code, got " + str(o));
    }

    static boolean truthy(Object o) {
        if (o == null) {
            return false;
        }
        if (o instanceof Boolean b) {
            return b;
        }
        if (o instanceof Long l) {
            return l != 0;
        }
        if (o instanceof Double d) {
            return d != 0;
        }
        if (o instanceof String s) {
            return !s.isEmpty();
        }
        if (o instanceof List<?> l) {
            return !l.isEmpty();
        }
        return true;
    }

    static String str(Object o) {
        if (o == null) {
            return "None";
        }
        if (o instanceof Boolean b) {
            return b ? "True" : "False";
        }
        if (o instanceof List<?> l) {
            StringBuilder b = new StringBuilder("(");
            for (int k = 0; k < l.size(); k++) {
                b.append(k > 0 ? ", " : "").append(l.get(k) instanceof String s ? "'" + s + "'" : str(l.get(k)));
            }
            return b.append(l.size() == 1 ? ",)" : ")").toString();
        }
        return o.toString();
    }

    /** Python's {@code fmt % args}: %d %i %u %s %r %x %X %f %e %g %%, with flags and width. */
    String format(int line, String fmt, Object args) {
        List<?> values = args instanceof List<?> l ? l : List.of(args == null ? "None" : args);
        StringBuilder b = new StringBuilder();
        int next = 0;
        for (int i = 0; i < fmt.length(); i++) {
            char c = fmt.charAt(i);
            if (c != '%') {
                b.append(c);
                continue;
            }
            int st = i;
            i++;
            while (i < fmt.length() && "-+ 0#.0123456789".indexOf(fmt.charAt(i)) >= 0) {
                i++;
            }
            if (i >= fmt.length()) {
                throw new CodeException(line, "incomplete format in '" + fmt + "'");
            }
            char conv = fmt.charAt(i);
            String spec = fmt.substring(st, i);
            if (conv == '%') {
                b.append('%');
                continue;
            }
            if (next >= values.size()) {
                throw new CodeException(line, "not enough arguments for format string '" + fmt + "'");
            }
            Object v = values.get(next++);
            b.append(switch (conv) {
                case 'd', 'i', 'u' -> String.format(Locale.ROOT, spec + "d", v instanceof Double d ? (long) (double) d
                        : integer(v));
                case 'x', 'X', 'o' -> String.format(Locale.ROOT, spec + conv, integer(v));
                case 'f', 'e', 'g', 'E', 'G' -> String.format(Locale.ROOT, spec + conv, num(v));
                case 's' -> String.format(Locale.ROOT, spec + "s", str(v));
                case 'r' -> String.format(Locale.ROOT, spec + "s", v instanceof String s ? "'" + s + "'" : str(v));
                default -> throw new CodeException(line, "unsupported format %" + conv + " in '" + fmt + "'");
            });
        }
        if (next < values.size()) {
            throw new CodeException(line, "not all arguments converted during string formatting of '" + fmt + "'");
        }
        return b.toString();
    }

    /** Python's {@code a op b} for {@code == != < > <= >=}. */
    boolean compare(String op, Object a, Object b) {
        if (op.equals("==")) {
            return equal(a, b);
        }
        if (op.equals("!=")) {
            return !equal(a, b);
        }
        if (a instanceof String sa && b instanceof String sb) {
            int c = sa.compareTo(sb);
            return switch (op) {
                case "<" -> c < 0;
                case ">" -> c > 0;
                case "<=" -> c <= 0;
                default -> c >= 0;
            };
        }
        double x = num(a);
        double y = num(b);
        if (a instanceof Long la && b instanceof Long lb) {
            long c = Long.compare(la, lb);
            return switch (op) {
                case "<" -> c < 0;
                case ">" -> c > 0;
                case "<=" -> c <= 0;
                default -> c >= 0;
            };
        }
        return switch (op) {
            case "<" -> x < y;
            case ">" -> x > y;
            case "<=" -> x <= y;
            default -> x >= y;
        };
    }

    private boolean equal(Object a, Object b) {
        if (a == null || b == null) {
            return a == b;
        }
        if (isNumber(a) && isNumber(b)) {
            if (a instanceof Double || b instanceof Double) {
                return num(a) == num(b);
            }
            return integer(a) == integer(b);
        }
        return a.equals(b);
    }
}
