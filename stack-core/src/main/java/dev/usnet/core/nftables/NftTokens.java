package dev.usnet.core.nftables;

import java.util.List;

/**
 * The tokens of a ruleset text and the place reading has reached, shared by the command reader ({@link NftParser})
 * and the rule reader ({@link NftRuleParser}); the errors they raise name the token's line and column and, inside a
 * rule, the words of the rule read so far.
 */
final class NftTokens {
    final List<NftToken> toks;
    int pos;
    /** Where the rule being read starts, for the "after ..." of its errors; -1 outside a rule. */
    int ruleStart = -1;

    NftTokens(String text) {
        this.toks = NftLexer.tokens(text);
    }

    NftToken peek() {
        return toks.get(pos);
    }

    NftToken next() {
        return toks.get(pos++);
    }

    boolean accept(String s) {
        if (peek().is(s)) {
            pos++;
            return true;
        }
        return false;
    }

    boolean atEndOfStatement() {
        NftToken t = peek();
        return t.kind() == NftToken.Kind.NEWLINE || t.kind() == NftToken.Kind.END || t.is(";") || t.is("}");
    }

    void skipSeparators() {
        while (peek().kind() == NftToken.Kind.NEWLINE || peek().is(";")) {
            pos++;
        }
    }

    NftSyntaxException expected(String what) {
        NftToken t = peek();
        String after = "";
        if (ruleStart >= 0 && ruleStart < pos) {
            StringBuilder sb = new StringBuilder();
            for (int i = ruleStart; i < pos; i++) {
                NftToken x = toks.get(i);
                if (i > ruleStart && x.spaceBefore()) {
                    sb.append(' ');
                }
                sb.append(x.text());
            }
            after = " after \"" + sb + "\"";
        }
        return new NftSyntaxException(t.line(), t.column(), "expected " + what + after + ", found " + t.shown());
    }

    static NftSyntaxException unsupported(NftToken t, String what) {
        return new NftSyntaxException(t.line(), t.column(), what + " is not supported by usnet");
    }

    static NftSyntaxException error(NftToken t, String msg) {
        return new NftSyntaxException(t.line(), t.column(), msg);
    }

    void expect(String s, String what) {
        if (!accept(s)) {
            throw expected(what);
        }
    }

    String name(String what) {
        NftToken t = peek();
        if (t.kind() == NftToken.Kind.STRING) {
            pos++;
            return t.text().substring(1, t.text().length() - 1);
        }
        if (t.kind() == NftToken.Kind.WORD && t.text().matches("[A-Za-z_][A-Za-z0-9_.\\-]*")) {
            pos++;
            return t.text();
        }
        throw expected(what);
    }

    void endOfStatement() {
        if (!atEndOfStatement()) {
            throw expected("end of line or \";\"");
        }
    }

    long number(String what) {
        NftToken t = peek();
        if (t.kind() == NftToken.Kind.WORD && t.text().matches("[0-9]+")) {
            pos++;
            try {
                return Long.parseLong(t.text());
            } catch (NumberFormatException e) {
                throw error(t, what + " " + t.text() + " is too large");
            }
        }
        throw expected(what);
    }
}
