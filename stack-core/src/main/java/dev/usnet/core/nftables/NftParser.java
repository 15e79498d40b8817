package dev.usnet.core.nftables;

import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.wire.IcmpPacket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.function.ToIntFunction;

/**
 * Reads usnet's subset of the nftables language (docs/topology.md lists it): the nested file form {@code nft -f}
 * reads and the flat commands, into {@link NftCommand}s. Every error names the line and column and what was
 * expected; nft syntax outside the subset is refused as "not supported by usnet" rather than as a syntax error.
 */
final class NftParser {
    /** nft keywords that start a statement or expression usnet does not model. */
    private static final Set<String> UNSUPPORTED_STATEMENTS = Set.of("log", "limit", "quota", "notrack", "redirect",
            "queue", "dup", "fwd", "tproxy", "synproxy", "set", "update", "numgen", "jhash", "symhash", "ip6", "inet",
            "ether", "vlan", "arp", "sctp", "dccp", "ah", "esp", "comp", "icmpv6", "igmp", "th", "fib", "rt", "socket",
            "osf", "exthdr", "ipsec", "continue", "flow", "add", "delete", "reset", "secmark", "last", "xt", "hbh",
            "frag", "dst", "mh", "srh", "rt0", "rt2", "rt4", "udplite", "gre", "geneve", "vxlan", "gretap", "cgroupv2",
            "tunnel", "meter", "ct", "icmpx", "mark", "dscp", "comment");
    private static final Set<String> FAMILIES = Set.of("ip", "ip6", "inet", "arp", "bridge", "netdev");
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

    private final List<NftToken> toks;
    /** The ifindex of a device name (iif, oif), or -1 when there is no such device. */
    private final ToIntFunction<String> ifindex;
    private int pos;
    private final List<NftCommand> out = new ArrayList<>();
    /** Where the rule being read starts, for the "after ..." of its errors. */
    private int ruleStart = -1;
    /** Where the rules of the table block being read go until its end, or null outside a block. */
    private List<NftCommand> blockRules;

    private NftParser(String text, ToIntFunction<String> ifindex) {
        this.toks = NftLexer.tokens(text);
        this.ifindex = ifindex;
    }

    /** Parses {@code text}; throws {@link NftSyntaxException} at the first error. */
    static List<NftCommand> parse(String text, ToIntFunction<String> ifindex) {
        NftParser p = new NftParser(text, ifindex);
        p.file();
        return p.out;
    }

    // ---- tokens ----

    private NftToken peek() {
        return toks.get(pos);
    }

    private NftToken next() {
        return toks.get(pos++);
    }

    private boolean accept(String s) {
        if (peek().is(s)) {
            pos++;
            return true;
        }
        return false;
    }

    private boolean atEndOfStatement() {
        NftToken t = peek();
        return t.kind() == NftToken.Kind.NEWLINE || t.kind() == NftToken.Kind.END || t.is(";") || t.is("}");
    }

    private void skipSeparators() {
        while (peek().kind() == NftToken.Kind.NEWLINE || peek().is(";")) {
            pos++;
        }
    }

