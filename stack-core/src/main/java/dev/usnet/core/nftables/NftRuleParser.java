package dev.usnet.core.nftables;

import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.wire.IcmpPacket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.function.ToIntFunction;

/**
 * Reads one rule of the subset into its expressions: the matches ({@code iifname}, {@code ip saddr}, {@code tcp
 * dport}, {@code ct state}, ...), the statements and the verdict, the values, ranges, prefixes and anonymous sets
 * they take. Checks what nft checks while reading a rule: one transport protocol per rule, a port mapping only after
 * a transport match; and notes the protocol matches nft leaves out of its listing.
 */
final class NftRuleParser {
    /** nft keywords that start a statement or expression usnet does not model. */
    private static final Set<String> UNSUPPORTED_STATEMENTS = Set.of("log", "limit", "quota", "notrack", "redirect",
            "queue", "dup", "fwd", "tproxy", "synproxy", "set", "update", "numgen", "jhash", "symhash", "ip6", "inet",
            "ether", "vlan", "arp", "sctp", "dccp", "ah", "esp", "comp", "icmpv6", "igmp", "th", "fib", "rt", "socket",
            "osf", "exthdr", "ipsec", "continue", "flow", "add", "delete", "reset", "secmark", "last", "xt", "hbh",
            "frag", "dst", "mh", "srh", "rt0", "rt2", "rt4", "udplite", "gre", "geneve", "vxlan", "gretap", "cgroupv2",
            "tunnel", "meter", "ct", "icmpx", "mark", "dscp", "comment");
    private static final Set<String> IP_FIELDS_UNSUPPORTED = Set.of("version", "hdrlength", "dscp", "ecn", "length",
            "id", "frag-off", "ttl", "checksum", "option");
    private static final Set<String> TCP_FIELDS_UNSUPPORTED = Set.of("sequence", "ackseq", "doff", "reserved",
            "window", "checksum", "urgptr", "option");
    private static final Set<String> META_KEYS_UNSUPPORTED = Set.of("length", "protocol", "nfproto", "priority",
            "skuid", "skgid", "rtclassid", "pkttype", "cpu", "iifgroup", "oifgroup", "cgroup", "random", "secpath",
            "iiftype", "oiftype", "iifkind", "oifkind", "nftrace", "time", "day", "hour", "ibrname", "obrname",
            "sdif", "sdifname", "broute", "ibrpvid", "ibrvproto");
    private static final Set<String> CT_KEYS_UNSUPPORTED = Set.of("direction", "expiration", "helper", "l3proto",
            "protocol", "proto-src", "proto-dst", "original", "reply", "zone", "count", "label", "id", "avgpkt",
            "bytes", "packets", "event", "saddr", "daddr", "timeout", "expectation");

    /**
     * State of the rule being read: the transport protocol known so far, the latest protocol match a transport
     * match would depend on, whether a verdict ended it, the anonymous sets it has (each takes a handle).
     */
    private int l4;
    private int l4Dependency;
    private boolean terminal;
    private int sets;

    private final NftTokens in;
    /** The ifindex of a device name (iif, oif), or -1 when there is no such device. */
    private final ToIntFunction<String> ifindex;

    NftRuleParser(NftTokens in, ToIntFunction<String> ifindex) {
        this.in = in;
        this.ifindex = ifindex;
    }

