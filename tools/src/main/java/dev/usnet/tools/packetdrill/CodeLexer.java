package dev.usnet.tools.packetdrill;

import dev.usnet.tools.packetdrill.CodeBlock.CodeException;
import java.util.ArrayList;
import java.util.List;

/**
 * The tokens of a {@code %{ }%} block ({@link CodeBlock}): numbers, strings, names, operators, and a statement end
 * at each line break outside brackets and at each {@code ;}; {@code \} continues a line, {@code #} starts a comment.
 */
final class CodeLexer {
    private CodeLexer() {}

    record Tok(char kind, String text, int line) {
        // kind: n number, s string, i identifier, o operator, ; end of statement, E end
    }

    static List<Tok> lex(String s, int line) {
        List<Tok> toks = new ArrayList<>();
        int i = 0;
        int depth = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == '\n') {
                if (depth == 0) {
                    toks.add(new Tok(';', ";", line));
                }
                line++;
                i++;
            } else if (c == '\\' && i + 1 < s.length() && s.charAt(i + 1) == '\n') {
                line++;
                i += 2;
            } else if (c == '\\' && i + 2 < s.length() && s.charAt(i + 1) == '\r' && s.charAt(i + 2) == '\n') {
                line++;
                i += 3;
            } else if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '#') {
                while (i < s.length() && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == ';') {
                toks.add(new Tok(';', ";", line));
                i++;
            } else if (Character.isDigit(c) || (c == '.' && i + 1 < s.length() && Character.isDigit(s.charAt(i + 1)))) {
                int st = i;
                if (c == '0' && i + 1 < s.length() && (s.charAt(i + 1) == 'x' || s.charAt(i + 1) == 'X')) {
                    i += 2;
                    while (i < s.length() && Character.digit(s.charAt(i), 16) >= 0) {
                        i++;
                    }
                } else {
                    while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.'
                            || s.charAt(i) == '_')) {
                        i++;
                    }
                    if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
                        i++;
                        if (i < s.length() && (s.charAt(i) == '-' || s.charAt(i) == '+')) {
                            i++;
                        }
                        while (i < s.length() && Character.isDigit(s.charAt(i))) {
                            i++;
                        }
                    }
                }
                toks.add(new Tok('n', s.substring(st, i), line));
            } else if (Character.isLetter(c) || c == '_') {
                int st = i;
                while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_')) {
                    i++;
                }
                toks.add(new Tok('i', s.substring(st, i), line));
            } else if (c == '\'' || c == '"') {
                StringBuilder b = new StringBuilder();
                i++;
                while (i < s.length() && s.charAt(i) != c) {
                    char ch = s.charAt(i);
                    if (ch == '\n') {
                        throw new CodeException(line, "string not closed");
                    }
                    if (ch == '\\' && i + 1 < s.length()) {
                        char e = s.charAt(++i);
                        b.append(switch (e) {
                            case 'n' -> '\n';
                            case 't' -> '\t';
                            default -> e;
                        });
                    } else {
                        b.append(ch);
                    }
                    i++;
                }
                if (i >= s.length()) {
                    throw new CodeException(line, "string not closed");
                }
                i++;
                toks.add(new Tok('s', b.toString(), line));
            } else {
                String two = i + 1 < s.length() ? s.substring(i, i + 2) : "";
                String op;
                if (List.of("**", "//", "==", "!=", "<=", ">=", "<<", ">>").contains(two)) {
                    op = two;
                } else if ("+-*/%()<>,=[]&|^~".indexOf(c) >= 0) {
                    op = String.valueOf(c);
                } else {
                    throw new CodeException(line, "unexpected character '" + c + "' in code");
                }
                if (op.equals("(") || op.equals("[")) {
                    depth++;
                } else if (op.equals(")") || op.equals("]")) {
                    depth = Math.max(0, depth - 1);
                }
                toks.add(new Tok('o', op, line));
                i += op.length();
            }
        }
        toks.add(new Tok(';', ";", line));
        toks.add(new Tok('E', "", line));
        return toks;
    }
}
