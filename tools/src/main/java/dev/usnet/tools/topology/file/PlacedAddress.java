package dev.usnet.tools.topology.file;

import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tools.topology.file.TopologySpec.Addr;
import dev.usnet.tools.topology.file.TopologySpec.Addr6;

/**
 * An address of either family where the file put it: on {@code device} ({@code ns/dev}, or a TAP's kernel end), with
 * its prefix length, the text as written and its place. The bits are held in 128 bits, an IPv4 address in the top 32,
 * so that "the first N bits" means the same for both families and one prefix comparison serves both.
 */
public record PlacedAddress(String device, Family family, Ipv6Addr bits, int prefixLen, String text, Where where) {
    /** What the checks say differently per family. */
    public enum Family {
        INET(32, "subnet", "neither reaches the other without a route", "both would answer ARP for it"),
        INET6(128, "IPv6 prefix", "only their link-local addresses reach each other without a route",
                "both would answer neighbour solicitations for it, and duplicate address detection would take it from one");

        /** The address length in bits: a prefix this long is a single host. */
        final int bits;
        /** What a shared prefix is called. */
        final String prefixWord;
        /** What two veth ends sharing no prefix means. */
        final String unsharedMeans;
        /** Why two ends of a segment cannot share an address. */
        final String duplicateMeans;

        Family(int bits, String prefixWord, String unsharedMeans, String duplicateMeans) {
            this.bits = bits;
            this.prefixWord = prefixWord;
            this.unsharedMeans = unsharedMeans;
            this.duplicateMeans = duplicateMeans;
        }
    }

    public static PlacedAddress of(String device, Addr a) {
        return new PlacedAddress(device, Family.INET, new Ipv6Addr((a.ip() & 0xffff_ffffL) << 32, 0), a.prefixLen(),
                a.text(), a.where());
    }

    public static PlacedAddress of(String device, Addr6 a) {
        return new PlacedAddress(device, Family.INET6, a.ip(), a.prefixLen(), a.text(), a.where());
    }

    /** The address without its prefix length, as the family writes it. */
    public String ip() {
        return format(bits);
    }

    /** {@code PREFIX/LEN} of this address's prefix. */
    public String prefixText() {
        return format(bits.prefix(prefixLen)) + "/" + prefixLen;
    }

    /** Whether this is an IPv6 link-local address (fe80::/10); IPv4 has none the checks set apart. */
    public boolean isLinkLocal() {
        return family == Family.INET6 && bits.isLinkLocal();
    }

    /** Whether the two share their first {@code len} bits. */
    public boolean samePrefix(PlacedAddress o, int len) {
        return bits.prefix(len).equals(o.bits.prefix(len));
    }

    /** Whether this address's prefix covers (or equals) {@code inner}'s. */
    public boolean covers(PlacedAddress inner) {
        return prefixLen <= inner.prefixLen && samePrefix(inner, prefixLen);
    }

    private String format(Ipv6Addr b) {
        return family == Family.INET ? Ipv4Addr.format((int) (b.hi() >>> 32)) : b.toString();
    }
}