    /** One rule, up to the end of its line or a ";" or "}": the command that adds it. */
    NftCommand.AddRule rule(String table, String chain, boolean insert, long position, NftToken start) {
        in.ruleStart = in.pos;
        l4 = -1;
        l4Dependency = -1;
        terminal = false;
        sets = 0;
        List<NftExpr> exprs = new ArrayList<>();
        List<Boolean> hidden = new ArrayList<>();
        if (in.atEndOfStatement()) {
            throw in.expected("a rule");
        }
        while (!in.atEndOfStatement()) {
            if (terminal) {
                if (in.peek().is("comment")) {
                    throw NftTokens.unsupported(in.peek(), "a rule's comment");
                }
                throw in.expected("end of rule after a verdict");
            }
            int l4Before = l4;
            NftExpr e = expr();
            boolean resets = e instanceof NftRejectExpr r && r.isTcpReset();
            if (resets && l4Before < 0) {
                // A reset answers TCP only: nft adds the protocol match itself and does not list it.
                exprs.add(NftMetaExpr.l4proto(false, new NftValues(new long[] {6}, new long[] {6},
                        new byte[] {NftValues.SINGLE}, new int[1], false, x -> "tcp")));
                hidden.add(true);
            }
            // nft lists the protocol match a transport match (or a tcp reset) depends on as implied by it: the
            // latest such match, when no statement came between.
            int tp = resets ? 6 : e.transportProtocol();
            if (tp >= 0 && l4Dependency >= 0) {
                hidden.set(l4Dependency, true);
                l4Dependency = -1;
            }
            int dep = e instanceof NftPayloadExpr pe ? pe.dependencyProtocol()
                    : e instanceof NftMetaExpr me ? me.dependencyProtocol() : -1;
            if (dep >= 0) {
                l4Dependency = exprs.size();
            } else if (e instanceof NftCounterExpr || e instanceof NftMarkSetExpr) {
                l4Dependency = -1;
            }
            exprs.add(e);
            hidden.add(false);
        }
        boolean[] h = new boolean[hidden.size()];
        for (int i = 0; i < h.length; i++) {
            h[i] = hidden.get(i);
        }
        in.ruleStart = -1;
        return new NftCommand.AddRule(table, chain, new NftRule(exprs.toArray(new NftExpr[0]), h), insert, position, sets,
                start.line(), start.column());
    }

    /** Records that the rule now reads protocol {@code proto}'s header, refusing a conflict as nft does. */
    private void protocol(int proto, NftToken at) {
        if (l4 >= 0 && l4 != proto) {
            throw NftTokens.error(at, "conflicting protocols specified: " + NftNames.nameOf(NftNames.PROTOCOLS, l4) + " vs. "
                    + NftNames.nameOf(NftNames.PROTOCOLS, proto));
        }
        l4 = proto;
    }

    private NftExpr expr() {
        NftToken t = in.peek();
        if (t.kind() != NftToken.Kind.WORD) {
            throw in.expected("a match or statement");
        }
        String w = t.text();
        switch (w) {
            case "iifname", "oifname" -> {
                in.pos++;
                return ifname(w.equals("oifname"));
            }
            case "iif", "oif" -> {
                in.pos++;
                return ifindexMatch(w.equals("oif"));
            }
            case "ip" -> {
                in.pos++;
                return ip();
            }
            case "meta" -> {
                in.pos++;
                return meta();
            }
            case "tcp", "udp" -> {
                in.pos++;
                return transport(w.equals("tcp") ? 6 : 17, t);
            }
            case "icmp" -> {
                in.pos++;
                NftToken f = in.peek();
                if (!in.accept("type")) {
                    if (f.kind() == NftToken.Kind.WORD && Set.of("code", "id", "sequence", "mtu", "gateway", "checksum")
                            .contains(f.text())) {
                        throw NftTokens.unsupported(f, "icmp " + f.text());
                    }
                    throw in.expected("\"type\"");
                }
                protocol(1, t);
                boolean neg = op();
                return new NftPayloadExpr(NftPayloadExpr.Field.ICMP_TYPE, neg,
                        values(this::icmpType, v -> nameOr(NftNames.ICMP_TYPES, v), false, "an ICMP type"));
            }
            case "ct" -> {
                in.pos++;
                return ct();
            }
            case "counter" -> {
                in.pos++;
                NftCounterExpr c = new NftCounterExpr();
                if (in.accept("packets")) {
                    long pk = in.number("a packet count");
                    in.expect("bytes", "\"bytes\"");
                    c.preset(pk, in.number("a byte count"));
                }
                return c;
            }
            case "accept", "drop", "return" -> {
                in.pos++;
                terminal = true;
                return new NftVerdictExpr(w.equals("accept") ? NftVerdictExpr.Kind.ACCEPT
                        : w.equals("drop") ? NftVerdictExpr.Kind.DROP : NftVerdictExpr.Kind.RETURN, null, t.line(),
                        t.column());
            }
            case "jump", "goto" -> {
                in.pos++;
                NftToken n = in.peek();
                String target = in.name("a chain name");
                terminal = true;
                return new NftVerdictExpr(w.equals("jump") ? NftVerdictExpr.Kind.JUMP : NftVerdictExpr.Kind.GOTO, target,
                        n.line(), n.column());
            }
            case "reject" -> {
                in.pos++;
                terminal = true;
                return reject();
            }
            case "snat", "dnat" -> {
                in.pos++;
                terminal = true;
                return nat(w.equals("snat") ? NftNatExpr.Kind.SNAT : NftNatExpr.Kind.DNAT);
            }
            case "masquerade" -> {
                in.pos++;
                terminal = true;
                return nat(NftNatExpr.Kind.MASQUERADE);
            }
            default -> {
                if (UNSUPPORTED_STATEMENTS.contains(w)) {
                    throw NftTokens.unsupported(t, "\"" + w + "\"");
                }
                throw in.expected("a match or statement (iifname, oifname, iif, oif, ip, meta, tcp, udp, icmp, ct,"
                        + " counter, accept, drop, reject, jump, goto, return, snat, dnat, masquerade)");
            }
        }
    }

