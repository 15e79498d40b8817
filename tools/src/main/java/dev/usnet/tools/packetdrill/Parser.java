package dev.usnet.tools.packetdrill;

import dev.usnet.tools.packetdrill.Token.Kind;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a packetdrill script into a {@link Script}: option lines, then events, each a time and an action
 * (packet, system call, backtick command, code block). A backtick command without a time (the usual
 * {@code `../defaults.sh`} before the first event) is an event of time kind NONE. Errors name {@code file:line}.
 */
final class Parser {
    private static final String TCP_FLAG_LETTERS = "FSRP.EWU";

    private final String file;
    private final List<Token> toks;
    private int i;

    private Parser(String file, List<Token> toks) {
        this.file = file;
        this.toks = toks;
    }

    static Script parse(String file, String src) {
        Parser p = new Parser(file, Lexer.tokenize(file, src));
        return p.script();
    }

    private Token peek() {
        return toks.get(i);
    }

    private Token peek(int ahead) {
        return toks.get(Math.min(i + ahead, toks.size() - 1));
    }

    private Token take() {
        Token t = toks.get(i);
        if (t.kind() != Kind.EOF) {
            i++;
        }
        return t;
    }

    private boolean acceptPunct(String p) {
        if (peek().isPunct(p)) {
            i++;
            return true;
        }
        return false;
    }

    private void expectPunct(String p, String what) {
        if (!acceptPunct(p)) {
            throw error(peek(), "expected '" + p + "' " + what + ", got " + peek());
        }
    }

    private ScriptSyntaxException error(Token at, String msg) {
        return new ScriptSyntaxException(file, at.line(), msg);
    }

    private Script script() {
        List<ScriptOption> options = new ArrayList<>();
        while (peek().kind() == Kind.OPTION) {
            options.add(option(take()));
        }
        List<Event> events = new ArrayList<>();
        while (peek().kind() != Kind.EOF) {
            if (peek().kind() == Kind.OPTION) {
                throw error(peek(), "option " + peek().text() + " after the first event: options go at the top");
            }
            events.add(event());
        }
        return new Script(file, options, events);
    }

