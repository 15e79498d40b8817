package dev.usnet.core.nat;

import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netns.Netns;
import dev.usnet.core.wire.Ipv4Packet;
import java.util.function.LongUnaryOperator;

/**
 * Choosing the new address and port of a connection's first packet (get_unique_tuple, find_best_ips_proto,
 * nf_nat_l4proto_unique_tuple), as Linux 6.x does:
 * <ol>
 * <li>Source NAT without {@code random}/{@code fully-random}: the original source stays when it lies in the range
 * and the tuple is free; when it does not lie in the range, a mapping an earlier connection from the same source
 * got ({@link NatSourceMapping}) is reused when it is free.</li>
 * <li>The address: the range's only address, or one picked by a hash of the source and destination addresses
 * (Jenkins' lookup3 over the source, seeded with the destination unless {@code persistent}, then scaled to the
 * range), the same address for the same pair every time.</li>
 * <li>Unless {@code random}: the port stays if the tuple is now free (and, with a port range, the port is in it;
 * a one-port range is taken even when in use).</li>
 * <li>Otherwise a port is searched in the range: the rule's, or for source NAT without one the class of the
 * original port (below 512: 1-511; 512-1023: 600-1023; else 1024-65535). A destination NAT without a port range
 * cannot move the port. ICMP query ids are searched the same way, in 0-65535 unless the range gives ports, for
 * either kind of NAT. The search starts at a random offset, tries {@code min(range size, 128)} ports in a row,
 * then, while the range is larger than that and the window not below 16, halves the window and starts again at a
 * new random offset (128 + 64 + 32 + 16 + 8 tries at most). A destination NAT without {@code random} starts its
 * first window at the range's first port instead, so a port-forward to a range fills it in order.</li>
 * </ol>
 * Where Linux still has no free tuple, it keeps the last one tried and drops the packet when conntrack confirms
 * the connection; here the result is {@link #NO_TUPLE} and the caller drops at once ({@code NAT_NO_FREE_TUPLE}).
 *
 * <p>The address choice, every "stays" case above and a destination NAT's first window are exactly Linux's
 * (lookup3 is computed over the address as a little-endian machine loads it, as on x86-64). Randomly started
 * searches differ: Linux draws those offsets from the kernel's random source, usnet from the namespace's seeded
 * one, so a run is reproducible but the ports are not the kernel's.
 *
 * <p>Results are packed into a long ({@link #pack}): the manipulated side's address and port, nothing allocated.
 */
public final class NatPortAllocator {
    /** No free tuple. */
    public static final long NO_TUPLE = -1L;

    /** Linux's NF_NAT_MAX_ATTEMPTS: the first search window. */
    static final int MAX_ATTEMPTS = 128;

    /** Below this window no further round is tried. */
    static final int MIN_WINDOW = 16;

    private final LongUnaryOperator randomBelow;

    /** {@code randomBelow.applyAsLong(n)}: a random integer in [0, n), the namespace's seeded source. */
    public NatPortAllocator(LongUnaryOperator randomBelow) {
        this.randomBelow = randomBelow;
    }

    /** An allocator drawing from the namespace's seeded random source (its thread only). */
    public static NatPortAllocator forNamespace(Netns ns) {
        return new NatPortAllocator(ns::randomBelow);
    }

    public static long pack(int addr, int port) {
        return (addr & 0xffff_ffffL) << 16 | (port & 0xffff);
    }

    public static int addr(long packed) {
        return (int) (packed >>> 16);
    }

    public static int port(long packed) {
        return (int) (packed & 0xffff);
    }