    /** An optional {@code ==} or {@code !=}; true for {@code !=}. */
    private boolean op() {
        if (in.accept("!=")) {
            return true;
        }
        in.accept("==");
        return false;
    }

    private NftExpr ifname(boolean outDev) {
        boolean neg = op();
        NftToken t = in.peek();
        if (t.is("{")) {
            throw NftTokens.unsupported(t, "a set of interface names");
        }
        String n = in.name("an interface name");
        return NftMetaExpr.ifname(outDev, neg, n);
    }

    private NftExpr ifindexMatch(boolean outDev) {
        boolean neg = op();
        NftToken t = in.peek();
        String n = in.name("an interface name");
        int idx = ifindex.applyAsInt(n);
        if (idx < 0) {
            throw NftTokens.error(t, "interface \"" + n + "\" does not exist (iif and oif take a device that exists; iifname"
                    + " and oifname take any name)");
        }
        return NftMetaExpr.ifindex(outDev, neg, n, idx);
    }

    private NftExpr ip() {
        NftToken f = in.peek();
        if (in.accept("saddr") || in.accept("daddr")) {
            boolean neg = op();
            return new NftPayloadExpr(f.is("saddr") ? NftPayloadExpr.Field.IP_SADDR : NftPayloadExpr.Field.IP_DADDR,
                    neg, values(this::ipv4, NftNames::ipv4, true, "an IPv4 address"));
        }
        if (in.accept("protocol")) {
            boolean neg = op();
            NftToken v = in.peek();
            NftValues vs = values(this::protocolNumber, x -> nameOr(NftNames.PROTOCOLS, x), false, "a protocol");
            if (!neg && vs.isSingle()) {
                protocol(vs.first(), v);
            }
            return new NftPayloadExpr(NftPayloadExpr.Field.IP_PROTOCOL, neg, vs);
        }
        if (f.kind() == NftToken.Kind.WORD && IP_FIELDS_UNSUPPORTED.contains(f.text())) {
            throw NftTokens.unsupported(f, "ip " + f.text());
        }
        throw in.expected("\"saddr\", \"daddr\" or \"protocol\"");
    }

