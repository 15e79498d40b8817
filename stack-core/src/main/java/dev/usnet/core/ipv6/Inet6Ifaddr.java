package dev.usnet.core.ipv6;

import dev.usnet.core.device.Device;
import dev.usnet.core.wire.Ipv6Addr;

/**
 * An IPv6 address on a device (inet6_ifaddr): {@code ADDR/LEN scope S dev DEV} with its duplicate address detection
 * state. The address, length and device never change; the state does, owned by {@link Addrconf}.
 */
public final class Inet6Ifaddr {
    /** Where duplicate address detection stands (the IFA_F_TENTATIVE / IFA_F_DADFAILED flags and their absence). */
    public enum DadState {
        /** Being checked: not used as a source, packets to it not accepted (IFA_F_TENTATIVE). */
        TENTATIVE,
        /** Checked, or not checked because the device or the address says not to (IFA_F_NODAD, accept_dad=0). */
        PREFERRED,
        /** Another node answered for it: never used (IFA_F_DADFAILED, still tentative). */
        FAILED
    }

    /** How the address came to be, as {@code ip -6 addr} shows it ({@code proto kernel_ll}, static, SLAAC). */
    public enum Origin { LINK_LOCAL, STATIC, AUTOCONF }

    private final Device dev;
    private final Ipv6Addr address;
    private final int prefixLen;
    private final Origin origin;
    private final boolean nodad;
    volatile DadState state;
    // Neighbour solicitations still to send before the address is preferred.
    int dadProbesLeft;
    // A SLAAC address's lifetimes in seconds (INFINITE_LIFETIME: forever) and when they were last set, in the
    // namespace's nanoseconds; owned by RouterDiscovery, which expires the address.
    long validLft = INFINITE_LIFETIME;
    long preferredLft = INFINITE_LIFETIME;
    long lifetimesSetNanos;
    // Past its preferred lifetime (IFA_F_DEPRECATED): still valid, but a source only when no other will do.
    volatile boolean deprecated;

    /** The lifetime value that means forever (RFC 4861 §4.6.2: all ones). */
    public static final long INFINITE_LIFETIME = 0xffff_ffffL;

    Inet6Ifaddr(Device dev, Ipv6Addr address, int prefixLen, Origin origin, boolean nodad, DadState state) {
        this.dev = dev;
        this.address = address;
        this.prefixLen = prefixLen;
        this.origin = origin;
        this.nodad = nodad;
        this.state = state;
    }

    public Device dev() {
        return dev;
    }

    public Ipv6Addr address() {
        return address;
    }

    public int prefixLen() {
        return prefixLen;
    }

    public Origin origin() {
        return origin;
    }

    /** Whether the address was added without duplicate address detection ({@code nodad}). */
    public boolean nodad() {
        return nodad;
    }

    /** Seconds the address stays valid from {@link #lifetimesSetNanos()}, or {@link #INFINITE_LIFETIME}. */
    public long validLft() {
        return validLft;
    }

    /** Seconds the address stays preferred from {@link #lifetimesSetNanos()}, or {@link #INFINITE_LIFETIME}. */
    public long preferredLft() {
        return preferredLft;
    }

    public long lifetimesSetNanos() {
        return lifetimesSetNanos;
    }

    /** Past its preferred lifetime: still valid, chosen as a source only when no other address fits (RFC 6724). */
    public boolean deprecated() {
        return deprecated;
    }

    public DadState state() {
        return state;
    }

    /** Usable as a source and as a destination: duplicate address detection has passed or was not done. */
    public boolean preferred() {
        return state == DadState.PREFERRED;
    }

    /** {@code ipv6_addr_scope}: link for fe80::/10, host for ::1, global otherwise. */
    public String scope() {
        return address.isLoopback() ? "host" : address.isLinkLocal() ? "link" : "global";
    }

    /** Whether {@code hi}/{@code lo} lies in this address's prefix (on-link). */
    public boolean onLink(long hi, long lo) {
        return address.prefixMatches(prefixLen, hi, lo);
    }

    /** {@code ip -6 addr} syntax. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder().append(address).append('/').append(prefixLen)
                .append(" scope ").append(scope());
        if (origin == Origin.AUTOCONF) {
            sb.append(" dynamic");
        }
        if (deprecated) {
            sb.append(" deprecated");
        }
        if (nodad) {
            sb.append(" nodad");
        }
        switch (state) {
            case TENTATIVE -> sb.append(" tentative");
            case FAILED -> sb.append(" tentative dadfailed");
            default -> { }
        }
        return sb.append(" dev ").append(dev.name()).toString();
    }
}
