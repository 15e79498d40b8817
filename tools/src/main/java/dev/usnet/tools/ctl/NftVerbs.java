package dev.usnet.tools.ctl;

import dev.usnet.core.nftables.NftSyntaxException;
import dev.usnet.core.nftables.Nftables;
import dev.usnet.core.stack.NetStack;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code nft [-a] list ruleset | list table [ip] T | -f FILE | COMMAND}: a namespace's nftables ruleset as nft
 * shows and changes it. A command is any of the subset's flat commands ({@code add table|chain|rule}, {@code insert
 * rule}, {@code delete rule ip T C handle N}, {@code delete table|chain}, {@code flush chain|table|ruleset}); its
 * words are joined by spaces and read as one line, so an error's column counts in that line. {@code -f FILE}
 * applies a ruleset file (the daemon reads FILE: give a path it can open) as one transaction.
 */
final class NftVerbs {
    private NftVerbs() {}

    static final String USAGE = "nft [-a] list ruleset | nft [-a] list table [ip] T | nft -f FILE"
            + " | nft add|insert rule [ip] T C RULE | nft delete rule [ip] T C handle N | nft add table|chain ..."
            + " | nft flush ruleset|table|chain ...";

    static Reply run(ControlPlane.Call c) {
        Args a = c.args(USAGE);
        boolean handles = a.accept("-a") | a.accept("--handle");
        if (!a.more()) {
            throw new CtlException("nft: missing a command (usage: " + USAGE + ")");
        }
        NetStack s = c.stack();
        if (a.accept("list")) {
            String what = a.next("'ruleset' or 'table'");
            return switch (what) {
                case "ruleset" -> {
                    a.end();
                    String text = c.cp().onLoop(s, () -> Nftables.of(s.ipv4()).listRuleset(handles));
                    yield Reply.of(Map.of("ruleset", text), strip(text));
                }
                case "table" -> {
                    if ("ip".equals(a.peek()) && a.more()) {
                        a.next("family");
                    }
                    String table = a.next("table name");
                    a.end();
                    String text = c.cp().onLoop(s, () -> Nftables.of(s.ipv4()).listTable(table, handles));
                    if (text == null) {
                        throw new CtlException("nft: no table ip " + table + " in namespace " + s.name());
                    }
                    yield Reply.of(Map.of("table", text), strip(text));
                }
                default -> throw a.unexpected(what);
            };
        }
        String text;
        String source;
        if (a.accept("-f")) {
            String file = a.next("ruleset file");
            a.end();
            try {
                text = Files.readString(Path.of(file));
            } catch (IOException e) {
                throw new CtlException("nft -f: cannot read " + file + ": " + e.getMessage());
            }
            source = file;
        } else {
            text = a.rest();
            source = null;
        }
        String ruleset = text;
        try {
            c.cp().change(s, () -> {
                Nftables.of(s.ipv4()).apply(ruleset);
                return null;
            });
        } catch (CtlException e) {
            if (e.getCause() instanceof NftSyntaxException se) {
                throw new CtlException(describe(se, ruleset, source), se);
            }
            throw e;
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("done", source != null ? "applied " + source : text);
        return Reply.of(m, "");
    }

    /** The error as nft shows one: where, what, and the line with a caret under the place. */
    static String describe(NftSyntaxException e, String text, String file) {
        String[] lines = text.split("\n", -1);
        StringBuilder sb = new StringBuilder("nft: ");
        if (file != null) {
            sb.append(file).append(": ");
        }
        sb.append(e.getMessage());
        if (e.line() >= 1 && e.line() <= lines.length) {
            String l = lines[e.line() - 1];
            sb.append('\n').append(l).append('\n');
            for (int i = 1; i < e.column() && i <= l.length(); i++) {
                sb.append(l.charAt(i - 1) == '\t' ? '\t' : ' ');
            }
            sb.append('^');
        }
        return sb.toString();
    }

    private static String strip(String listing) {
        return listing.endsWith("\n") ? listing.substring(0, listing.length() - 1) : listing;
    }
}