    private NftExpr meta() {
        NftToken f = in.peek();
        if (in.accept("mark")) {
            if (in.accept("set")) {
                return new NftMarkSetExpr(false, (int) mark());
            }
            boolean neg = op();
            return NftMetaExpr.mark(neg, (int) mark());
        }
        if (in.accept("l4proto")) {
            boolean neg = op();
            NftToken v = in.peek();
            NftValues vs = values(this::protocolNumber, x -> nameOr(NftNames.PROTOCOLS, x), false, "a protocol");
            if (!neg && vs.isSingle()) {
                protocol(vs.first(), v);
            }
            return NftMetaExpr.l4proto(neg, vs);
        }
        if (in.accept("iifname") || in.accept("oifname")) {
            return ifname(in.toks.get(in.pos - 1).is("oifname"));
        }
        if (in.accept("iif") || in.accept("oif")) {
            return ifindexMatch(in.toks.get(in.pos - 1).is("oif"));
        }
        if (f.kind() == NftToken.Kind.WORD && META_KEYS_UNSUPPORTED.contains(f.text())) {
            throw NftTokens.unsupported(f, "meta " + f.text());
        }
        throw in.expected("\"mark\", \"l4proto\", \"iifname\", \"oifname\", \"iif\" or \"oif\"");
    }

    private NftExpr transport(int proto, NftToken start) {
        NftToken f = in.peek();
        String p = proto == 6 ? "tcp" : "udp";
        if (in.accept("sport") || in.accept("dport")) {
            protocol(proto, start);
            boolean neg = op();
            boolean src = f.is("sport");
            NftPayloadExpr.Field field = proto == 6 ? (src ? NftPayloadExpr.Field.TCP_SPORT : NftPayloadExpr.Field.TCP_DPORT)
                    : (src ? NftPayloadExpr.Field.UDP_SPORT : NftPayloadExpr.Field.UDP_DPORT);
            return new NftPayloadExpr(field, neg, values(this::port, Integer::toString, false, "a port"));
        }
        if (proto == 6 && in.accept("flags")) {
            protocol(proto, start);
            NftPayloadExpr.FlagsOp opKind = NftPayloadExpr.FlagsOp.ANY;
            boolean neg = false;
            if (in.accept("==")) {
                opKind = NftPayloadExpr.FlagsOp.EXACT;
            } else if (in.accept("!=")) {
                opKind = NftPayloadExpr.FlagsOp.EXACT;
                neg = true;
            }
            if (in.peek().is("{") || in.peek().is("&")) {
                throw NftTokens.unsupported(in.peek(), "this form of tcp flags");
            }
            int flags = bitNames(NftNames.TCP_FLAGS, "a TCP flag (fin, syn, rst, psh, ack, urg, ecn, cwr)");
            if (in.accept("/")) {
                if (opKind != NftPayloadExpr.FlagsOp.ANY) {
                    throw NftTokens.error(in.toks.get(in.pos - 1), "tcp flags with a mask compares under it: no == or !=");
                }
                int mask = bitNames(NftNames.TCP_FLAGS, "a TCP flag (fin, syn, rst, psh, ack, urg, ecn, cwr)");
                return NftPayloadExpr.tcpFlags(NftPayloadExpr.FlagsOp.MASKED, false, flags, mask);
            }
            return NftPayloadExpr.tcpFlags(opKind, neg, flags, 0);
        }
        if (f.kind() == NftToken.Kind.WORD && (TCP_FIELDS_UNSUPPORTED.contains(f.text())
                || (proto == 17 && Set.of("length", "checksum").contains(f.text())))) {
            throw NftTokens.unsupported(f, p + " " + f.text());
        }
        throw in.expected(proto == 6 ? "\"sport\", \"dport\" or \"flags\"" : "\"sport\" or \"dport\"");
    }

    private NftExpr ct() {
        NftToken f = in.peek();
        if (in.accept("state")) {
            boolean neg = op();
            int mask = bitNames(NftNames.CT_STATES, "\"new\", \"established\", \"related\", \"invalid\" or \"untracked\"");
            return new NftCtExpr(NftCtExpr.Key.STATE, neg, mask, bitSet);
        }
        if (in.accept("status")) {
            boolean neg = op();
            int mask = bitNames(NftNames.CT_STATUS, "a ct status (expected, seen-reply, assured, confirmed, snat, dnat, dying)");
            return new NftCtExpr(NftCtExpr.Key.STATUS, neg, mask, bitSet);
        }
        if (in.accept("mark")) {
            if (in.accept("set")) {
                return new NftMarkSetExpr(true, (int) mark());
            }
            boolean neg = op();
            return new NftCtExpr(NftCtExpr.Key.MARK, neg, (int) mark(), false);
        }
        if (f.kind() == NftToken.Kind.WORD && CT_KEYS_UNSUPPORTED.contains(f.text())) {
            throw NftTokens.unsupported(f, "ct " + f.text());
        }
        throw in.expected("\"state\", \"status\" or \"mark\"");
    }