    /**
     * The new source (when {@code source}) or destination for a connection of {@code proto} whose original
     * tuple is {@code src}:{@code srcPort} → {@code dst}:{@code dstPort}, in {@code range}; packed, or
     * {@link #NO_TUPLE}. For ICMP, {@code srcPort} is the query id (and the result's port the new id, for either
     * kind). {@code bySource} may be {@link NatSourceMapping#NONE}.
     */
    public long uniqueTuple(int proto, int src, int srcPort, int dst, int dstPort, NfNatRange range, boolean source,
                            TupleInUse inUse, NatSourceMapping bySource) {
        boolean randomAll = range.has(NfNatRange.PROTO_RANDOM) || range.has(NfNatRange.PROTO_RANDOM_FULLY);
        if (source && !randomAll) {
            if (inRange(proto, src, srcPort, range)) {
                if (!inUse.inUse(proto, src, srcPort, dst, dstPort)) {
                    return pack(src, srcPort);
                }
            } else {
                long mapped = bySource.find(proto, src, srcPort, range);
                if (mapped != NO_TUPLE && !inUse.inUse(proto, addr(mapped), port(mapped), dst, dstPort)) {
                    return mapped;
                }
            }
        }
        int newSrc = src;
        int newDst = dst;
        if (range.has(NfNatRange.MAP_IPS)) {
            int a = bestAddress(src, dst, range);
            if (source) {
                newSrc = a;
            } else {
                newDst = a;
            }
        }
        boolean icmp = proto == Ipv4Packet.PROTO_ICMP;
        // The port or id this manip may change: an ICMP id is the tuple's source id for either kind.
        int key = icmp || source ? srcPort : dstPort;
        if (!randomAll) {
            if (range.has(NfNatRange.PROTO_SPECIFIED)) {
                if (keyInRange(proto, key, range)) {
                    if (range.minPort() == range.maxPort()) {
                        // Linux takes a one-port range's port without asking; a clash drops at confirmation.
                        return free(proto, newSrc, srcPort, newDst, dstPort, inUse, source, source || icmp, key);
                    }
                    if (!used(proto, newSrc, srcPort, newDst, dstPort, inUse, source || icmp, key)) {
                        return pack(source ? newSrc : newDst, key);
                    }
                }
            } else if (!used(proto, newSrc, srcPort, newDst, dstPort, inUse, source || icmp, key)) {
                return pack(source ? newSrc : newDst, key);
            }
        }
        return searchKey(proto, newSrc, srcPort, newDst, dstPort, range, source, key, inUse);
    }

    /** nf_nat_l4proto_unique_tuple: the port or id searched in the range. */
    private long searchKey(int proto, int src, int srcPort, int dst, int dstPort, NfNatRange range, boolean source,
                           int key, TupleInUse inUse) {
        boolean icmp = proto == Ipv4Packet.PROTO_ICMP;
        boolean keyIsSource = source || icmp;
        int min;
        int size;
        if (icmp) {
            if (range.has(NfNatRange.PROTO_SPECIFIED)) {
                min = range.minPort();
                size = range.maxPort() - range.minPort() + 1;
            } else {
                min = 0;
                size = 65536;
            }
        } else if (proto == Ipv4Packet.PROTO_TCP || proto == Ipv4Packet.PROTO_UDP) {
            if (!range.has(NfNatRange.PROTO_SPECIFIED)) {
                if (!source) {
                    // A destination NAT without ports cannot change the port: the tuple stays as it is even when
                    // taken (Linux returns it unchanged); the source NAT at postrouting, null binding included, then
                    // moves the source port of a clashing connection.
                    return pack(dst, key);
                }
                if (key < 512) {
                    min = 1;
                    size = 511;
                } else if (key < 1024) {
                    min = 600;
                    size = 1023 - 600 + 1;
                } else {
                    min = 1024;
                    size = 65535 - 1024 + 1;
                }
            } else {
                min = Math.min(range.minPort(), range.maxPort());
                size = Math.max(range.minPort(), range.maxPort()) - min + 1;
            }
        } else {
            // No ports to move: the tuple as it is.
            return free(proto, src, srcPort, dst, dstPort, inUse, source, source, key);
        }
        if (size <= 0) {
            // A reversed ICMP id range: Linux's unsigned size would be huge and wrap; nothing sensible to search.
            return NO_TUPLE;
        }
        // Linux's offset is a u16 that wraps as it is stepped. A destination NAT without random starts at the
        // range's first port (a port-forward to a range fills it in order); source NAT and random draw it.
        boolean randomAll = range.has(NfNatRange.PROTO_RANDOM) || range.has(NfNatRange.PROTO_RANDOM_FULLY);
        int off = randomAll || source ? (int) randomBelow.applyAsLong(65536) : 0;
        int attempts = Math.min(size, MAX_ATTEMPTS);
        while (true) {
            for (int i = 0; i < attempts; i++, off = (off + 1) & 0xffff) {
                int candidate = min + off % size;
                boolean taken = keyIsSource
                        ? inUse.inUse(proto, src, candidate, dst, dstPort, attempts - i)
                        : inUse.inUse(proto, src, srcPort, dst, candidate, attempts - i);
                if (!taken) {
                    return pack(source ? src : dst, candidate);
                }
            }
            if (attempts >= size || attempts < MIN_WINDOW) {
                return NO_TUPLE;
            }
            attempts /= 2;
            off = (int) randomBelow.applyAsLong(65536);
        }
    }

