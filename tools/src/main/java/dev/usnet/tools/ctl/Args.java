package dev.usnet.tools.ctl;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.wire.MacAddr;
import java.util.List;

/** The words of a request after its verb, read left to right; every misfit is a {@link CtlException} naming the word. */
final class Args {
    private final List<String> words;
    private final String usage;
    private int i;

    Args(List<String> words, int from, String usage) {
        this.words = words;
        this.i = from;
        this.usage = usage;
    }

    boolean more() {
        return i < words.size();
    }

    String peek() {
        return more() ? words.get(i) : null;
    }

    /** The next word, which must be there: {@code what} names it in the error. */
    String next(String what) {
        if (!more()) {
            throw new CtlException("missing " + what + " (usage: " + usage + ")");
        }
        return words.get(i++);
    }

    /** Consumes the next word when it is {@code word}. */
    boolean accept(String word) {
        if (more() && words.get(i).equals(word)) {
            i++;
            return true;
        }
        return false;
    }

    /** Nothing may follow. */
    void end() {
        if (more()) {
            throw new CtlException("unexpected '" + words.get(i) + "' (usage: " + usage + ")");
        }
    }

    /** The words not read yet, joined by spaces; reads them all. */
    String rest() {
        String r = String.join(" ", words.subList(i, words.size()));
        i = words.size();
        return r;
    }

    CtlException unexpected(String word) {
        return new CtlException("unknown word '" + word + "' (usage: " + usage + ")");
    }

    static int ipv4(String s, String what) {
        try {
            return Ipv4Addr.parse(s);
        } catch (RuntimeException e) {
            throw new CtlException(what + " '" + s + "' is not an IPv4 address");
        }
    }

    /** {@code A.B.C.D/LEN} with LEN 0..32 ({@code /32} when left out when {@code defaultHost}). */
    static int[] cidr(String s, String what) {
        int slash = s.indexOf('/');
        int ip = ipv4(slash < 0 ? s : s.substring(0, slash), what);
        int len = 32;
        if (slash >= 0) {
            try {
                len = Integer.parseInt(s.substring(slash + 1));
            } catch (NumberFormatException e) {
                len = -1;
            }
            if (len < 0 || len > 32) {
                throw new CtlException(what + " '" + s + "': prefix length is not 0..32");
            }
        }
        return new int[] {ip, len};
    }

    static Ipv6Addr ipv6(String s, String what) {
        try {
            return Ipv6Addr.parse(s);
        } catch (RuntimeException e) {
            throw new CtlException(what + " '" + s + "' is not an IPv6 address (inet6 address is expected)");
        }
    }

    /** An IPv6 address and prefix length from {@code ADDR[/LEN]} (LEN 0..128, 128 when left out, as ip -6 takes it). */
    record Cidr6(Ipv6Addr addr, int len) {}

    static Cidr6 cidr6(String s, String what) {
        int slash = s.indexOf('/');
        Ipv6Addr a = ipv6(slash < 0 ? s : s.substring(0, slash), what);
        int len = 128;
        if (slash >= 0) {
            String l = s.substring(slash + 1);
            len = l.matches("[0-9]{1,3}") ? Integer.parseInt(l) : -1;
            if (len < 0 || len > 128) {
                throw new CtlException(what + " '" + s + "': prefix length is not 0..128");
            }
        }
        return new Cidr6(a, len);
    }

    static long mac(String s) {
        try {
            return MacAddr.parse(s);
        } catch (RuntimeException e) {
            throw new CtlException("'" + s + "' is not a MAC address (aa:bb:cc:dd:ee:ff)");
        }
    }

    static int integer(String s, String what, long min, long max) {
        long v;
        try {
            v = Long.decode(s);
        } catch (NumberFormatException e) {
            throw new CtlException(what + " '" + s + "' is not an integer (" + min + ".." + max + ")");
        }
        if (v < min || v > max) {
            throw new CtlException(what + " " + v + " is out of range " + min + ".." + max);
        }
        return (int) v;
    }

    static boolean onOff(String s, String what) {
        return switch (s) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new CtlException(what + " must be on or off, not '" + s + "'");
        };
    }
}
