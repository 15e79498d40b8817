package dev.usnet.tools.packetdrill;

import java.util.List;

/** A system-call argument or result as written, before {@link ExprEvaluator} turns it into a {@link Value}. */
sealed interface Expr {

    int line();

    record Int(long value, int line) implements Expr {
    }

    /** A symbol ({@code SOL_SOCKET}) resolved at evaluation. */
    record Name(String name, int line) implements Expr {
    }

    record Str(String value, int line) implements Expr {
    }

    record Ellipsis(int line) implements Expr {
    }

    /** {@code A|B|C}. */
    record Or(List<Expr> terms, int line) implements Expr {
    }

    record Array(List<Expr> elements, int line) implements Expr {
    }

    /** {@code {...}}: named fields ({@code fd=3}) or positional elements ({@code {..., 0}}). */
    record Struct(List<Expr> members, int line) implements Expr {
    }

    /** {@code name=value} inside a struct; {@code msg_iov(1)=[...]} keeps {@code msg_iov}. */
    record Field(String name, Expr value, int line) implements Expr {
    }

    /** {@code htons(8080)}, {@code inet_addr("198.18.0.2")}. */
    record Call(String function, List<Expr> args, int line) implements Expr {
    }
}
