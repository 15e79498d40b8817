package dev.usnet.core.nftables;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.device.Device;
import dev.usnet.core.netfilter.NfHookState;

/**
 * {@code iifname}, {@code oifname}, {@code iif}, {@code oif}, {@code meta mark} and {@code meta l4proto} matches
 * (nft_meta): what the packet's devices and metadata say.
 */
final class NftMetaExpr extends NftExpr {
    enum Key { IIFNAME, OIFNAME, IIF, OIF, MARK, L4PROTO }

    private final Key key;
    private final boolean negate;
    /** The device name for the name keys (without the trailing * of a wildcard). */
    private final String name;
    private final boolean wildcard;
    /** ifindex for iif/oif (the name is kept for the listing), the mark. */
    private final int value;
    /** The protocols for l4proto. */
    private final NftValues values;

    private NftMetaExpr(Key key, boolean negate, String name, boolean wildcard, int value, NftValues values) {
        this.key = key;
        this.negate = negate;
        this.name = name;
        this.wildcard = wildcard;
        this.value = value;
        this.values = values;
    }

    static NftMetaExpr ifname(boolean out, boolean negate, String name) {
        boolean wild = name.endsWith("*");
        return new NftMetaExpr(out ? Key.OIFNAME : Key.IIFNAME, negate, wild ? name.substring(0, name.length() - 1) : name,
                wild, 0, null);
    }

    static NftMetaExpr ifindex(boolean out, boolean negate, String name, int ifindex) {
        return new NftMetaExpr(out ? Key.OIF : Key.IIF, negate, name, false, ifindex, null);
    }

    static NftMetaExpr mark(boolean negate, int mark) {
        return new NftMetaExpr(Key.MARK, negate, null, false, mark, null);
    }

    static NftMetaExpr l4proto(boolean negate, NftValues protocols) {
        return new NftMetaExpr(Key.L4PROTO, negate, null, false, 0, protocols);
    }

    Key key() {
        return key;
    }

    /** An {@code == one protocol} l4proto match, which may stand as the dependency of a transport match. */
    int dependencyProtocol() {
        return key == Key.L4PROTO && !negate && values.isSingle() ? values.first() : -1;
    }

    @Override
    int eval(Packet p, NfHookState st, NftPktInfo pkt) {
        boolean m = switch (key) {
            case IIFNAME -> nameMatches(st.in());
            case OIFNAME -> nameMatches(st.out());
            case IIF -> st.in() != null && st.in().ifindex() == value;
            case OIF -> st.out() != null && st.out().ifindex() == value;
            case MARK -> p.mark() == value;
            case L4PROTO -> values.contains(pkt.l4proto);
        };
        if (key != Key.MARK && key != Key.L4PROTO) {
            Device d = key == Key.IIFNAME || key == Key.IIF ? st.in() : st.out();
            if (d == null) {
                // No device at this hook: nft's meta load breaks the rule whatever the operator.
                return BREAK;
            }
        }
        return m != negate ? CONTINUE : BREAK;
    }

    private boolean nameMatches(Device d) {
        if (d == null) {
            return false;
        }
        String n = d.name();
        return wildcard ? n.startsWith(name) : n.equals(name);
    }

    @Override
    void print(StringBuilder sb) {
        switch (key) {
            case IIFNAME, OIFNAME -> {
                sb.append(key == Key.IIFNAME ? "iifname " : "oifname ").append(negate ? "!= " : "");
                sb.append('"').append(name).append(wildcard ? "*" : "").append('"');
            }
            case IIF, OIF -> sb.append(key == Key.IIF ? "iif " : "oif ").append(negate ? "!= " : "")
                    .append('"').append(name).append('"');
            case MARK -> sb.append("meta mark ").append(negate ? "!= " : "").append(String.format("0x%08x", value));
            case L4PROTO -> {
                sb.append("meta l4proto ").append(negate ? "!= " : "");
                values.print(sb);
            }
        }
    }
}
