package dev.usnet.tools.packetdrill;

/**
 * One lexical token of a packetdrill script. {@code text} is the token as written, except for strings (the
 * unescaped contents), backtick commands and {@code %{ }%} code (the text between the delimiters) and option
 * lines (the whole {@code --name=value}).
 */
record Token(Kind kind, String text, int line) {

    enum Kind {
        /** A decimal integer or a decimal with a point ({@code 0.100}, {@code .1}). */
        NUMBER,
        /** {@code 0x...}. */
        HEX,
        /** A name: a system call, a symbol, a flag letter group, an option keyword. */
        WORD,
        /** {@code "..."}. */
        STRING,
        /** {@code `...`}: a shell command. */
        BACKTICK,
        /** {@code %{ ... }%}: Python-like code. */
        CODE,
        /** {@code --name[=value]} at the start of a line, before the events. */
        OPTION,
        /** {@code ...}. */
        ELLIPSIS,
        /** Any single punctuation character. */
        PUNCT,
        EOF
    }

    boolean is(Kind k, String t) {
        return kind == k && text.equals(t);
    }

    boolean isPunct(String t) {
        return is(Kind.PUNCT, t);
    }

    boolean isWord(String t) {
        return is(Kind.WORD, t);
    }

    @Override
    public String toString() {
        return switch (kind) {
            case EOF -> "end of file";
            case STRING -> '"' + text + '"';
            case BACKTICK -> "`" + text + "`";
            case CODE -> "%{" + text + "}%";
            default -> "'" + text + "'";
        };
    }
}