    private static ScriptOption option(Token t) {
        String s = t.text().substring(2);
        int eq = s.indexOf('=');
        if (eq < 0) {
            return new ScriptOption(s, null, t.line());
        }
        String v = s.substring(eq + 1);
        if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
            v = v.substring(1, v.length() - 1);
        }
        return new ScriptOption(s.substring(0, eq), v, t.line());
    }

    private Event event() {
        Token first = peek();
        if (first.kind() == Kind.BACKTICK) {
            take();
            return new Event(first.line(), new EventTime(EventTime.Kind.NONE, 0, 0), new Action.Command(first.text()));
        }
        EventTime time = time();
        return new Event(first.line(), time, action());
    }

    private EventTime time() {
        Token t = peek();
        if (acceptPunct("*")) {
            return new EventTime(EventTime.Kind.ANY, 0, 0);
        }
        boolean rel = acceptPunct("+");
        if (peek().kind() != Kind.NUMBER) {
            throw error(peek(), "expected an event time (0.100, +.1, 0.3~0.4, *), got " + peek());
        }
        long start = Micros.parseSeconds(take().text());
        if (acceptPunct("~")) {
            boolean rel2 = acceptPunct("+");
            if (rel != rel2) {
                throw error(t, "a time range is either absolute (0.3~0.4) or relative (+.3~+.4), not both");
            }
            if (peek().kind() != Kind.NUMBER) {
                throw error(peek(), "expected the end of the time range, got " + peek());
            }
            long end = Micros.parseSeconds(take().text());
            if (end < start) {
                throw error(t, "time range ends before it starts");
            }
            return new EventTime(rel ? EventTime.Kind.RELATIVE_RANGE : EventTime.Kind.ABSOLUTE_RANGE, start, end);
        }
        return new EventTime(rel ? EventTime.Kind.RELATIVE : EventTime.Kind.ABSOLUTE, start, start);
    }

    private Action action() {
        Token t = peek();
        if (t.isPunct("<") || t.isPunct(">")) {
            return packet();
        }
        if (t.kind() == Kind.BACKTICK) {
            take();
            return new Action.Command(t.text());
        }
        if (t.kind() == Kind.CODE) {
            take();
            return new Action.Code(t.text(), t.line());
        }
        if (t.kind() == Kind.ELLIPSIS || t.kind() == Kind.WORD) {
            return syscall();
        }
        throw error(t, "expected a packet (< or >), a system call, a `command` or %{ code }%, got " + t);
    }

    // ---- packets ----

    private PacketSpec packet() {
        Token dir = take();
        boolean inbound = dir.isPunct("<");
        String ecn = null;
        if (peek().isPunct("[") || peek().isPunct("(")) {
            String close = peek().isPunct("[") ? "]" : ")";
            take();
            Token w = take();
            String word = w.text().toLowerCase(java.util.Locale.ROOT);
            if (!List.of("noecn", "ect0", "ect1", "ce", "ect01").contains(word)) {
                throw error(w, "IP field " + w + " in a packet is not supported (only noecn, ect0, ect1, ce, ect01)");
            }
            ecn = word;
            expectPunct(close, "after the IP ECN field");
        }
        Token t = peek();
        if (t.isWord("icmp")) {
            take();
            return new PacketSpec(inbound, ecn, null, icmp(t));
        }
        if (t.kind() == Kind.WORD) {
            switch (t.text()) {
                case "udp" -> throw error(t, "UDP packets are not supported (TCP and ICMP only)");
                case "ipv4", "ipv6", "gre", "mpls" -> throw error(t, "encapsulation '" + t.text()
                        + "' is not supported");
                default -> {
                }
            }
        }
        if (t.kind() == Kind.NUMBER && peek(1).isPunct(">")) {
            throw error(t, "explicit port numbers in packets are not supported");
        }
        return new PacketSpec(inbound, ecn, tcp(inbound), null);
    }

    private String flags() {
        Token t = take();
        if (t.isPunct(".")) {
            return ".";
        }
        if (t.isPunct("-")) {
            return "-";
        }
        if (t.kind() == Kind.WORD) {
            for (char c : t.text().toCharArray()) {
                if (TCP_FLAG_LETTERS.indexOf(c) < 0) {
                    throw error(t, "unknown TCP flag '" + c + "' in " + t + " (flags are S F R P . E W U)");
                }
            }
            String f = t.text();
            if (peek().isPunct(".") && peek(1).kind() == Kind.NUMBER) {
                take();
                f += ".";
            }
            return f;
        }
        throw error(t, "expected TCP flags (S, S., ., P., F., R, ...), got " + t);
    }

    private long integer(String what) {
        Token t = take();
        if (t.kind() == Kind.NUMBER && t.text().indexOf('.') < 0) {
            return Long.parseLong(t.text());
        }
        if (t.kind() == Kind.HEX) {
            return Long.parseUnsignedLong(t.text().substring(2), 16);
        }
        throw error(t, "expected " + what + " (an integer), got " + t);
    }

    private long seq32(String what) {
        Token at = peek();
        long v = integer(what);
        if (v < 0 || v > 0xFFFF_FFFFL) {
            throw error(at, what + " " + v + " is outside 0..4294967295");
        }
        return v;
    }

    private long[] seqRange() {
        Token at = peek();
        long start = seq32("start sequence number");
        expectPunct(":", "in seq:end(length)");
        long end = seq32("end sequence number");
        expectPunct("(", "in seq:end(length)");
        long len = integer("payload length");
        expectPunct(")", "in seq:end(length)");
        if (((end - start) & 0xFFFF_FFFFL) != len) {
            throw error(at, "inconsistent sequence numbers and payload length: " + start + ":" + end + "(" + len
                    + ")");
        }
        return new long[] {start, end, len};
    }

    private PacketSpec.Tcp tcp(boolean inbound) {
        Token at = peek();
        String flags = flags();
        long[] seq = seqRange();
        Long ack = null;
        Integer win = null;
        Integer urg = null;
        while (peek().kind() == Kind.WORD) {
            Token w = peek();
            if (w.isWord("ack")) {
                take();
                ack = seq32("ack number");
            } else if (w.isWord("win")) {
                take();
                long v = integer("window");
                if (v < 0 || v > 65535) {
                    throw error(w, "window " + v + " is outside 0..65535");
                }
                win = (int) v;
            } else if (w.isWord("urg")) {
                take();
                urg = (int) integer("urgent pointer");
            } else {
                break;
            }
        }
        List<TcpOptionSpec> options = null;
        boolean any = false;
        if (peek().isPunct("<")) {
            Token lt = take();
            if (peek().kind() == Kind.ELLIPSIS) {
                take();
                any = true;
                if (inbound) {
                    throw error(lt, "<...> (any options) is only for outbound packets");
                }
            } else {
                options = new ArrayList<>();
                do {
                    options.add(tcpOption());
                } while (acceptPunct(","));
            }
            expectPunct(">", "closing the TCP options");
        }
        if (inbound && win == null) {
            throw error(at, "an inbound packet needs a window (win N)");
        }
        return new PacketSpec.Tcp(flags, seq[0], seq[1], (int) seq[2], ack, win, urg, options, any);
    }

    private TcpOptionSpec tcpOption() {
        Token t = take();
        if (t.kind() != Kind.WORD) {
            throw error(t, "expected a TCP option (mss, nop, wscale, sackOK, sack, TS, eol), got " + t);
        }
        return switch (t.text()) {
            case "nop" -> new TcpOptionSpec.Nop();
            case "eol" -> new TcpOptionSpec.Eol();
            case "mss" -> new TcpOptionSpec.Mss((int) integer("MSS"));
            case "wscale" -> new TcpOptionSpec.WindowScale((int) integer("window scale"));
            case "sackOK" -> new TcpOptionSpec.SackPermitted();
            case "sack" -> {
                List<long[]> blocks = new ArrayList<>();
                while (peek().kind() == Kind.NUMBER) {
                    long l = seq32("SACK block start");
                    expectPunct(":", "in a SACK block left:right");
                    blocks.add(new long[] {l, seq32("SACK block end")});
                }
                if (blocks.isEmpty()) {
                    throw error(t, "sack needs at least one block left:right");
                }
                yield new TcpOptionSpec.Sack(blocks);
            }
            case "TS" -> {
                Token v = take();
                if (!v.isWord("val")) {
                    throw error(v, "expected 'val' after TS, got " + v);
                }
                long val = seq32("TS val");
                Token e = take();
                if (!e.isWord("ecr")) {
                    throw error(e, "expected 'ecr' in TS val X ecr Y, got " + e);
                }
                yield new TcpOptionSpec.Timestamp(val, seq32("TS ecr"));
            }
            case "FO", "FOEXP" -> throw error(t, "TCP fast open option (" + t.text() + ") is not supported");
            case "md5" -> throw error(t, "TCP MD5 signature option (md5) is not supported");
            default -> throw error(t, "unknown TCP option " + t);
        };
    }

    private PacketSpec.Icmp icmp(Token at) {
        Token typeTok = take();
        if (typeTok.kind() != Kind.WORD) {
            throw error(typeTok, "expected an ICMP type (unreachable, ...), got " + typeTok);
        }
        // Names are checked against ICMPv4 and ICMPv6 here; which one the line means is known once the script's
        // options are (ScriptSettings checks the line against that version's names).
        if (!IcmpNames.knownInEither(typeTok.text(), null)) {
            throw error(typeTok, "unknown ICMP type " + typeTok);
        }
        Integer type = IcmpNames.type(typeTok.text());
        String codeName = null;
        int code = 0;
        if (peek().kind() == Kind.WORD && !peek().isWord("mtu") && !peek().isWord("id")) {
            Token c = take();
            if (!IcmpNames.knownInEither(typeTok.text(), c.text())) {
                throw error(c, "unknown ICMP code " + c + " for " + typeTok.text());
            }
            codeName = c.text();
            Integer v = type == null ? null : IcmpNames.code(type, c.text());
            code = v == null ? -1 : v;
        }
        Integer mtu = null;
        if (peek().isWord("mtu")) {
            Token m = take();
            boolean v4FragNeeded = type != null && type == IcmpNames.DEST_UNREACH && code == IcmpNames.FRAG_NEEDED;
            if (!v4FragNeeded && !typeTok.isWord("packet_too_big")) {
                throw error(m, "an ICMP mtu is only valid for unreachable frag_needed (ICMPv6: packet_too_big)");
            }
            long v = integer("MTU");
            long max = v4FragNeeded ? 65535 : 0xFFFF_FFFFL;
            if (v < 0 || v > max) {
                throw error(m, "ICMP MTU " + v + " is outside 0.." + max);
            }
            mtu = (int) v;
        }
        if (peek().isWord("id")) {
            throw error(peek(), "ICMP echo ids are not supported");
        }
        long[] echoed = null;
        if (acceptPunct("[")) {
            if (peek().kind() == Kind.WORD) {
                throw error(peek(), "ICMP quoting " + peek() + " is not supported (only a TCP seq:end(len))");
            }
            echoed = seqRange();
            expectPunct("]", "closing the quoted segment");
        }
        return new PacketSpec.Icmp(typeTok.text(), codeName, type == null ? -1 : type, code, mtu, echoed);
    }

    // ---- system calls ----

    private SyscallSpec syscall() {
        Long end = null;
        if (peek().kind() == Kind.ELLIPSIS) {
            take();
            acceptPunct("+");
            if (peek().kind() != Kind.NUMBER) {
                throw error(peek(), "expected the end time of a blocking call after '...', got " + peek());
            }
            end = Micros.parseSeconds(take().text());
        }
        Token name = take();
        if (name.kind() != Kind.WORD) {
            throw error(name, "expected a system call name, got " + name);
        }
        expectPunct("(", "after system call " + name.text());
        List<Expr> args = new ArrayList<>();
        if (!acceptPunct(")")) {
            do {
                args.add(expr());
            } while (acceptPunct(","));
            expectPunct(")", "closing the arguments of " + name.text());
        }
        expectPunct("=", "before the expected result of " + name.text());
        Expr result = expr();
        String errno = null;
        if (peek().kind() == Kind.WORD) {
            errno = take().text();
        }
        if (peek().isPunct("(")) {
            skipNote();
        }
        return new SyscallSpec(name.text(), List.copyOf(args), result, errno, end);
    }

    /** {@code (Operation now in progress)} or {@code (flags O_RDWR)}: free text for the reader. */
    private void skipNote() {
        Token open = take();
        int depth = 1;
        while (depth > 0) {
            Token t = take();
            if (t.kind() == Kind.EOF) {
                throw error(open, "note '(' not closed");
            }
            if (t.isPunct("(")) {
                depth++;
            } else if (t.isPunct(")")) {
                depth--;
            }
        }
    }

    Expr expr() {
        Expr first = primary();
        if (!peek().isPunct("|")) {
            return first;
        }
        List<Expr> terms = new ArrayList<>();
        terms.add(first);
        while (acceptPunct("|")) {
            terms.add(primary());
        }
        return new Expr.Or(terms, first.line());
    }

    private Expr primary() {
        Token t = take();
        int line = t.line();
        switch (t.kind()) {
            case ELLIPSIS:
                return new Expr.Ellipsis(line);
            case NUMBER:
                if (t.text().indexOf('.') >= 0) {
                    throw error(t, "expected an integer, got " + t);
                }
                return new Expr.Int(Long.parseLong(t.text()), line);
            case HEX:
                return new Expr.Int(Long.parseUnsignedLong(t.text().substring(2), 16), line);
            case STRING:
                if (peek().kind() == Kind.ELLIPSIS) {
                    take();
                }
                return new Expr.Str(t.text(), line);
            case WORD: {
                if (peek().isPunct("(")) {
                    take();
                    List<Expr> args = new ArrayList<>();
                    if (!acceptPunct(")")) {
                        do {
                            args.add(expr());
                        } while (acceptPunct(","));
                        expectPunct(")", "closing " + t.text() + "(...)");
                    }
                    if (acceptPunct("=")) {
                        return new Expr.Field(t.text(), expr(), line);
                    }
                    return new Expr.Call(t.text(), args, line);
                }
                if (acceptPunct("=")) {
                    return new Expr.Field(t.text(), expr(), line);
                }
                return new Expr.Name(t.text(), line);
            }
            case PUNCT:
                if (t.text().equals("-")) {
                    Token n = take();
                    if (n.kind() == Kind.NUMBER && n.text().indexOf('.') < 0) {
                        return new Expr.Int(-Long.parseLong(n.text()), line);
                    }
                    throw error(n, "expected a number after '-', got " + n);
                }
                if (t.text().equals("[")) {
                    List<Expr> el = new ArrayList<>();
                    if (!acceptPunct("]")) {
                        do {
                            el.add(expr());
                        } while (acceptPunct(","));
                        expectPunct("]", "closing the array");
                    }
                    return new Expr.Array(el, line);
                }
                if (t.text().equals("{")) {
                    List<Expr> el = new ArrayList<>();
                    if (!acceptPunct("}")) {
                        do {
                            el.add(expr());
                        } while (acceptPunct(","));
                        expectPunct("}", "closing the struct");
                    }
                    return new Expr.Struct(el, line);
                }
                break;
            default:
                break;
        }
        throw error(t, "expected an expression, got " + t);
    }
}
