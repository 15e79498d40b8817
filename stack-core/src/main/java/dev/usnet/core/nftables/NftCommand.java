package dev.usnet.core.nftables;

import dev.usnet.core.netfilter.NfHook;

/**
 * One change a ruleset text asks for (an nft command, or what a block of the nested file form declares). Parsed
 * completely before any is applied; {@code line} and {@code column} say where it was written, for the errors of
 * applying it (no such table, a handle that is not there).
 */
sealed interface NftCommand {
    int line();

    int column();

    record AddTable(String table, int line, int column) implements NftCommand {}

    /** A chain: base when {@code hook} is given; {@code policy} null when not given. */
    record AddChain(String table, String chain, NftChain.Type type, NfHook hook, int priority, Integer policy,
                    int line, int column) implements NftCommand {}

    /**
     * A rule appended ({@code insert} false: after {@code position}, else at the end) or inserted (before
     * {@code position}, else at the start); {@code sets} anonymous sets that take handles before the rule.
     */
    record AddRule(String table, String chain, NftRule rule, boolean insert, long position, int sets, int line,
                   int column) implements NftCommand {}

    record DeleteRule(String table, String chain, long handle, int line, int column) implements NftCommand {}

    record DeleteChain(String table, String chain, int line, int column) implements NftCommand {}

    record DeleteTable(String table, int line, int column) implements NftCommand {}

    record FlushChain(String table, String chain, int line, int column) implements NftCommand {}

    record FlushTable(String table, int line, int column) implements NftCommand {}

    record FlushRuleset(int line, int column) implements NftCommand {}
}
