package dev.usnet.core.nftables;

import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfVerdict;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToIntFunction;

/**
 * Reads usnet's subset of the nftables language (docs/topology.md lists it): the nested file form {@code nft -f}
 * reads and the flat commands, into {@link NftCommand}s. Every error names the line and column and what was
 * expected; nft syntax outside the subset is refused as "not supported by usnet" rather than as a syntax error.
 */
final class NftParser {
    private static final Set<String> FAMILIES = Set.of("ip", "ip6", "inet", "arp", "bridge", "netdev");

    private final NftTokens in;
    private final NftRuleParser rules;
    private final List<NftCommand> out = new ArrayList<>();
    /** Where the rules of the table block being read go until its end, or null outside a block. */
    private List<NftCommand> blockRules;

    private NftParser(String text, ToIntFunction<String> ifindex) {
        this.in = new NftTokens(text);
        this.rules = new NftRuleParser(in, ifindex);
    }

    /** Parses {@code text}; throws {@link NftSyntaxException} at the first error. */
    static List<NftCommand> parse(String text, ToIntFunction<String> ifindex) {
        NftParser p = new NftParser(text, ifindex);
        p.file();
        return p.out;
    }

    /** The optional family before a table name: only ip is modelled. */
    private void family() {
        NftToken t = in.peek();
        if (t.kind() == NftToken.Kind.WORD && FAMILIES.contains(t.text())
                && in.toks.get(in.pos + 1).kind() != NftToken.Kind.NEWLINE && !in.toks.get(in.pos + 1).is("{")
                && in.toks.get(in.pos + 1).kind() != NftToken.Kind.END && !in.toks.get(in.pos + 1).is(";")) {
            if (!t.text().equals("ip")) {
                throw NftTokens.unsupported(t, "the " + t.text() + " family (usnet has the ip family)");
            }
            in.pos++;
        }
    }


    // ---- the file and its commands ----

    private void file() {
        while (true) {
            in.skipSeparators();
            NftToken t = in.peek();
            if (t.kind() == NftToken.Kind.END) {
                return;
            }
            command();
            in.endOfStatement();
        }
    }

    private void command() {
        NftToken t = in.peek();
        if (t.kind() != NftToken.Kind.WORD) {
            throw in.expected("a command (table, add, insert, delete, flush)");
        }
        switch (t.text()) {
            case "table" -> {
                in.pos++;
                tableBlock(t);
            }
            case "add", "create" -> {
                in.pos++;
                NftToken what = in.peek();
                if (in.accept("table")) {
                    tableBlock(t);
                } else if (in.accept("chain")) {
                    family();
                    String table = in.name("a table name");
                    String chain = in.name("a chain name");
                    if (in.accept("{")) {
                        chainBody(table, chain, t, false);
                        in.expect("}", "\"}\"");
                    } else {
                        out.add(new NftCommand.AddChain(table, chain, null, null, 0, null, t.line(), t.column()));
                    }
                } else if (in.accept("rule")) {
                    ruleCommand(t, false);
                } else if (what.kind() == NftToken.Kind.WORD && Set.of("set", "map", "element", "flowtable", "counter",
                        "quota", "limit", "ct", "secmark", "synproxy").contains(what.text())) {
                    throw NftTokens.unsupported(what, "add " + what.text());
                } else {
                    throw in.expected("\"table\", \"chain\" or \"rule\"");
                }
            }
            case "insert" -> {
                in.pos++;
                in.expect("rule", "\"rule\"");
                ruleCommand(t, true);
            }
            case "delete", "destroy" -> {
                in.pos++;
                if (in.accept("table")) {
                    family();
                    out.add(new NftCommand.DeleteTable(in.name("a table name"), t.line(), t.column()));
                } else if (in.accept("chain")) {
                    family();
                    String table = in.name("a table name");
                    out.add(new NftCommand.DeleteChain(table, in.name("a chain name"), t.line(), t.column()));
                } else if (in.accept("rule")) {
                    family();
                    String table = in.name("a table name");
                    String chain = in.name("a chain name");
                    in.expect("handle", "\"handle\"");
                    out.add(new NftCommand.DeleteRule(table, chain, in.number("a rule handle"), t.line(), t.column()));
                } else {
                    throw in.expected("\"table\", \"chain\" or \"rule\"");
                }
            }
            case "flush" -> {
                in.pos++;
                if (in.accept("ruleset")) {
                    NftToken f = in.peek();
                    if (f.kind() == NftToken.Kind.WORD && FAMILIES.contains(f.text())) {
                        if (!f.text().equals("ip")) {
                            throw NftTokens.unsupported(f, "the " + f.text() + " family (usnet has the ip family)");
                        }
                        in.pos++;
                    }
                    out.add(new NftCommand.FlushRuleset(t.line(), t.column()));
                } else if (in.accept("table")) {
                    family();
                    out.add(new NftCommand.FlushTable(in.name("a table name"), t.line(), t.column()));
                } else if (in.accept("chain")) {
                    family();
                    String table = in.name("a table name");
                    out.add(new NftCommand.FlushChain(table, in.name("a chain name"), t.line(), t.column()));
                } else {
                    throw in.expected("\"ruleset\", \"table\" or \"chain\"");
                }
            }
            case "list", "replace", "rename", "reset", "monitor", "describe", "define", "include", "get" ->
                    throw NftTokens.unsupported(t, "\"" + t.text() + "\" in a ruleset");
            default -> throw in.expected("a command (table, add, insert, delete, flush)");
        }
    }

