package dev.usnet.core.nftables;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.Ipv4;
import dev.usnet.core.netfilter.NfConntrackModule;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.Netfilter;
import dev.usnet.core.netfilter.NfVerdict;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * The nftables ruleset of one namespace (IPv4): its tables, the transactions that change them, the base chains
 * registered at their hooks, and the listing {@code nft list ruleset} prints.
 *
 * <p>A transaction ({@link #apply}) is all or nothing, as nft's batches are: the text is parsed completely, then
 * tried on a copy of the tables (rules are shared, immutable); only when every command and the checks after them
 * succeed is it carried out on the live tables, the rule arrays republished and the hooks brought in line. Changes
 * run on the namespace's thread, as every change to a namespace does.
 */
public final class Nftables {
    private static final Map<Ipv4, Nftables> REGISTRY = new WeakHashMap<>();
    private static final int MAX_NESTING = 8;

    /**
     * Weak: the registry maps each namespace's Ipv4 to its ruleset weakly, which holds only if the ruleset does not
     * hold the namespace; while the namespace lives, its hooks and the registry keep the ruleset.
     */
    private final WeakReference<Ipv4> inetRef;
    private final Map<String, NftTable> tables = new LinkedHashMap<>();
    private long lastTableHandle;
    private final List<NftChain> registered = new ArrayList<>();
    private boolean holdsConntrack;
    private final NftPktInfo[] infos = new NftPktInfo[MAX_NESTING];
    private int depth;

    public Nftables(Ipv4 inet) {
        this.inetRef = new WeakReference<>(inet);
        for (int i = 0; i < infos.length; i++) {
            infos[i] = new NftPktInfo(this);
        }
    }

    /** The ruleset of the namespace {@code inet} belongs to, made empty on first use. */
    public static Nftables of(Ipv4 inet) {
        synchronized (REGISTRY) {
            return REGISTRY.computeIfAbsent(inet, Nftables::new);
        }
    }

    /** The ruleset of {@code inet} if one was made, else null (nothing is made by asking). */
    public static Nftables existing(Ipv4 inet) {
        synchronized (REGISTRY) {
            return REGISTRY.get(inet);
        }
    }

    /** The namespace's IPv4 (there as long as anything can run the ruleset). */
    Ipv4 inet() {
        Ipv4 inet = inetRef.get();
        if (inet == null) {
            throw new IllegalStateException("the namespace of this nftables ruleset is gone");
        }
        return inet;
    }

    Netfilter netfilter() {
        return inet().netfilter();
    }

    NftPktInfo enter() {
        if (depth == MAX_NESTING) {
            throw new IllegalStateException("nftables chains nested " + MAX_NESTING + " deep");
        }
        return infos[depth++];
    }

    void leave() {
        // The buffer is not kept past the walk: the ruleset holds nothing of the namespace (see inetRef).
        infos[--depth].buf = null;
    }

    // ---- transactions ----

    /**
     * Parses {@code text} (the nested file form or flat commands, several lines) and applies it as one
     * transaction. Throws {@link NftSyntaxException} with the line and column of what is wrong; then nothing has
     * changed.
     */
    public void apply(String text) {
        List<NftCommand> cmds = NftParser.parse(text, this::ifindex);
        Map<String, NftTable> trial = new LinkedHashMap<>();
        for (Map.Entry<String, NftTable> e : tables.entrySet()) {
            trial.put(e.getKey(), e.getValue().copy());
        }
        long[] tableHandle = {lastTableHandle};
        for (NftCommand c : cmds) {
            run(c, trial, tableHandle);
        }
        check(trial);
        // The trial succeeded; the same commands on the live tables do the same.
        tableHandle[0] = lastTableHandle;
        for (NftCommand c : cmds) {
            run(c, tables, tableHandle);
        }
        lastTableHandle = tableHandle[0];
        commit();
    }

    private int ifindex(String name) {
        Device d = inet().netns().device(name);
        return d == null ? -1 : d.ifindex();
    }

    private static NftSyntaxException fail(NftCommand c, String msg) {
        return new NftSyntaxException(c.line(), c.column(), msg);
    }

    private static NftTable table(Map<String, NftTable> ts, NftCommand c, String name) {
        NftTable t = ts.get(name);
        if (t == null) {
            throw fail(c, "no table ip " + name);
        }
        return t;
    }

    private static NftChain chain(NftTable t, NftCommand c, String name) {
        NftChain ch = t.chain(name);
        if (ch == null) {
            throw fail(c, "no chain " + name + " in table ip " + t.name);
        }
        return ch;
    }

    private void run(NftCommand cmd, Map<String, NftTable> ts, long[] tableHandle) {
        switch (cmd) {
            case NftCommand.AddTable c -> ts.computeIfAbsent(c.table(), n -> {
                NftTable t = new NftTable(n);
                t.handle = ++tableHandle[0];
                return t;
            });
            case NftCommand.AddChain c -> {
                NftTable t = table(ts, c, c.table());
                NftChain ch = t.chain(c.chain());
                if (c.type() == NftChain.Type.NAT && inet().netfilter().nat() == null) {
                    throw fail(c, "chain " + c.chain() + ": this namespace has no NAT for a nat chain");
                }
                if (ch == null) {
                    ch = new NftChain(c.chain());
                    ch.handle = t.nextHandle();
                    ch.type = c.type();
                    ch.hook = c.hook();
                    ch.priority = c.priority();
                    t.chains.add(ch);
                } else if (c.hook() != null && (ch.hook != c.hook() || ch.type != c.type() || ch.priority != c.priority())) {
                    throw fail(c, "chain " + c.chain() + " exists " + (ch.hook == null ? "as a regular chain"
                            : "with type " + ch.type.name().toLowerCase() + " hook " + ch.hook.nftName() + " priority "
                            + ch.priority) + ": its type, hook and priority cannot change");
                }
                if (c.policy() != null) {
                    ch.policy = c.policy();
                }
            }
            case NftCommand.AddRule c -> {
                NftTable t = table(ts, c, c.table());
                NftChain ch = chain(t, c, c.chain());
                int at;
                if (c.position() != 0) {
                    NftRule ref = ch.rule(c.position());
                    if (ref == null) {
                        throw fail(c, "no rule with handle " + c.position() + " in chain " + c.chain());
                    }
                    at = ch.rules.indexOf(ref) + (c.insert() ? 0 : 1);
                } else {
                    at = c.insert() ? 0 : ch.rules.size();
                }
                for (int i = 0; i < c.sets(); i++) {
                    t.nextHandle();
                }
                c.rule().handle = t.nextHandle();
                for (NftExpr e : c.rule().exprs) {
                    if (e instanceof NftNatExpr n) {
                        if (inet().netfilter().nat() == null) {
                            throw fail(c, n.kind.name().toLowerCase() + " needs NAT, which this namespace does not have");
                        }
                        if (ch.isBase() && ch.type != NftChain.Type.NAT) {
                            throw fail(c, n.kind.name().toLowerCase() + " is only valid in a nat chain (chain "
                                    + ch.name + " is type filter)");
                        }
                        if (ch.isBase() && !natHookValid(n.kind, ch.hook)) {
                            throw fail(c, n.kind.name().toLowerCase() + " is not valid at hook " + ch.hook.nftName()
                                    + " (snat: postrouting, input; dnat: prerouting, output; masquerade: postrouting)");
                        }
                    }
                }
                ch.rules.add(at, c.rule());
            }
            case NftCommand.DeleteRule c -> {
                NftChain ch = chain(table(ts, c, c.table()), c, c.chain());
                NftRule r = ch.rule(c.handle());
                if (r == null) {
                    throw fail(c, "no rule with handle " + c.handle() + " in chain " + c.chain());
                }
                ch.rules.remove(r);
            }
            case NftCommand.DeleteChain c -> {
                NftTable t = table(ts, c, c.table());
                NftChain ch = chain(t, c, c.chain());
                // The chain goes with its rules, unless another chain jumps to it (nf_tables_delchain).
                if (jumpedTo(t, ch)) {
                    throw fail(c, "chain " + c.chain() + " is the target of a jump or goto");
                }
                t.chains.remove(ch);
            }
            case NftCommand.DeleteTable c -> {
                table(ts, c, c.table());
                ts.remove(c.table());
            }
            case NftCommand.FlushChain c -> chain(table(ts, c, c.table()), c, c.chain()).rules.clear();
            case NftCommand.FlushTable c -> {
                for (NftChain ch : table(ts, c, c.table()).chains) {
                    ch.rules.clear();
                }
            }
            case NftCommand.FlushRuleset c -> ts.clear();
        }
    }

    /** Whether a rule of another chain of {@code t} jumps or goes to {@code target}. */
    private static boolean jumpedTo(NftTable t, NftChain target) {
        for (NftChain c : t.chains) {
            if (c == target) {
                continue;
            }
            for (NftRule r : c.rules) {
                for (NftExpr e : r.exprs) {
                    if (e instanceof NftVerdictExpr v && target.name.equals(v.targetName)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** nft_nat_validate and nft_masq_validate: where each kind of NAT may sit. */
    private static boolean natHookValid(NftNatExpr.Kind kind, NfHook hook) {
        return switch (kind) {
            case SNAT -> hook == NfHook.POST_ROUTING || hook == NfHook.LOCAL_IN;
            case DNAT -> hook == NfHook.PRE_ROUTING || hook == NfHook.LOCAL_OUT;
            case MASQUERADE -> hook == NfHook.POST_ROUTING;
        };
    }

    /**
     * What nft checks when a batch commits: every jump and goto names a chain of its table, no chain reaches
     * itself, no jump leads to a base chain. (NAT for nat chains and statements is checked as they are added.)
     */
    private void check(Map<String, NftTable> ts) {
        for (NftTable t : ts.values()) {
            for (NftChain c : t.chains) {
                for (NftRule r : c.rules) {
                    for (NftExpr e : r.exprs) {
                        if (e instanceof NftVerdictExpr v && v.targetName != null) {
                            NftChain target = t.chain(v.targetName);
                            if (target == null) {
                                throw new NftSyntaxException(v.line, v.column, "no chain " + v.targetName
                                        + " in table ip " + t.name + " to " + v.kind.name().toLowerCase());
                            }
                            if (target.isBase()) {
                                throw new NftSyntaxException(v.line, v.column, "chain " + v.targetName
                                        + " is a base chain: jump and goto go to regular chains");
                            }
                        }
                    }
                }
                loopFrom(t, c, c, 0);
            }
        }
    }

    private static void loopFrom(NftTable t, NftChain start, NftChain at, int depth) {
        for (NftRule r : at.rules) {
            for (NftExpr e : r.exprs) {
                if (e instanceof NftVerdictExpr v && v.targetName != null) {
                    NftChain target = t.chain(v.targetName);
                    if (target == start || depth >= NftChainOps.JUMP_STACK) {
                        throw new NftSyntaxException(v.line, v.column, "jump to " + v.targetName + " makes a loop (or"
                                + " nests over " + NftChainOps.JUMP_STACK + " deep) from chain " + start.name);
                    }
                    if (target != null) {
                        loopFrom(t, start, target, depth + 1);
                    }
                }
            }
        }
    }

    /** Links jumps to their chains, publishes the rule arrays, registers and unregisters base chains. */
    private void commit() {
        List<NftChain> bases = new ArrayList<>();
        boolean ct = false;
        for (NftTable t : tables.values()) {
            for (NftChain c : t.chains) {
                for (NftRule r : c.rules) {
                    for (NftExpr e : r.exprs) {
                        if (e instanceof NftVerdictExpr v && v.targetName != null) {
                            v.chain = t.chain(v.targetName);
                        }
                    }
                    ct |= r.usesConntrack();
                }
                c.live = c.rules.toArray(new NftRule[0]);
                if (c.isBase()) {
                    bases.add(c);
                    ct |= c.type == NftChain.Type.NAT;
                }
            }
        }
        Netfilter nf = netfilter();
        for (NftChain c : new ArrayList<>(registered)) {
            if (!bases.contains(c)) {
                if (c.type == NftChain.Type.NAT) {
                    nf.nat().unregisterChain(c.hook, c.ops);
                } else {
                    nf.hooks().unregister(c.hook, c.ops);
                }
                c.ops = null;
                registered.remove(c);
            }
        }
        NfConntrackModule conntrack = nf.conntrack();
        if (ct && !holdsConntrack && conntrack != null) {
            conntrack.get();
            holdsConntrack = true;
        }
        for (NftChain c : bases) {
            if (!registered.contains(c)) {
                c.ops = new NftChainOps(this, c);
                if (c.type == NftChain.Type.NAT) {
                    nf.nat().registerChain(c.hook, c.priority, c.ops);
                } else {
                    nf.hooks().register(c.hook, c.priority, c.ops);
                }
                registered.add(c);
            }
        }
        if (!ct && holdsConntrack) {
            if (conntrack != null) {
                conntrack.put();
            }
            holdsConntrack = false;
        }
    }

    /** Empties the ruleset (its hooks unregistered, its hold on connection tracking given back) and forgets it. */
    public void close() {
        tables.clear();
        commit();
        synchronized (REGISTRY) {
            REGISTRY.remove(inetRef.get(), this);
        }
    }

    // ---- listing ----

    /** {@code nft list ruleset} ({@code handles}: {@code nft -a list ruleset}). */
    public String listRuleset(boolean handles) {
        StringBuilder sb = new StringBuilder();
        for (NftTable t : tables.values()) {
            listTable(sb, t, handles);
        }
        return sb.toString();
    }

    /** {@code nft list table ip NAME}; null when there is no such table. */
    public String listTable(String name, boolean handles) {
        NftTable t = tables.get(name);
        if (t == null) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        listTable(sb, t, handles);
        return sb.toString();
    }

    private static void listTable(StringBuilder sb, NftTable t, boolean handles) {
        sb.append("table ip ").append(t.name).append(" {");
        if (handles) {
            sb.append(" # handle ").append(t.handle);
        }
        sb.append('\n');
        boolean first = true;
        for (NftChain c : t.chains) {
            if (!first) {
                sb.append('\n');
            }
            first = false;
            sb.append("\tchain ").append(c.name).append(" {");
            if (handles) {
                sb.append(" # handle ").append(c.handle);
            }
            sb.append('\n');
            if (c.isBase()) {
                sb.append("\t\ttype ").append(c.type == NftChain.Type.NAT ? "nat" : "filter").append(" hook ")
                        .append(c.hook.nftName()).append(" priority ").append(c.priorityText()).append("; policy ")
                        .append(c.policy == NfVerdict.DROP ? "drop" : "accept").append(";\n");
            }
            for (NftRule r : c.rules) {
                sb.append("\t\t");
                r.print(sb);
                if (handles) {
                    sb.append(" # handle ").append(r.handle);
                }
                sb.append('\n');
            }
            sb.append("\t}\n");
        }
        sb.append("}\n");
    }

    /** The counters of the rule with {@code handle} in chain {@code chain} of table {@code table}: packets, bytes. */
    long[] counter(String table, String chain, long handle) {
        NftTable t = tables.get(table);
        NftChain c = t == null ? null : t.chain(chain);
        NftRule r = c == null ? null : c.rule(handle);
        if (r == null) {
            return null;
        }
        for (NftExpr e : r.exprs) {
            if (e instanceof NftCounterExpr k) {
                return new long[] {k.packets(), k.bytes()};
            }
        }
        return null;
    }

    /** Whether the ruleset holds a use of connection tracking. */
    boolean holdsConntrack() {
        return holdsConntrack;
    }
}