    private NftSyntaxException expected(String what) {
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

    private static NftSyntaxException unsupported(NftToken t, String what) {
        return new NftSyntaxException(t.line(), t.column(), what + " is not supported by usnet");
    }

    private static NftSyntaxException error(NftToken t, String msg) {
        return new NftSyntaxException(t.line(), t.column(), msg);
    }

    private void expect(String s, String what) {
        if (!accept(s)) {
            throw expected(what);
        }
    }

    private String name(String what) {
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

    /** The optional family before a table name: only ip is modelled. */
    private void family() {
        NftToken t = peek();
        if (t.kind() == NftToken.Kind.WORD && FAMILIES.contains(t.text())
                && toks.get(pos + 1).kind() != NftToken.Kind.NEWLINE && !toks.get(pos + 1).is("{")
                && toks.get(pos + 1).kind() != NftToken.Kind.END && !toks.get(pos + 1).is(";")) {
            if (!t.text().equals("ip")) {
                throw unsupported(t, "the " + t.text() + " family (usnet has the ip family)");
            }
            pos++;
        }
    }

    private void endOfStatement() {
        if (!atEndOfStatement()) {
            throw expected("end of line or \";\"");
        }
    }

    // ---- the file and its commands ----

    private void file() {
        while (true) {
            skipSeparators();
            NftToken t = peek();
            if (t.kind() == NftToken.Kind.END) {
                return;
            }
            command();
            endOfStatement();
        }
    }

    private void command() {
        NftToken t = peek();
        if (t.kind() != NftToken.Kind.WORD) {
            throw expected("a command (table, add, insert, delete, flush)");
        }
        switch (t.text()) {
            case "table" -> {
                pos++;
                tableBlock(t);
            }
            case "add", "create" -> {
                pos++;
                NftToken what = peek();
                if (accept("table")) {
                    tableBlock(t);
                } else if (accept("chain")) {
                    family();
                    String table = name("a table name");
                    String chain = name("a chain name");
                    if (accept("{")) {
                        chainBody(table, chain, t, false);
                        expect("}", "\"}\"");
                    } else {
                        out.add(new NftCommand.AddChain(table, chain, null, null, 0, null, t.line(), t.column()));
                    }
                } else if (accept("rule")) {
                    ruleCommand(t, false);
                } else if (what.kind() == NftToken.Kind.WORD && Set.of("set", "map", "element", "flowtable", "counter",
                        "quota", "limit", "ct", "secmark", "synproxy").contains(what.text())) {
                    throw unsupported(what, "add " + what.text());
                } else {
                    throw expected("\"table\", \"chain\" or \"rule\"");
                }
            }
            case "insert" -> {
                pos++;
                expect("rule", "\"rule\"");
                ruleCommand(t, true);
            }
            case "delete", "destroy" -> {
                pos++;
                if (accept("table")) {
                    family();
                    out.add(new NftCommand.DeleteTable(name("a table name"), t.line(), t.column()));
                } else if (accept("chain")) {
                    family();
                    String table = name("a table name");
                    out.add(new NftCommand.DeleteChain(table, name("a chain name"), t.line(), t.column()));
                } else if (accept("rule")) {
                    family();
                    String table = name("a table name");
                    String chain = name("a chain name");
                    expect("handle", "\"handle\"");
                    out.add(new NftCommand.DeleteRule(table, chain, number("a rule handle"), t.line(), t.column()));
                } else {
                    throw expected("\"table\", \"chain\" or \"rule\"");
                }
            }
            case "flush" -> {
                pos++;
                if (accept("ruleset")) {
                    NftToken f = peek();
                    if (f.kind() == NftToken.Kind.WORD && FAMILIES.contains(f.text())) {
                        if (!f.text().equals("ip")) {
                            throw unsupported(f, "the " + f.text() + " family (usnet has the ip family)");
                        }
                        pos++;
                    }
                    out.add(new NftCommand.FlushRuleset(t.line(), t.column()));
                } else if (accept("table")) {
                    family();
                    out.add(new NftCommand.FlushTable(name("a table name"), t.line(), t.column()));
                } else if (accept("chain")) {
                    family();
                    String table = name("a table name");
                    out.add(new NftCommand.FlushChain(table, name("a chain name"), t.line(), t.column()));
                } else {
                    throw expected("\"ruleset\", \"table\" or \"chain\"");
                }
            }
            case "list", "replace", "rename", "reset", "monitor", "describe", "define", "include", "get" ->
                    throw unsupported(t, "\"" + t.text() + "\" in a ruleset");
            default -> throw expected("a command (table, add, insert, delete, flush)");
        }
    }

    private long number(String what) {
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

    /** {@code table [ip] NAME [{ chain ... }]}: adds the table (if new) and what its block declares. */
    private void tableBlock(NftToken start) {
        family();
        String table = name("a table name");
        out.add(new NftCommand.AddTable(table, start.line(), start.column()));
        if (!accept("{")) {
            return;
        }
        // nft adds a block's chains before its rules (so a rule may jump to a chain declared below it): the chains
        // and rules of one table block take their handles in that order.
        blockRules = new ArrayList<>();
        while (true) {
            skipSeparators();
            NftToken t = peek();
            if (accept("}")) {
                out.addAll(blockRules);
                blockRules = null;
                return;
            }
            if (t.is("chain")) {
                pos++;
                String chain = name("a chain name");
                expect("{", "\"{\"");
                chainBody(table, chain, t, true);
                expect("}", "\"}\"");
                continue;
            }
            if (t.kind() == NftToken.Kind.WORD && Set.of("set", "map", "flowtable", "counter", "quota", "limit", "ct",
                    "flags", "comment", "secmark", "synproxy").contains(t.text())) {
                throw unsupported(t, "\"" + t.text() + "\" in a table");
            }
            throw expected("\"chain\" or \"}\"");
        }
    }

    /**
     * The inside of a chain's braces: its declaration ({@code type ... hook ... priority ...; policy ...;}) and, in
     * the nested form, its rules, each ending at a line end or ";".
     */
    private void chainBody(String table, String chain, NftToken start, boolean rules) {
        NftChain.Type type = null;
        NfHook hook = null;
        int priority = 0;
        Integer policy = null;
        int chainCmd = out.size();
        out.add(null);
        while (true) {
            skipSeparators();
            NftToken t = peek();
            if (t.is("}")) {
                break;
            }
            if (t.is("type")) {
                pos++;
                NftToken tt = peek();
                String ty = name("\"filter\" or \"nat\"");
                type = switch (ty) {
                    case "filter" -> NftChain.Type.FILTER;
                    case "nat" -> NftChain.Type.NAT;
                    case "route" -> throw unsupported(tt, "chain type route");
                    default -> {
                        pos--;
                        throw expected("\"filter\" or \"nat\"");
                    }
                };
                expect("hook", "\"hook\"");
                NftToken ht = peek();
                hook = NfHook.byNftName(ht.text());
                if (hook == null) {
                    if (ht.is("ingress") || ht.is("egress")) {
                        throw unsupported(ht, "hook " + ht.text());
                    }
                    throw expected("a hook (prerouting, input, forward, output, postrouting)");
                }
                pos++;
                if (type == NftChain.Type.NAT && hook == NfHook.FORWARD) {
                    throw error(ht, "a nat chain cannot hook forward (prerouting, input, output, postrouting)");
                }
                if (peek().is("device")) {
                    throw unsupported(peek(), "\"device\" in a chain declaration");
                }
                expect("priority", "\"priority\"");
                priority = priority(hook);
                endOfStatement();
                continue;
            }
            if (t.is("policy")) {
                pos++;
                if (accept("accept")) {
                    policy = NfVerdict.ACCEPT;
                } else if (accept("drop")) {
                    policy = NfVerdict.DROP;
                } else {
                    throw expected("\"accept\" or \"drop\"");
                }
                endOfStatement();
                continue;
            }
            if (t.kind() == NftToken.Kind.WORD && Set.of("comment", "flags", "devices").contains(t.text())) {
                throw unsupported(t, "\"" + t.text() + "\" in a chain");
            }
            if (!rules) {
                throw expected("\"type\", \"policy\" or \"}\"");
            }
            rule(table, chain, false, 0, t);
        }
        if (policy != null && type == null) {
            throw error(start, "chain " + chain + ": a policy needs a base chain (type ... hook ... priority ...)");
        }
        out.set(chainCmd, new NftCommand.AddChain(table, chain, type, hook, priority, policy, start.line(),
                start.column()));
    }

    /** {@code priority N} or a standard name, maybe {@code + N} / {@code - N}, valid at {@code hook}. */
    private int priority(NfHook hook) {
        NftToken t = peek();
        if (t.kind() == NftToken.Kind.WORD && t.text().matches("-?[0-9]+")) {
            pos++;
            return Integer.parseInt(t.text());
        }
        Map<String, Integer> names = Map.of("raw", NfIpPriority.RAW, "mangle", NfIpPriority.MANGLE, "dstnat",
                NfIpPriority.NAT_DST, "filter", NfIpPriority.FILTER, "security", NfIpPriority.SECURITY, "srcnat",
                NfIpPriority.NAT_SRC);
        Integer base = t.kind() == NftToken.Kind.WORD ? names.get(t.text()) : null;
        if (base == null) {
            throw expected("a priority (a number, raw, mangle, dstnat, filter, security, srcnat)");
        }
        if (!NftChain.priorityNameValid(t.text(), hook)) {
            throw error(t, "priority " + t.text() + " is not valid at hook " + hook.nftName()
                    + " (dstnat is for prerouting, srcnat for postrouting)");
        }
        pos++;
        if (peek().is("+") || peek().is("-")) {
            boolean minus = next().is("-");
            int off = (int) number("a priority offset");
            return minus ? base - off : base + off;
        }
        return base;
    }

    /** {@code add|insert rule [ip] T C [position N] RULE}. */
    private void ruleCommand(NftToken start, boolean insert) {
        family();
        String table = name("a table name");
        String chain = name("a chain name");
        long position = 0;
        if (accept("position") || accept("handle")) {
            position = number("a rule handle");
        } else if (peek().is("index")) {
            throw unsupported(peek(), "\"index\"");
        }
        rule(table, chain, insert, position, start);
    }

    // ---- rules ----

    /** State of the rule being read: the transport protocol known so far and the expression that gave it. */
    private int l4;
    private int l4Dependency;
    private boolean terminal;
    private int sets;

    private void rule(String table, String chain, boolean insert, long position, NftToken start) {
        ruleStart = pos;
        l4 = -1;
        l4Dependency = -1;
        terminal = false;
        sets = 0;
        List<NftExpr> exprs = new ArrayList<>();
        List<Boolean> hidden = new ArrayList<>();
        if (atEndOfStatement()) {
            throw expected("a rule");
        }
        while (!atEndOfStatement()) {
            if (terminal) {
                if (peek().is("comment")) {
                    throw unsupported(peek(), "a rule's comment");
                }
                throw expected("end of rule after a verdict");
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
        (blockRules != null ? blockRules : out).add(new NftCommand.AddRule(table, chain,
                new NftRule(exprs.toArray(new NftExpr[0]), h), insert, position, sets, start.line(), start.column()));
        ruleStart = -1;
    }

    /** Records that the rule now reads protocol {@code proto}'s header, refusing a conflict as nft does. */
    private void protocol(int proto, NftToken at) {
        if (l4 >= 0 && l4 != proto) {
            throw error(at, "conflicting protocols specified: " + NftNames.nameOf(NftNames.PROTOCOLS, l4) + " vs. "
                    + NftNames.nameOf(NftNames.PROTOCOLS, proto));
        }
        l4 = proto;
    }

    private NftExpr expr() {
        NftToken t = peek();
        if (t.kind() != NftToken.Kind.WORD) {
            throw expected("a match or statement");
        }
        String w = t.text();
        switch (w) {
            case "iifname", "oifname" -> {
                pos++;
                return ifname(w.equals("oifname"));
            }
            case "iif", "oif" -> {
                pos++;
                return ifindexMatch(w.equals("oif"));
            }
            case "ip" -> {
                pos++;
                return ip();
            }
            case "meta" -> {
                pos++;
                return meta();
            }
            case "tcp", "udp" -> {
                pos++;
                return transport(w.equals("tcp") ? 6 : 17, t);
            }
            case "icmp" -> {
                pos++;
                NftToken f = peek();
                if (!accept("type")) {
                    if (f.kind() == NftToken.Kind.WORD && Set.of("code", "id", "sequence", "mtu", "gateway", "checksum")
                            .contains(f.text())) {
                        throw unsupported(f, "icmp " + f.text());
                    }
                    throw expected("\"type\"");
                }
                protocol(1, t);
                boolean neg = op();
                return new NftPayloadExpr(NftPayloadExpr.Field.ICMP_TYPE, neg,
                        values(this::icmpType, v -> nameOr(NftNames.ICMP_TYPES, v), false, "an ICMP type"));
            }
            case "ct" -> {
                pos++;
                return ct();
            }
            case "counter" -> {
                pos++;
                NftCounterExpr c = new NftCounterExpr();
                if (accept("packets")) {
                    long pk = number("a packet count");
                    expect("bytes", "\"bytes\"");
                    c.preset(pk, number("a byte count"));
                }
                return c;
            }
            case "accept", "drop", "return" -> {
                pos++;
                terminal = true;
                return new NftVerdictExpr(w.equals("accept") ? NftVerdictExpr.Kind.ACCEPT
                        : w.equals("drop") ? NftVerdictExpr.Kind.DROP : NftVerdictExpr.Kind.RETURN, null, t.line(),
                        t.column());
            }
            case "jump", "goto" -> {
                pos++;
                NftToken n = peek();
                String target = name("a chain name");
                terminal = true;
                return new NftVerdictExpr(w.equals("jump") ? NftVerdictExpr.Kind.JUMP : NftVerdictExpr.Kind.GOTO, target,
                        n.line(), n.column());
            }
            case "reject" -> {
                pos++;
                terminal = true;
                return reject();
            }
            case "snat", "dnat" -> {
                pos++;
                terminal = true;
                return nat(w.equals("snat") ? NftNatExpr.Kind.SNAT : NftNatExpr.Kind.DNAT);
            }
            case "masquerade" -> {
                pos++;
                terminal = true;
                return nat(NftNatExpr.Kind.MASQUERADE);
            }
            default -> {
                if (UNSUPPORTED_STATEMENTS.contains(w)) {
                    throw unsupported(t, "\"" + w + "\"");
                }
                throw expected("a match or statement (iifname, oifname, iif, oif, ip, meta, tcp, udp, icmp, ct,"
                        + " counter, accept, drop, reject, jump, goto, return, snat, dnat, masquerade)");
            }
        }
    }

    /** An optional {@code ==} or {@code !=}; true for {@code !=}. */
    private boolean op() {
        if (accept("!=")) {
            return true;
        }
        accept("==");
        return false;
    }

    private NftExpr ifname(boolean outDev) {
        boolean neg = op();
        NftToken t = peek();
        if (t.is("{")) {
            throw unsupported(t, "a set of interface names");
        }
        String n = name("an interface name");
        return NftMetaExpr.ifname(outDev, neg, n);
    }

    private NftExpr ifindexMatch(boolean outDev) {
        boolean neg = op();
        NftToken t = peek();
        String n = name("an interface name");
        int idx = ifindex.applyAsInt(n);
        if (idx < 0) {
            throw error(t, "interface \"" + n + "\" does not exist (iif and oif take a device that exists; iifname"
                    + " and oifname take any name)");
        }
        return NftMetaExpr.ifindex(outDev, neg, n, idx);
    }

    private NftExpr ip() {
        NftToken f = peek();
        if (accept("saddr") || accept("daddr")) {
            boolean neg = op();
            return new NftPayloadExpr(f.is("saddr") ? NftPayloadExpr.Field.IP_SADDR : NftPayloadExpr.Field.IP_DADDR,
                    neg, values(this::ipv4, NftNames::ipv4, true, "an IPv4 address"));
        }
        if (accept("protocol")) {
            boolean neg = op();
            NftToken v = peek();
            NftValues vs = values(this::protocolNumber, x -> nameOr(NftNames.PROTOCOLS, x), false, "a protocol");
            if (!neg && vs.isSingle()) {
                protocol(vs.first(), v);
            }
            return new NftPayloadExpr(NftPayloadExpr.Field.IP_PROTOCOL, neg, vs);
        }
        if (f.kind() == NftToken.Kind.WORD && IP_FIELDS_UNSUPPORTED.contains(f.text())) {
            throw unsupported(f, "ip " + f.text());
        }
        throw expected("\"saddr\", \"daddr\" or \"protocol\"");
    }

    private NftExpr meta() {
        NftToken f = peek();
        if (accept("mark")) {
            if (accept("set")) {
                return new NftMarkSetExpr(false, (int) mark());
            }
            boolean neg = op();
            return NftMetaExpr.mark(neg, (int) mark());
        }
        if (accept("l4proto")) {
            boolean neg = op();
            NftToken v = peek();
            NftValues vs = values(this::protocolNumber, x -> nameOr(NftNames.PROTOCOLS, x), false, "a protocol");
            if (!neg && vs.isSingle()) {
                protocol(vs.first(), v);
            }
            return NftMetaExpr.l4proto(neg, vs);
        }
        if (accept("iifname") || accept("oifname")) {
            return ifname(toks.get(pos - 1).is("oifname"));
        }
        if (accept("iif") || accept("oif")) {
            return ifindexMatch(toks.get(pos - 1).is("oif"));
        }
        if (f.kind() == NftToken.Kind.WORD && META_KEYS_UNSUPPORTED.contains(f.text())) {
            throw unsupported(f, "meta " + f.text());
        }
        throw expected("\"mark\", \"l4proto\", \"iifname\", \"oifname\", \"iif\" or \"oif\"");
    }

    private NftExpr transport(int proto, NftToken start) {
        NftToken f = peek();
        String p = proto == 6 ? "tcp" : "udp";
        if (accept("sport") || accept("dport")) {
            protocol(proto, start);
            boolean neg = op();
            boolean src = f.is("sport");
            NftPayloadExpr.Field field = proto == 6 ? (src ? NftPayloadExpr.Field.TCP_SPORT : NftPayloadExpr.Field.TCP_DPORT)
                    : (src ? NftPayloadExpr.Field.UDP_SPORT : NftPayloadExpr.Field.UDP_DPORT);
            return new NftPayloadExpr(field, neg, values(this::port, Integer::toString, false, "a port"));
        }
        if (proto == 6 && accept("flags")) {
            protocol(proto, start);
            NftPayloadExpr.FlagsOp opKind = NftPayloadExpr.FlagsOp.ANY;
            boolean neg = false;
            if (accept("==")) {
                opKind = NftPayloadExpr.FlagsOp.EXACT;
            } else if (accept("!=")) {
                opKind = NftPayloadExpr.FlagsOp.EXACT;
                neg = true;
            }
            if (peek().is("{") || peek().is("&")) {
                throw unsupported(peek(), "this form of tcp flags");
            }
            int flags = bitNames(NftNames.TCP_FLAGS, "a TCP flag (fin, syn, rst, psh, ack, urg, ecn, cwr)");
            if (accept("/")) {
                if (opKind != NftPayloadExpr.FlagsOp.ANY) {
                    throw error(toks.get(pos - 1), "tcp flags with a mask compares under it: no == or !=");
                }
                int mask = bitNames(NftNames.TCP_FLAGS, "a TCP flag (fin, syn, rst, psh, ack, urg, ecn, cwr)");
                return NftPayloadExpr.tcpFlags(NftPayloadExpr.FlagsOp.MASKED, false, flags, mask);
            }
            return NftPayloadExpr.tcpFlags(opKind, neg, flags, 0);
        }
        if (f.kind() == NftToken.Kind.WORD && (TCP_FIELDS_UNSUPPORTED.contains(f.text())
                || (proto == 17 && Set.of("length", "checksum").contains(f.text())))) {
            throw unsupported(f, p + " " + f.text());
        }
        throw expected(proto == 6 ? "\"sport\", \"dport\" or \"flags\"" : "\"sport\" or \"dport\"");
    }

    private NftExpr ct() {
        NftToken f = peek();
        if (accept("state")) {
            boolean neg = op();
            int mask = bitNames(NftNames.CT_STATES, "\"new\", \"established\", \"related\", \"invalid\" or \"untracked\"");
            return new NftCtExpr(NftCtExpr.Key.STATE, neg, mask, bitSet);
        }
        if (accept("status")) {
            boolean neg = op();
            int mask = bitNames(NftNames.CT_STATUS, "a ct status (expected, seen-reply, assured, confirmed, snat, dnat, dying)");
            return new NftCtExpr(NftCtExpr.Key.STATUS, neg, mask, bitSet);
        }
        if (accept("mark")) {
            if (accept("set")) {
                return new NftMarkSetExpr(true, (int) mark());
            }
            boolean neg = op();
            return new NftCtExpr(NftCtExpr.Key.MARK, neg, (int) mark(), false);
        }
        if (f.kind() == NftToken.Kind.WORD && CT_KEYS_UNSUPPORTED.contains(f.text())) {
            throw unsupported(f, "ct " + f.text());
        }
        throw expected("\"state\", \"status\" or \"mark\"");
    }

    private NftExpr reject() {
        if (!accept("with")) {
            return new NftRejectExpr(IcmpPacket.CODE_PORT_UNREACH);
        }
        NftToken k = peek();
        if (accept("tcp")) {
            expect("reset", "\"reset\"");
            if (l4 >= 0 && l4 != 6) {
                throw error(k, "reject with tcp reset needs a tcp rule, this one matches "
                        + NftNames.nameOf(NftNames.PROTOCOLS, l4));
            }
            return new NftRejectExpr(NftRejectExpr.TCP_RESET);
        }
        if (accept("icmp")) {
            accept("type");
            NftToken c = peek();
            Integer code = c.kind() == NftToken.Kind.WORD ? NftNames.ICMP_REJECT_CODES.get(c.text()) : null;
            if (code == null) {
                throw expected("an ICMP code (" + String.join(", ", NftNames.ICMP_REJECT_CODES.keySet()) + ")");
            }
            pos++;
            return new NftRejectExpr(code);
        }
        if (k.is("icmpx") || k.is("icmpv6")) {
            throw unsupported(k, "reject with " + k.text());
        }
        throw expected("\"icmp\" or \"tcp reset\"");
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
            accept("ip");
            expect("to", "\"to\"");
        }
        if (kind == NftNatExpr.Kind.MASQUERADE ? accept("to") : true) {
            NftToken t = peek();
            if (t.kind() != NftToken.Kind.WORD) {
                throw expected(kind == NftNatExpr.Kind.MASQUERADE ? "\":PORT\" or \":PORT-PORT\""
                        : "an address, ADDRESS:PORT or ADDRESS:PORT-PORT");
            }
            pos++;
            String s = t.text();
            int colon = s.indexOf(':');
            String addr = colon < 0 ? s : s.substring(0, colon);
            String ports = colon < 0 ? null : s.substring(colon + 1);
            if (kind == NftNatExpr.Kind.MASQUERADE) {
                if (!addr.isEmpty() || ports == null) {
                    pos--;
                    throw expected("\":PORT\" or \":PORT-PORT\" (masquerade takes the address of the output device)");
                }
            } else {
                int dash = addr.indexOf('-');
                minAddr = parseIpv4(dash < 0 ? addr : addr.substring(0, dash), t);
                maxAddr = dash < 0 ? minAddr : parseIpv4(addr.substring(dash + 1), t);
                addrRange = dash >= 0;
                if (Integer.compareUnsigned(minAddr, maxAddr) > 0) {
                    throw error(t, "address range " + addr + " runs backwards");
                }
                flags |= NfNatRange.MAP_IPS;
            }
            if (ports != null) {
                // nft asks only that a protocol match name a transport header it knows: ICMP's id maps too.
                if (l4 < 0 || NftNames.nameOf(NftNames.PROTOCOLS, l4) == null) {
                    throw error(t, "transport protocol mapping is only valid after transport protocol match");
                }
                int dash = ports.indexOf('-');
                minPort = parsePort(dash < 0 ? ports : ports.substring(0, dash), t);
                maxPort = dash < 0 ? minPort : parsePort(ports.substring(dash + 1), t);
                if (minPort > maxPort) {
                    throw error(t, "port range " + ports + " runs backwards");
                }
                flags |= NfNatRange.PROTO_SPECIFIED;
            }
        }
        while (peek().kind() == NftToken.Kind.WORD && Set.of("random", "fully-random", "persistent").contains(peek().text())) {
            String f = next().text();
            flags |= switch (f) {
                case "random" -> NfNatRange.PROTO_RANDOM;
                case "fully-random" -> NfNatRange.PROTO_RANDOM_FULLY;
                default -> NfNatRange.PERSISTENT;
            };
            if (!accept(",")) {
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
        boolean braces = accept("{");
        bitSet = braces;
        int mask = 0;
        do {
            NftToken t = peek();
            Integer v = t.kind() == NftToken.Kind.WORD ? names.get(t.text()) : null;
            if (v == null) {
                throw expected(what);
            }
            pos++;
            mask |= v;
        } while (accept(","));
        if (braces) {
            expect("}", "\"}\"");
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
        if (accept("{")) {
            set = true;
            sets++;
        }
        List<long[]> elems = new ArrayList<>();
        do {
            skipNewlines(set);
            if (set && peek().is("}")) {
                break;
            }
            NftToken t = peek();
            if (t.kind() != NftToken.Kind.WORD) {
                throw expected(what);
            }
            pos++;
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
                    throw error(t, "range " + s + " runs backwards");
                }
                form = NftValues.RANGE;
            } else {
                lo = reader.read(s, t);
                hi = lo;
                if (prefixes && peek().is("/") && !peek().spaceBefore()) {
                    pos++;
                    long n = number("a prefix length");
                    if (n > 32) {
                        throw error(toks.get(pos - 1), "prefix length " + n + " is over 32");
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
        } while (set && accept(","));
        if (set) {
            skipNewlines(true);
            expect("}", "\",\" or \"}\"");
            if (elems.isEmpty()) {
                throw error(toks.get(pos - 1), "an empty set");
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
        while (inSet && peek().kind() == NftToken.Kind.NEWLINE) {
            pos++;
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
            throw error(t, "\"" + s + "\" is not an IPv4 address");
        }
        int a = 0;
        for (String part : parts) {
            if (!part.matches("[0-9]{1,3}") || Integer.parseInt(part) > 255) {
                throw error(t, "\"" + s + "\" is not an IPv4 address");
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
            throw error(t, "\"" + s + "\" is not a port number (0-65535)");
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
        throw error(t, "\"" + s + "\" is not a protocol (a number or " + String.join(", ", NftNames.PROTOCOLS.keySet()) + ")");
    }

    private long icmpType(String s, NftToken t) {
        Integer v = NftNames.ICMP_TYPES.get(s);
        if (v != null) {
            return v;
        }
        if (s.matches("[0-9]{1,3}") && Integer.parseInt(s) <= 255) {
            return Integer.parseInt(s);
        }
        throw error(t, "\"" + s + "\" is not an ICMP type (" + String.join(", ", NftNames.ICMP_TYPES.keySet()) + ")");
    }

    private long mark() {
        NftToken t = peek();
        if (t.kind() == NftToken.Kind.WORD) {
            String s = t.text();
            try {
                long v = s.startsWith("0x") ? Long.parseLong(s.substring(2), 16) : Long.parseLong(s);
                if (v >= 0 && v <= 0xffff_ffffL) {
                    pos++;
                    return v;
                }
            } catch (NumberFormatException e) {
                // not a number: the error below
            }
        }
        throw expected("a mark (a 32-bit number, 0x... in hex)");
    }

    private static String nameOr(Map<String, Integer> names, int v) {
        String n = NftNames.nameOf(names, v);
        return n != null ? n : Integer.toString(v);
    }
}