    /** {@code table [ip] NAME [{ chain ... }]}: adds the table (if new) and what its block declares. */
    private void tableBlock(NftToken start) {
        family();
        String table = in.name("a table name");
        out.add(new NftCommand.AddTable(table, start.line(), start.column()));
        if (!in.accept("{")) {
            return;
        }
        // nft adds a block's chains before its rules (so a rule may jump to a chain declared below it): the chains
        // and rules of one table block take their handles in that order.
        blockRules = new ArrayList<>();
        while (true) {
            in.skipSeparators();
            NftToken t = in.peek();
            if (in.accept("}")) {
                out.addAll(blockRules);
                blockRules = null;
                return;
            }
            if (t.is("chain")) {
                in.pos++;
                String chain = in.name("a chain name");
                in.expect("{", "\"{\"");
                chainBody(table, chain, t, true);
                in.expect("}", "\"}\"");
                continue;
            }
            if (t.kind() == NftToken.Kind.WORD && Set.of("set", "map", "flowtable", "counter", "quota", "limit", "ct",
                    "flags", "comment", "secmark", "synproxy").contains(t.text())) {
                throw NftTokens.unsupported(t, "\"" + t.text() + "\" in a table");
            }
            throw in.expected("\"chain\" or \"}\"");
        }
    }