    private NftExpr reject() {
        if (!in.accept("with")) {
            return new NftRejectExpr(IcmpPacket.CODE_PORT_UNREACH);
        }
        NftToken k = in.peek();
        if (in.accept("tcp")) {
            in.expect("reset", "\"reset\"");
            if (l4 >= 0 && l4 != 6) {
                throw NftTokens.error(k, "reject with tcp reset needs a tcp rule, this one matches "
                        + NftNames.nameOf(NftNames.PROTOCOLS, l4));
            }
            return new NftRejectExpr(NftRejectExpr.TCP_RESET);
        }
        if (in.accept("icmp")) {
            in.accept("type");
            NftToken c = in.peek();
            Integer code = c.kind() == NftToken.Kind.WORD ? NftNames.ICMP_REJECT_CODES.get(c.text()) : null;
            if (code == null) {
                throw in.expected("an ICMP code (" + String.join(", ", NftNames.ICMP_REJECT_CODES.keySet()) + ")");
            }
            in.pos++;
            return new NftRejectExpr(code);
        }
        if (k.is("icmpx") || k.is("icmpv6")) {
            throw NftTokens.unsupported(k, "reject with " + k.text());
        }
        throw in.expected("\"icmp\" or \"tcp reset\"");
    }

    /** {@code snat|dnat [ip] to ADDR[-ADDR][:PORT[-PORT]] [FLAGS]}, {@code masquerade [to :PORT[-PORT]] [FLAGS]}. */
    private NftExpr nat(NftNatExpr.Kind kind) {
        int flags = 0;
        int minAddr = 0;
        int maxAddr = 0;
        int minPort = 0;
        int maxPort = 0;
        boolean addrRange = false;
        if (kind != NftNatExpr.Kind.MASQUERADE) {
            in.accept("ip");
            in.expect("to", "\"to\"");
        }
        if (kind == NftNatExpr.Kind.MASQUERADE ? in.accept("to") : true) {
            NftToken t = in.peek();
            if (t.kind() != NftToken.Kind.WORD) {
                throw in.expected(kind == NftNatExpr.Kind.MASQUERADE ? "\":PORT\" or \":PORT-PORT\""
                        : "an address, ADDRESS:PORT or ADDRESS:PORT-PORT");
            }
            in.pos++;
            String s = t.text();
            int colon = s.indexOf(':');
            String addr = colon < 0 ? s : s.substring(0, colon);
            String ports = colon < 0 ? null : s.substring(colon + 1);
            if (kind == NftNatExpr.Kind.MASQUERADE) {
                if (!addr.isEmpty() || ports == null) {
                    in.pos--;
                    throw in.expected("\":PORT\" or \":PORT-PORT\" (masquerade takes the address of the output device)");
                }
            } else {
                int dash = addr.indexOf('-');
                minAddr = parseIpv4(dash < 0 ? addr : addr.substring(0, dash), t);
                maxAddr = dash < 0 ? minAddr : parseIpv4(addr.substring(dash + 1), t);
                addrRange = dash >= 0;
                if (Integer.compareUnsigned(minAddr, maxAddr) > 0) {
                    throw NftTokens.error(t, "address range " + addr + " runs backwards");
                }
                flags |= NfNatRange.MAP_IPS;
            }
            if (ports != null) {
                // nft asks only that a protocol match name a transport header it knows: ICMP's id maps too.
                if (l4 < 0 || NftNames.nameOf(NftNames.PROTOCOLS, l4) == null) {
                    throw NftTokens.error(t, "transport protocol mapping is only valid after transport protocol match");
                }
                int dash = ports.indexOf('-');
                minPort = parsePort(dash < 0 ? ports : ports.substring(0, dash), t);
                maxPort = dash < 0 ? minPort : parsePort(ports.substring(dash + 1), t);
                if (minPort > maxPort) {
                    throw NftTokens.error(t, "port range " + ports + " runs backwards");
                }
                flags |= NfNatRange.PROTO_SPECIFIED;
            }
        }
        while (in.peek().kind() == NftToken.Kind.WORD && Set.of("random", "fully-random", "persistent").contains(in.peek().text())) {
            String f = in.next().text();
            flags |= switch (f) {
                case "random" -> NfNatRange.PROTO_RANDOM;
                case "fully-random" -> NfNatRange.PROTO_RANDOM_FULLY;
                default -> NfNatRange.PERSISTENT;
            };
            if (!in.accept(",")) {
                break;
            }
        }
        return new NftNatExpr(kind, new NfNatRange(flags, minAddr, maxAddr, minPort, maxPort), addrRange);
    }