    /** The tuple as it stands, packed as the manipulated side, when it is free. */
    private static long free(int proto, int src, int srcPort, int dst, int dstPort, TupleInUse inUse, boolean source,
                             boolean keyIsSource, int key) {
        if (used(proto, src, srcPort, dst, dstPort, inUse, keyIsSource, key)) {
            return NO_TUPLE;
        }
        return pack(source ? src : dst, key);
    }

    /** The tuple with {@code key} in the source port (or id) or the destination port, asked of the table. */
    private static boolean used(int proto, int src, int srcPort, int dst, int dstPort, TupleInUse inUse,
                                boolean keyIsSource, int key) {
        return keyIsSource ? inUse.inUse(proto, src, key, dst, dstPort) : inUse.inUse(proto, src, srcPort, dst, key);
    }

    /**
     * in_range for a source mapping: the address in the range when the range maps addresses, and, when it gives
     * ports, the port (the id for ICMP) in them. Protocols without ports are always in range on that count.
     */
    public static boolean inRange(int proto, int addr, int port, NfNatRange range) {
        if (range.has(NfNatRange.MAP_IPS)
                && (Integer.compareUnsigned(addr, range.minAddr()) < 0 || Integer.compareUnsigned(addr, range.maxAddr()) > 0)) {
            return false;
        }
        return !range.has(NfNatRange.PROTO_SPECIFIED) || keyInRange(proto, port, range);
    }

    /** l4proto_in_range: the port or id within the range's ports; true for a protocol without either. */
    private static boolean keyInRange(int proto, int key, NfNatRange range) {
        if (proto != Ipv4Packet.PROTO_TCP && proto != Ipv4Packet.PROTO_UDP && proto != Ipv4Packet.PROTO_ICMP) {
            return true;
        }
        return key >= range.minPort() && key <= range.maxPort();
    }

    /**
     * find_best_ips_proto for IPv4: the address in [minAddr, maxAddr] for the pair {@code src}, {@code dst}:
     * lookup3 of the source address (a 16-byte field, the IPv4 address first, the rest zero) with the destination
     * as the seed ({@code persistent}: seed 0, so a source keeps its address whatever it talks to), scaled to the
     * range's size by multiplication (reciprocal_scale).
     */
    public static int bestAddress(int src, int dst, NfNatRange range) {
        int min = range.minAddr();
        int max = range.maxAddr();
        if (min == max) {
            return min;
        }
        // The kernel hashes the address words as the machine loads them; x86-64 is little-endian.
        int seed = range.has(NfNatRange.PERSISTENT) ? 0 : Integer.reverseBytes(dst);
        int j = Jhash.jhash2Words4(Integer.reverseBytes(src), 0, 0, 0, seed);
        long dist = (max - min + 1) & 0xffff_ffffL;
        return min + (int) (((j & 0xffff_ffffL) * dist) >>> 32);
    }
}
