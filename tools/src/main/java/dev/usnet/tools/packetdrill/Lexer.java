package dev.usnet.tools.packetdrill;

import dev.usnet.tools.packetdrill.Token.Kind;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a packetdrill script into {@link Token}s. Events span lines freely (a {@code recvmsg} may take five), so
 * the parser works on tokens, not lines; every token keeps the line it starts on for error messages.
 *
 * <p>The awkward spots: {@code +0...0.1} is a number, an ellipsis and a number (a point followed by another point
 * ends a number); {@code S.} is a word and a point; {@code .1} is a number; {@code --name=value} is an option only
 * at the start of a line.
 */
final class Lexer {
    private final String file;
    private final String src;
    private int pos;
    private int line = 1;
    private boolean lineStart = true;

    Lexer(String file, String src) {
        this.file = file;
        this.src = src;
    }

    static List<Token> tokenize(String file, String src) {
        Lexer l = new Lexer(file, src);
        List<Token> out = new ArrayList<>();
        Token t;
        do {
            t = l.next();
            out.add(t);
        } while (t.kind() != Kind.EOF);
        return out;
    }

    private ScriptSyntaxException error(int atLine, String msg) {
        return new ScriptSyntaxException(file, atLine, msg);
    }

    private char peek(int ahead) {
        int i = pos + ahead;
        return i < src.length() ? src.charAt(i) : '\0';
    }

    private void skipSpaceAndComments() {
        while (pos < src.length()) {
            char c = src.charAt(pos);
            if (c == '\n') {
                line++;
                pos++;
                lineStart = true;
            } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
                pos++;
            } else if (c == '\\' && peek(1) == '\n') {
                // A continued line outside code blocks: just whitespace.
                pos++;
            } else if (c == '/' && peek(1) == '/') {
                while (pos < src.length() && src.charAt(pos) != '\n') {
                    pos++;
                }
            } else if (c == '/' && peek(1) == '*') {
                int start = line;
                pos += 2;
                while (pos < src.length() && !(src.charAt(pos) == '*' && peek(1) == '/')) {
                    if (src.charAt(pos) == '\n') {
                        line++;
                    }
                    pos++;
                }
                if (pos >= src.length()) {
                    throw error(start, "comment /* not closed");
                }
                pos += 2;
            } else {
                return;
            }
        }
    }

    Token next() {
        skipSpaceAndComments();
        boolean atLineStart = lineStart;
        lineStart = false;
        if (pos >= src.length()) {
            return new Token(Kind.EOF, "", line);
        }
        int startLine = line;
        char c = src.charAt(pos);
        if (atLineStart && c == '-' && peek(1) == '-' && Character.isLetter(peek(2))) {
            int s = pos;
            while (pos < src.length() && !Character.isWhitespace(src.charAt(pos))) {
                if (src.charAt(pos) == '"') {
                    int close = src.indexOf('"', pos + 1);
                    pos = close < 0 ? src.length() : close;
                }
                pos++;
            }
            return new Token(Kind.OPTION, src.substring(s, pos), startLine);
        }
        if (c == '`') {
            int close = src.indexOf('`', pos + 1);
            if (close < 0) {
                throw error(startLine, "backtick command not closed");
            }
            String text = src.substring(pos + 1, close);
            line += count(text, '\n');
            pos = close + 1;
            return new Token(Kind.BACKTICK, text, startLine);
        }
        if (c == '%' && peek(1) == '{') {
            int close = src.indexOf("}%", pos + 2);
            if (close < 0) {
                throw error(startLine, "code block %{ not closed with }%");
            }
            String text = src.substring(pos + 2, close);
            line += count(text, '\n');
            pos = close + 2;
            return new Token(Kind.CODE, text, startLine);
        }
        if (c == '"') {
            return string(startLine);
        }
        if (c == '.' && peek(1) == '.' && peek(2) == '.') {
            pos += 3;
            return new Token(Kind.ELLIPSIS, "...", startLine);
        }
        if (c == '0' && (peek(1) == 'x' || peek(1) == 'X') && isHexDigit(peek(2))) {
            int s = pos;
            pos += 2;
            while (isHexDigit(peek(0))) {
                pos++;
            }
            return new Token(Kind.HEX, src.substring(s, pos), startLine);
        }
        if (Character.isDigit(c) || (c == '.' && Character.isDigit(peek(1)))) {
            int s = pos;
            while (Character.isDigit(peek(0))) {
                pos++;
            }
            // A point continues the number unless it starts an ellipsis ("0...0.1").
            if (peek(0) == '.' && peek(1) != '.') {
                pos++;
                while (Character.isDigit(peek(0))) {
                    pos++;
                }
            }
            return new Token(Kind.NUMBER, src.substring(s, pos), startLine);
        }
        if (Character.isLetter(c) || c == '_') {
            int s = pos;
            while (Character.isLetterOrDigit(peek(0)) || peek(0) == '_') {
                pos++;
            }
            return new Token(Kind.WORD, src.substring(s, pos), startLine);
        }
        pos++;
        return new Token(Kind.PUNCT, String.valueOf(c), startLine);
    }

    private Token string(int startLine) {
        StringBuilder b = new StringBuilder();
        pos++;
        while (true) {
            if (pos >= src.length() || src.charAt(pos) == '\n') {
                throw error(startLine, "string not closed");
            }
            char c = src.charAt(pos++);
            if (c == '"') {
                return new Token(Kind.STRING, b.toString(), startLine);
            }
            if (c == '\\' && pos < src.length()) {
                char e = src.charAt(pos++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'r' -> b.append('\r');
                    case '0' -> b.append('\0');
                    default -> b.append(e);
                }
            } else {
                b.append(c);
            }
        }
    }

    private static boolean isHexDigit(char c) {
        return Character.digit(c, 16) >= 0;
    }

    private static int count(String s, char c) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == c) {
                n++;
            }
        }
        return n;
    }
}
