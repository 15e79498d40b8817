package dev.usnet.tools.topology.file;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A small subset of the pcap-filter language (tcpdump's expressions), parsed here and run on captured frames:
 * <ul>
 *   <li>protocols {@code ether}, {@code ip}, {@code arp}, {@code tcp}, {@code udp}, {@code icmp};</li>
 *   <li>{@code [src|dst] host A} (IPv4 source or destination, or ARP sender or target), {@code [src|dst] net N/LEN},
 *       {@code [src|dst] port P} (TCP or UDP, first fragments), each optionally after a protocol that narrows it
 *       ({@code ip host A}, {@code tcp dst port 80}, {@code udp port 53});</li>
 *   <li>{@code ether [src|dst|host] MAC};</li>
 *   <li>TCP flags: {@code tcp[tcpflags] & FLAGS != 0}, {@code tcp[tcpflags] & FLAGS == FLAGS} (FLAGS a flag word, a
 *       number, or flag words joined by {@code |} in parentheses), or a flag word alone ({@code tcp-syn}: TCP with
 *       SYN set), words {@code tcp-fin tcp-syn tcp-rst tcp-push tcp-ack tcp-urg};</li>
 *   <li>ICMP type: {@code icmp[icmptype] == T} or {@code != T}, T a number or {@code icmp-echoreply icmp-unreach
 *       icmp-redirect icmp-echo icmp-timxceed icmp-paramprob};</li>
 *   <li>{@code and} ({@code &&}), {@code or} ({@code ||}), {@code not} ({@code !}), parentheses; {@code not} binds
 *       tightest, then {@code and}, then {@code or}.</li>
 * </ul>
 * A frame with an 802.1Q tag is looked at past it. A filter that cannot be parsed is an
 * {@link IllegalArgumentException} whose message starts with the 1-based column.
 */
public final class CaptureFilter {
    private static final Map<String, Integer> TCP_FLAGS = Map.of("tcp-fin", 0x01, "tcp-syn", 0x02, "tcp-rst", 0x04,
            "tcp-push", 0x08, "tcp-ack", 0x10, "tcp-urg", 0x20);
    private static final Map<String, Integer> ICMP_TYPES = Map.of("icmp-echoreply", 0, "icmp-unreach", 3,
            "icmp-redirect", 5, "icmp-echo", 8, "icmp-timxceed", 11, "icmp-paramprob", 12);

    /** A test on one decoded frame. */
    private interface Node {
        boolean test(Frame f);
    }

    private final String text;
    private final Node root;

    private CaptureFilter(String text, Node root) {
        this.text = text;
        this.root = root;
    }

    /** Parses {@code text}; throws IllegalArgumentException {@code "column N: ..."} when it is not in the subset. */
    public static CaptureFilter parse(String text) {
        Parser p = new Parser(text);
        Node n = p.expression();
        if (p.peek() != null) {
            throw p.error(p.peek(), "expected 'and', 'or' or the end of the filter, got '" + p.peek().text + "'");
        }
        return new CaptureFilter(text, n);
    }

    /** Whether the Ethernet frame {@code frame} passes the filter. */
    public boolean matches(byte[] frame) {
        return root.test(new Frame(frame));
    }

    @Override
    public String toString() {
        return text;
    }

    /** The headers of one frame, found once: offsets of the network and transport headers, -1 when absent. */
    public static final class Frame {
        final byte[] b;
        final int type;
        final int l3;
        /** The IPv4 protocol, -1 if not IPv4. */
        final int proto;
        /** The transport header of an unfragmented packet or first fragment, -1 otherwise. */
        final int l4;

        Frame(byte[] b) {
            this.b = b;
            int t = b.length >= 14 ? u16(b, 12) : -1;
            int off = 14;
            if (t == 0x8100 && b.length >= 18) {
                t = u16(b, 16);
                off = 18;
            }
            this.type = t;
            this.l3 = off;
            int pr = -1;
            int l4off = -1;
            if (t == 0x0800 && b.length >= off + 20 && (b[off] & 0xf0) == 0x40) {
                pr = b[off + 9] & 0xff;
                int ihl = (b[off] & 0x0f) * 4;
                boolean firstFragment = (u16(b, off + 6) & 0x1fff) == 0;
                if (ihl >= 20 && firstFragment && b.length >= off + ihl) {
                    l4off = off + ihl;
                }
            }
            this.proto = pr;
            this.l4 = l4off;
        }

        boolean ip() {
            return proto >= 0;
        }

        boolean arp() {
            return type == 0x0806 && b.length >= l3 + 28;
        }

        /** The IPv4 source (src) or destination, or the ARP sender or target address; null when neither. */
        Integer addr(boolean src) {
            if (ip()) {
                return u32(b, l3 + (src ? 12 : 16));
            }
            if (arp()) {
                return u32(b, l3 + (src ? 14 : 24));
            }
            return null;
        }

        /** The TCP or UDP source (src) or destination port; -1 when not TCP or UDP with a whole header there. */
        int port(boolean src) {
            if (l4 < 0 || proto != 6 && proto != 17 || b.length < l4 + 4) {
                return -1;
            }
            return u16(b, l4 + (src ? 0 : 2));
        }

        int tcpFlags() {
            return proto == 6 && l4 >= 0 && b.length >= l4 + 14 ? b[l4 + 13] & 0xff : -1;
        }

        int icmpType() {
            return proto == 1 && l4 >= 0 && b.length >= l4 + 1 ? b[l4] & 0xff : -1;
        }

        long mac(boolean src) {
            return b.length >= 14 ? u48(b, src ? 6 : 0) : -1;
        }
    }

    public static int u16(byte[] b, int i) {
        return ((b[i] & 0xff) << 8) | (b[i + 1] & 0xff);
    }

    public static int u32(byte[] b, int i) {
        return ((b[i] & 0xff) << 24) | ((b[i + 1] & 0xff) << 16) | ((b[i + 2] & 0xff) << 8) | (b[i + 3] & 0xff);
    }

    public static long u48(byte[] b, int i) {
        long v = 0;
        for (int k = 0; k < 6; k++) {
            v = (v << 8) | (b[i + k] & 0xff);
        }
        return v;
    }

    private record Token(String text, int column) {}

    /** Recursive descent over the tokens: or-expressions of and-expressions of (negated) primitives. */
    private static final class Parser {
        private final List<Token> tokens = new ArrayList<>();
        private final int endColumn;
        private int pos;

        Parser(String s) {
            int i = 0;
            while (i < s.length()) {
                char c = s.charAt(i);
                if (Character.isWhitespace(c)) {
                    i++;
                    continue;
                }
                int start = i;
                if (s.startsWith("&&", i) || s.startsWith("||", i) || s.startsWith("!=", i) || s.startsWith("==", i)) {
                    i += 2;
                } else if ("()[]&|!=".indexOf(c) >= 0) {
                    i++;
                } else {
                    while (i < s.length() && !Character.isWhitespace(s.charAt(i)) && "()[]&|!=".indexOf(s.charAt(i)) < 0) {
                        i++;
                    }
                }
                tokens.add(new Token(s.substring(start, i), start + 1));
            }
            endColumn = s.length() + 1;
            if (tokens.isEmpty()) {
                throw new IllegalArgumentException("column 1: the filter is empty");
            }
        }

        Token peek() {
            return pos < tokens.size() ? tokens.get(pos) : null;
        }

        boolean at(String... words) {
            Token t = peek();
            if (t == null) {
                return false;
            }
            for (String w : words) {
                if (t.text.equalsIgnoreCase(w)) {
                    return true;
                }
            }
            return false;
        }

        Token take(String what) {
            Token t = peek();
            if (t == null) {
                throw new IllegalArgumentException("column " + endColumn + ": expected " + what + ", got the end of the filter");
            }
            pos++;
            return t;
        }

        void expect(String word) {
            Token t = take("'" + word + "'");
            if (!t.text.equals(word)) {
                throw error(t, "expected '" + word + "', got '" + t.text + "'");
            }
        }

        IllegalArgumentException error(Token t, String message) {
            return new IllegalArgumentException("column " + t.column + ": " + message);
        }

        Node expression() {
            Node left = conjunction();
            while (at("or", "||")) {
                pos++;
                Node a = left;
                Node b = conjunction();
                left = f -> a.test(f) || b.test(f);
            }
            return left;
        }

        Node conjunction() {
            Node left = unary();
            while (at("and", "&&")) {
                pos++;
                Node a = left;
                Node b = unary();
                left = f -> a.test(f) && b.test(f);
            }
            return left;
        }

        Node unary() {
            if (at("not", "!")) {
                pos++;
                Node n = unary();
                return f -> !n.test(f);
            }
            if (at("(")) {
                pos++;
                Node n = expression();
                expect(")");
                return n;
            }
            return primitive();
        }

        Node primitive() {
            Token t = take("a protocol (ether, ip, arp, tcp, udp, icmp), host, net, port or a TCP flag");
            String w = t.text.toLowerCase(Locale.ROOT);
            switch (w) {
                case "ether" -> {
                    if (at("src", "dst", "host")) {
                        String dir = take("").text.toLowerCase(Locale.ROOT);
                        long mac = mac(take("a MAC address"));
                        return switch (dir) {
                            case "src" -> f -> f.mac(true) == mac;
                            case "dst" -> f -> f.mac(false) == mac;
                            default -> f -> f.mac(true) == mac || f.mac(false) == mac;
                        };
                    }
                    return f -> f.b.length >= 14;
                }
                case "ip" -> {
                    Node only = Frame::ip;
                    return narrowed(only, "host", "net");
                }
                case "arp" -> {
                    Node only = Frame::arp;
                    return narrowed(only, "host", "net");
                }
                case "tcp", "udp" -> {
                    int proto = w.equals("tcp") ? 6 : 17;
                    if (w.equals("tcp") && at("[")) {
                        return tcpFlagsTest();
                    }
                    Node only = f -> f.proto == proto;
                    return narrowed(only, "port");
                }
                case "icmp" -> {
                    if (at("[")) {
                        return icmpTypeTest();
                    }
                    return f -> f.proto == 1;
                }
                case "src", "dst", "host", "net", "port" -> {
                    pos--;
                    return qualified();
                }
                default -> {
                    Integer flag = TCP_FLAGS.get(w);
                    if (flag != null) {
                        return f -> f.tcpFlags() >= 0 && (f.tcpFlags() & flag) != 0;
                    }
                    throw error(t, "unknown word '" + t.text + "' (this filter subset knows ether, ip, arp, tcp, udp, icmp,"
                            + " [src|dst] host|net|port, tcp[tcpflags], icmp[icmptype], tcp-syn and the other flag words,"
                            + " and, or, not, parentheses)");
                }
            }
        }

        /** A protocol word, maybe followed by a qualifier it narrows ({@code ip host A}, {@code tcp dst port 80}). */
        private Node narrowed(Node proto, String... kinds) {
            if (!at("src", "dst", "host", "net", "port")) {
                return proto;
            }
            Token next = peek();
            int save = pos;
            if (at("src", "dst")) {
                pos++;
            }
            Token kind = peek();
            pos = save;
            if (kind == null || !List.of(kinds).contains(kind.text.toLowerCase(Locale.ROOT))) {
                throw error(kind == null ? next : kind, "'" + (kind == null ? next.text : kind.text)
                        + "' cannot follow this protocol (expected " + String.join(" or ", kinds) + ")");
            }
            Node q = qualified();
            return f -> proto.test(f) && q.test(f);
        }

        /** {@code [src|dst] host A}, {@code [src|dst] net N/LEN}, {@code [src|dst] port P}. */
        private Node qualified() {
            Boolean src = null;
            if (at("src")) {
                pos++;
                src = true;
            } else if (at("dst")) {
                pos++;
                src = false;
            }
            Token k = take("host, net or port");
            Boolean s = src;
            switch (k.text.toLowerCase(Locale.ROOT)) {
                case "host" -> {
                    int a = ipv4(take("an IPv4 address"));
                    return f -> {
                        Integer from = f.addr(true);
                        Integer to = f.addr(false);
                        return from != null && (s == null ? from == a || to == a : (s ? from : to) == a);
                    };
                }
                case "net" -> {
                    Token n = take("a network like 198.18.0.0/16");
                    int slash = n.text.indexOf('/');
                    if (slash < 0) {
                        throw error(n, "expected a network with its prefix length like 198.18.0.0/16, got '" + n.text + "'");
                    }
                    int net = ipv4(new Token(n.text.substring(0, slash), n.column));
                    int len;
                    try {
                        len = Integer.parseInt(n.text.substring(slash + 1));
                    } catch (NumberFormatException e) {
                        len = -1;
                    }
                    if (len < 0 || len > 32) {
                        throw error(n, "expected a prefix length 0..32 after '/', got '" + n.text.substring(slash + 1) + "'");
                    }
                    int mask = len == 0 ? 0 : -1 << (32 - len);
                    if ((net & mask) != net) {
                        throw error(n, "'" + n.text + "' has host bits set (non-network bits of netmask)");
                    }
                    return f -> {
                        Integer from = f.addr(true);
                        Integer to = f.addr(false);
                        return from != null && (s == null ? (from & mask) == net || (to & mask) == net
                                : ((s ? from : to) & mask) == net);
                    };
                }
                case "port" -> {
                    Token pt = take("a port number");
                    int port;
                    try {
                        port = Integer.parseInt(pt.text);
                    } catch (NumberFormatException e) {
                        port = -1;
                    }
                    if (port < 0 || port > 65535) {
                        throw error(pt, "expected a port number 0..65535, got '" + pt.text + "'");
                    }
                    int p = port;
                    return f -> {
                        int from = f.port(true);
                        return from >= 0 && (s == null ? from == p || f.port(false) == p : f.port(s) == p);
                    };
                }
                default -> throw error(k, "expected host, net or port, got '" + k.text + "'");
            }
        }

        /** {@code tcp[tcpflags] & FLAGS != 0} or {@code == FLAGS} (also {@code = FLAGS}). */
        private Node tcpFlagsTest() {
            expect("[");
            Token f = take("tcpflags");
            if (!f.text.equals("tcpflags") && !f.text.equals("13")) {
                throw error(f, "expected tcp[tcpflags] (or tcp[13]), got tcp[" + f.text + "]");
            }
            expect("]");
            expect("&");
            int mask = flagValue(TCP_FLAGS, "a TCP flag word like tcp-syn or a number");
            Token op = take("!= or ==");
            boolean ne = op.text.equals("!=");
            if (!ne && !op.text.equals("==") && !op.text.equals("=")) {
                throw error(op, "expected != or ==, got '" + op.text + "'");
            }
            int v = flagValue(TCP_FLAGS, "a TCP flag word or a number");
            return fr -> {
                int fl = fr.tcpFlags();
                return fl >= 0 && (ne ? (fl & mask) != v : (fl & mask) == v);
            };
        }

        /** {@code icmp[icmptype] == T} or {@code != T}. */
        private Node icmpTypeTest() {
            expect("[");
            Token f = take("icmptype");
            if (!f.text.equals("icmptype") && !f.text.equals("0")) {
                throw error(f, "expected icmp[icmptype] (or icmp[0]), got icmp[" + f.text + "]");
            }
            expect("]");
            Token op = take("!= or ==");
            boolean ne = op.text.equals("!=");
            if (!ne && !op.text.equals("==") && !op.text.equals("=")) {
                throw error(op, "expected != or ==, got '" + op.text + "'");
            }
            int v = flagValue(ICMP_TYPES, "an ICMP type word like icmp-echo or a number");
            return fr -> {
                int t = fr.icmpType();
                return t >= 0 && (ne ? t != v : t == v);
            };
        }

        /** A word of {@code words}, a number, or words joined by {@code |} in parentheses (ORed). */
        private int flagValue(Map<String, Integer> words, String what) {
            if (at("(")) {
                pos++;
                int v = flagValue(words, what);
                while (at("|")) {
                    pos++;
                    v |= flagValue(words, what);
                }
                expect(")");
                return v;
            }
            Token t = take(what);
            Integer w = words.get(t.text.toLowerCase(Locale.ROOT));
            if (w != null) {
                return w;
            }
            try {
                int n = Integer.decode(t.text);
                if (n < 0 || n > 255) {
                    throw error(t, "expected " + what + " (0..255), got " + n);
                }
                return n;
            } catch (NumberFormatException e) {
                throw error(t, "expected " + what + ", got '" + t.text + "'");
            }
        }

        private int ipv4(Token t) {
            if (t.text.indexOf(':') >= 0) {
                throw error(t, "capture filters match IPv4 addresses only so far (no ip6 primitives yet), got '" + t.text
                        + "'");
            }
            try {
                return Ipv4Addr.parse(t.text);
            } catch (IllegalArgumentException e) {
                throw error(t, "expected an IPv4 address like 198.18.0.1, got '" + t.text + "'");
            }
        }

        private long mac(Token t) {
            try {
                return MacAddr.parse(t.text);
            } catch (IllegalArgumentException e) {
                throw error(t, "expected a MAC address like 02:00:00:00:00:01, got '" + t.text + "'");
            }
        }
    }
}