    /**
     * The inside of a chain's braces: its declaration ({@code type ... hook ... priority ...; policy ...;}) and, in
     * the nested form, its rules, each ending at a line end or ";".
     */
    private void chainBody(String table, String chain, NftToken start, boolean withRules) {
        NftChain.Type type = null;
        NfHook hook = null;
        int priority = 0;
        Integer policy = null;
        int chainCmd = out.size();
        out.add(null);
        while (true) {
            in.skipSeparators();
            NftToken t = in.peek();
            if (t.is("}")) {
                break;
            }
            if (t.is("type")) {
                in.pos++;
                NftToken tt = in.peek();
                String ty = in.name("\"filter\" or \"nat\"");
                type = switch (ty) {
                    case "filter" -> NftChain.Type.FILTER;
                    case "nat" -> NftChain.Type.NAT;
                    case "route" -> throw NftTokens.unsupported(tt, "chain type route");
                    default -> {
                        in.pos--;
                        throw in.expected("\"filter\" or \"nat\"");
                    }
                };
                in.expect("hook", "\"hook\"");
                NftToken ht = in.peek();
                hook = NfHook.byNftName(ht.text());
                if (hook == null) {
                    if (ht.is("ingress") || ht.is("egress")) {
                        throw NftTokens.unsupported(ht, "hook " + ht.text());
                    }
                    throw in.expected("a hook (prerouting, input, forward, output, postrouting)");
                }
                in.pos++;
                if (type == NftChain.Type.NAT && hook == NfHook.FORWARD) {
                    throw NftTokens.error(ht, "a nat chain cannot hook forward (prerouting, input, output, postrouting)");
                }
                if (in.peek().is("device")) {
                    throw NftTokens.unsupported(in.peek(), "\"device\" in a chain declaration");
                }
                in.expect("priority", "\"priority\"");
                priority = priority(hook);
                in.endOfStatement();
                continue;
            }
            if (t.is("policy")) {
                in.pos++;
                if (in.accept("accept")) {
                    policy = NfVerdict.ACCEPT;
                } else if (in.accept("drop")) {
                    policy = NfVerdict.DROP;
                } else {
                    throw in.expected("\"accept\" or \"drop\"");
                }
                in.endOfStatement();
                continue;
            }
            if (t.kind() == NftToken.Kind.WORD && Set.of("comment", "flags", "devices").contains(t.text())) {
                throw NftTokens.unsupported(t, "\"" + t.text() + "\" in a chain");
            }
            if (!withRules) {
                throw in.expected("\"type\", \"policy\" or \"}\"");
            }
            blockRules.add(rules.rule(table, chain, false, 0, t));
        }
        if (policy != null && type == null) {
            throw NftTokens.error(start, "chain " + chain + ": a policy needs a base chain (type ... hook ... priority ...)");
        }
        out.set(chainCmd, new NftCommand.AddChain(table, chain, type, hook, priority, policy, start.line(),
                start.column()));
    }

    /** {@code priority N} or a standard name, maybe {@code + N} / {@code - N}, valid at {@code hook}. */
    private int priority(NfHook hook) {
        NftToken t = in.peek();
        if (t.kind() == NftToken.Kind.WORD && t.text().matches("-?[0-9]+")) {
            in.pos++;
            return Integer.parseInt(t.text());
        }
        Map<String, Integer> names = Map.of("raw", NfIpPriority.RAW, "mangle", NfIpPriority.MANGLE, "dstnat",
                NfIpPriority.NAT_DST, "filter", NfIpPriority.FILTER, "security", NfIpPriority.SECURITY, "srcnat",
                NfIpPriority.NAT_SRC);
        Integer base = t.kind() == NftToken.Kind.WORD ? names.get(t.text()) : null;
        if (base == null) {
            throw in.expected("a priority (a number, raw, mangle, dstnat, filter, security, srcnat)");
        }
        if (!NftChain.priorityNameValid(t.text(), hook)) {
            throw NftTokens.error(t, "priority " + t.text() + " is not valid at hook " + hook.nftName()
                    + " (dstnat is for prerouting, srcnat for postrouting)");
        }
        in.pos++;
        if (in.peek().is("+") || in.peek().is("-")) {
            boolean minus = in.next().is("-");
            int off = (int) in.number("a priority offset");
            return minus ? base - off : base + off;
        }
        return base;
    }

    /** {@code add|insert rule [ip] T C [position N] RULE}. */
    private void ruleCommand(NftToken start, boolean insert) {
        family();
        String table = in.name("a table name");
        String chain = in.name("a chain name");
        long position = 0;
        if (in.accept("position") || in.accept("handle")) {
            position = in.number("a rule handle");
        } else if (in.peek().is("index")) {
            throw NftTokens.unsupported(in.peek(), "\"index\"");
        }
        out.add(rules.rule(table, chain, insert, position, start));
    }
}