    // ---- values ----

    /** Whether the bit names being read were written as a set in braces (listed so). */
    private boolean bitSet;

    /** Names of bits joined by commas (ct state, ct status, tcp flags), or a set of them in braces. */
    private int bitNames(Map<String, Integer> names, String what) {
        boolean braces = in.accept("{");
        bitSet = braces;
        int mask = 0;
        do {
            NftToken t = in.peek();
            Integer v = t.kind() == NftToken.Kind.WORD ? names.get(t.text()) : null;
            if (v == null) {
                throw in.expected(what);
            }
            in.pos++;
            mask |= v;
        } while (in.accept(","));
        if (braces) {
            in.expect("}", "\"}\"");
        }
        return mask;
    }

    /** Reads one element's value from its text; throws at {@code t} when it is not one. */
    @FunctionalInterface
    private interface ValueReader {
        long read(String text, NftToken t);
    }

    /** A value, range, prefix (addresses) or an anonymous set of them. */
    private NftValues values(ValueReader reader, IntFunction<String> format, boolean prefixes, String what) {
        boolean set = false;
        if (in.accept("{")) {
            set = true;
            sets++;
        }
        List<long[]> elems = new ArrayList<>();
        do {
            skipNewlines(set);
            if (set && in.peek().is("}")) {
                break;
            }
            NftToken t = in.peek();
            if (t.kind() != NftToken.Kind.WORD) {
                throw in.expected(what);
            }
            in.pos++;
            String s = t.text();
            long lo;
            long hi;
            long form = NftValues.SINGLE;
            long plen = 0;
            int dash = rangeDash(s);
            if (dash > 0) {
                lo = reader.read(s.substring(0, dash), t);
                hi = reader.read(s.substring(dash + 1), t);
                if (lo > hi) {
                    throw NftTokens.error(t, "range " + s + " runs backwards");
                }
                form = NftValues.RANGE;
            } else {
                lo = reader.read(s, t);
                hi = lo;
                if (prefixes && in.peek().is("/") && !in.peek().spaceBefore()) {
                    in.pos++;
                    long n = in.number("a prefix length");
                    if (n > 32) {
                        throw NftTokens.error(in.toks.get(in.pos - 1), "prefix length " + n + " is over 32");
                    }
                    long mask = n == 0 ? 0 : (0xffff_ffffL << (32 - n)) & 0xffff_ffffL;
                    if ((lo & ~mask & 0xffff_ffffL) != 0) {
                        // nft keeps the network part: 198.18.0.1/24 lists as 198.18.0.0/24.
                        lo &= mask;
                    }
                    hi = lo | (~mask & 0xffff_ffffL);
                    form = NftValues.PREFIX;
                    plen = n;
                }
            }
            elems.add(new long[] {lo, hi, form, plen});
            skipNewlines(set);
        } while (set && in.accept(","));
        if (set) {
            skipNewlines(true);
            in.expect("}", "\",\" or \"}\"");
            if (elems.isEmpty()) {
                throw NftTokens.error(in.toks.get(in.pos - 1), "an empty set");
            }
        }
        // nft keeps an anonymous set ordered by value and lists it so.
        elems.sort((x, y) -> Long.compare(x[0], y[0]));
        long[] lo = new long[elems.size()];
        long[] hi = new long[elems.size()];
        byte[] form = new byte[elems.size()];
        int[] plen = new int[elems.size()];
        for (int i = 0; i < lo.length; i++) {
            lo[i] = elems.get(i)[0];
            hi[i] = elems.get(i)[1];
            form[i] = (byte) elems.get(i)[2];
            plen[i] = (int) elems.get(i)[3];
        }
        return new NftValues(lo, hi, form, plen, set, format);
    }

