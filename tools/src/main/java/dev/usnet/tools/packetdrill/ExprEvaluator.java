package dev.usnet.tools.packetdrill;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Turns a script expression into the {@link Value} a target receives: symbols become Linux numbers, {@code A|B}
 * an or-ed integer, {@code htons(N)} N, {@code inet_addr("a.b.c.d")} the address as an int. A struct written
 * positionally as {@code {..., N}} (an iovec) gets the fields {@code iov_base} and {@code iov_len}; a linger
 * written {@code {onoff=1, linger=0}} gets {@code l_onoff} and {@code l_linger}.
 */
final class ExprEvaluator {
    private final String file;

    ExprEvaluator(String file) {
        this.file = file;
    }

    /**
     * Evaluates every system call's arguments and result and checks its errno name, so that a script with an
     * unknown symbol is refused before anything runs rather than failing halfway.
     */
    void checkAll(Script script) {
        for (Event e : script.events()) {
            if (e.action() instanceof SyscallSpec s) {
                s.args().forEach(this::eval);
                eval(s.result());
                if (s.errno() != null && Symbols.errno(s.errno()) == null) {
                    throw new ScriptSyntaxException(file, e.line(), "unknown errno name " + s.errno());
                }
            }
        }
    }

    private ScriptSyntaxException error(Expr at, String msg) {
        return new ScriptSyntaxException(file, at.line(), msg);
    }

    Value eval(Expr e) {
        return switch (e) {
            case Expr.Int i -> Value.of(i.value());
            case Expr.Str s -> new Value.Str(s.value());
            case Expr.Ellipsis x -> Value.ELLIPSIS;
            case Expr.Name n -> {
                Long v = Symbols.value(n.name());
                if (v == null) {
                    throw error(n, "unknown symbol " + n.name());
                }
                yield Value.of(v);
            }
            case Expr.Or o -> {
                long v = 0;
                for (Expr t : o.terms()) {
                    if (!(eval(t) instanceof Value.Int iv)) {
                        throw error(t, "only integers and flags can be or-ed with |");
                    }
                    v |= iv.value();
                }
                yield Value.of(v);
            }
            case Expr.Array a -> {
                List<Value> el = new ArrayList<>();
                for (Expr x : a.elements()) {
                    el.add(eval(x));
                }
                yield new Value.Array(List.copyOf(el));
            }
            case Expr.Struct s -> struct(s);
            case Expr.Field f -> throw error(f, "a field " + f.name() + "=... belongs inside { }");
            case Expr.Call c -> call(c);
        };
    }

    private Value struct(Expr.Struct s) {
        LinkedHashMap<String, Value> fields = new LinkedHashMap<>();
        boolean named = !s.members().isEmpty() && s.members().get(0) instanceof Expr.Field;
        for (int k = 0; k < s.members().size(); k++) {
            Expr m = s.members().get(k);
            if ((m instanceof Expr.Field) != named) {
                throw error(m, "a struct has either all fields named (name=value) or none");
            }
            if (m instanceof Expr.Field f) {
                if (fields.put(cName(f.name()), eval(f.value())) != null) {
                    throw error(f, "field " + f.name() + " given twice");
                }
            } else {
                fields.put(positionalName(s.members().size(), k), eval(m));
            }
        }
        return new Value.Struct(fields);
    }

    /**
     * packetdrill writes a {@code struct linger} as {@code {onoff=1, linger=0}}; targets get the C names
     * {@code l_onoff} and {@code l_linger} (either spelling may be written).
     */
    private static String cName(String field) {
        return switch (field) {
            case "onoff" -> "l_onoff";
            case "linger" -> "l_linger";
            default -> field;
        };
    }

    private static String positionalName(int size, int k) {
        if (size == 2) {
            return k == 0 ? "iov_base" : "iov_len";
        }
        return "_" + k;
    }

    private Value call(Expr.Call c) {
        switch (c.function()) {
            case "htons", "htonl", "ntohs", "ntohl" -> {
                if (c.args().size() != 1 || !(eval(c.args().get(0)) instanceof Value.Int v)) {
                    throw error(c, c.function() + " takes one integer");
                }
                return v;
            }
            case "inet_addr" -> {
                if (c.args().size() != 1 || !(c.args().get(0) instanceof Expr.Str s)) {
                    throw error(c, "inet_addr takes one quoted address");
                }
                try {
                    return Value.of(Integer.toUnsignedLong(Ipv4.parse(s.value())));
                } catch (IllegalArgumentException ex) {
                    throw error(c, ex.getMessage());
                }
            }
            default -> throw error(c, "unknown function " + c.function() + "(...)");
        }
    }
}
