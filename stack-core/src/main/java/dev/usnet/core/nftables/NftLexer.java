package dev.usnet.core.nftables;

import java.util.ArrayList;
import java.util.List;

/**
 * Cuts ruleset text into {@link NftToken}s as nft's scanner does for the subset: words (names, numbers, addresses,
 * ranges such as {@code 1000-2000}, {@code 198.18.0.1:80}), double-quoted strings, the punctuation
 * {@code { } ; , / !=}, line ends, and {@code #} comments to the end of the line. A backslash before a line end
 * continues the line.
 */
final class NftLexer {
    private NftLexer() {}

    static List<NftToken> tokens(String text) {
        List<NftToken> out = new ArrayList<>();
        int line = 1;
        int lineStart = 0;
        int i = 0;
        int n = text.length();
        boolean space = true;
        while (i < n) {
            char c = text.charAt(i);
            int col = i - lineStart + 1;
            if (c == '\n') {
                out.add(new NftToken(NftToken.Kind.NEWLINE, "\n", line, col, space));
                i++;
                line++;
                lineStart = i;
                space = true;
            } else if (c == '\\' && i + 1 < n && text.charAt(i + 1) == '\n') {
                i += 2;
                line++;
                lineStart = i;
                space = true;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                i++;
                space = true;
            } else if (c == '#') {
                while (i < n && text.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '"') {
                int j = i + 1;
                while (j < n && text.charAt(j) != '"' && text.charAt(j) != '\n') {
                    j++;
                }
                if (j >= n || text.charAt(j) != '"') {
                    throw new NftSyntaxException(line, col, "unterminated string");
                }
                out.add(new NftToken(NftToken.Kind.STRING, text.substring(i, j + 1), line, col, space));
                i = j + 1;
                space = false;
            } else if (c == '!' && i + 1 < n && text.charAt(i + 1) == '=') {
                out.add(new NftToken(NftToken.Kind.PUNCT, "!=", line, col, space));
                i += 2;
                space = false;
            } else if (c == '{' || c == '}' || c == ';' || c == ',' || c == '/') {
                out.add(new NftToken(NftToken.Kind.PUNCT, String.valueOf(c), line, col, space));
                i++;
                space = false;
            } else if (isWordChar(c)) {
                int j = i;
                while (j < n && isWordChar(text.charAt(j))) {
                    j++;
                }
                out.add(new NftToken(NftToken.Kind.WORD, text.substring(i, j), line, col, space));
                i = j;
                space = false;
            } else {
                throw new NftSyntaxException(line, col, "unexpected character '" + c + "'");
            }
        }
        out.add(new NftToken(NftToken.Kind.END, "", line, i - lineStart + 1, true));
        return out;
    }

    private static boolean isWordChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == ':' || c == '-' || c == '*' || c == '$' || c == '+'
                || c == '@' || c == '=' || c == '<' || c == '>' || c == '&' || c == '|' || c == '[' || c == ']';
    }
}
