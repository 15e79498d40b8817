package dev.usnet.core.nftables;

/**
 * One word of ruleset text with where it starts. {@code kind} tells words from strings, punctuation and the end
 * of a line (which ends a rule in nft's grammar).
 */
record NftToken(Kind kind, String text, int line, int column, boolean spaceBefore) {
    enum Kind { WORD, STRING, PUNCT, NEWLINE, END }

    boolean is(String s) {
        return (kind == Kind.WORD || kind == Kind.PUNCT) && text.equals(s);
    }

    /** How the token reads in an error: quoted, or a description of the end of a line or of the text. */
    String shown() {
        return switch (kind) {
            case NEWLINE -> "end of line";
            case END -> "end of input";
            case STRING -> text;
            default -> "\"" + text + "\"";
        };
    }
}