    private void skipNewlines(boolean inSet) {
        while (inSet && in.peek().kind() == NftToken.Kind.NEWLINE) {
            in.pos++;
        }
    }

    /** The dash of a range {@code a-b}, not one inside a name such as echo-request. */
    private static int rangeDash(String s) {
        int d = s.indexOf('-');
        if (d <= 0 || d == s.length() - 1) {
            return -1;
        }
        char before = s.charAt(d - 1);
        char after = s.charAt(d + 1);
        return Character.isDigit(before) && Character.isDigit(after) ? d : -1;
    }

    private long ipv4(String s, NftToken t) {
        return parseIpv4(s, t) & 0xffff_ffffL;
    }

    private int parseIpv4(String s, NftToken t) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            throw NftTokens.error(t, "\"" + s + "\" is not an IPv4 address");
        }
        int a = 0;
        for (String part : parts) {
            if (!part.matches("[0-9]{1,3}") || Integer.parseInt(part) > 255) {
                throw NftTokens.error(t, "\"" + s + "\" is not an IPv4 address");
            }
            a = (a << 8) | Integer.parseInt(part);
        }
        return a;
    }

    private long port(String s, NftToken t) {
        return parsePort(s, t);
    }

    private int parsePort(String s, NftToken t) {
        if (!s.matches("[0-9]{1,5}") || Integer.parseInt(s) > 65535) {
            throw NftTokens.error(t, "\"" + s + "\" is not a port number (0-65535)");
        }
        return Integer.parseInt(s);
    }

    private long protocolNumber(String s, NftToken t) {
        Integer v = NftNames.PROTOCOLS.get(s);
        if (v != null) {
            return v;
        }
        if (s.matches("[0-9]{1,3}") && Integer.parseInt(s) <= 255) {
            return Integer.parseInt(s);
        }
        throw NftTokens.error(t, "\"" + s + "\" is not a protocol (a number or " + String.join(", ", NftNames.PROTOCOLS.keySet()) + ")");
    }

    private long icmpType(String s, NftToken t) {
        Integer v = NftNames.ICMP_TYPES.get(s);
        if (v != null) {
            return v;
        }
        if (s.matches("[0-9]{1,3}") && Integer.parseInt(s) <= 255) {
            return Integer.parseInt(s);
        }
        throw NftTokens.error(t, "\"" + s + "\" is not an ICMP type (" + String.join(", ", NftNames.ICMP_TYPES.keySet()) + ")");
    }

    private long mark() {
        NftToken t = in.peek();
        if (t.kind() == NftToken.Kind.WORD) {
            String s = t.text();
            try {
                long v = s.startsWith("0x") ? Long.parseLong(s.substring(2), 16) : Long.parseLong(s);
                if (v >= 0 && v <= 0xffff_ffffL) {
                    in.pos++;
                    return v;
                }
            } catch (NumberFormatException e) {
                // not a number: the error below
            }
        }
        throw in.expected("a mark (a 32-bit number, 0x... in hex)");
    }

    private static String nameOr(Map<String, Integer> names, int v) {
        String n = NftNames.nameOf(names, v);
        return n != null ? n : Integer.toString(v);
    }
}
