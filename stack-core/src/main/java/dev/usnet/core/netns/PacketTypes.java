package dev.usnet.core.netns;

import java.util.ArrayList;
import java.util.List;

/**
 * The protocol table of a namespace (ptype_base, filled by dev_add_pack): which {@link PacketHandler} takes the
 * frames of an ethertype. Looked up per received frame, so it is a small open-addressed table of primitive keys
 * (no boxing, no allocation, usually the first slot probed). Changes are rare (a protocol family joining the
 * namespace) and build a new table, so a lookup on any thread sees a whole table, old or new.
 */
public final class PacketTypes {
    // Keys are ethertypes (16 bits; Ethernet II types are at least 0x0600), 0 marks a free slot.
    private static final int FREE = 0;

    private record Slots(int[] types, PacketHandler[] handlers) {
        Slots(int capacity) {
            this(new int[capacity], new PacketHandler[capacity]);
        }
    }

    private volatile Slots slots = new Slots(8);
    private int count;

    /** The handler of {@code ethertype}, or null when no protocol here takes it. */
    public PacketHandler find(int ethertype) {
        Slots s = slots;
        int[] t = s.types;
        int mask = t.length - 1;
        for (int i = slot(ethertype, mask); ; i = (i + 1) & mask) {
            int k = t[i];
            if (k == ethertype) {
                return s.handlers[i];
            }
            if (k == FREE) {
                return null;
            }
        }
    }

    /** dev_add_pack: {@code handler} takes the frames of {@code ethertype}; one protocol per ethertype. */
    public synchronized void register(int ethertype, PacketHandler handler) {
        if (ethertype < 0x0600 || ethertype > 0xffff) {
            throw new IllegalArgumentException("ethertype 0x" + Integer.toHexString(ethertype)
                    + " is not an Ethernet II type (0x0600..0xffff)");
        }
        if (handler == null) {
            throw new IllegalArgumentException("no handler given for ethertype 0x" + Integer.toHexString(ethertype));
        }
        if (find(ethertype) != null) {
            throw new IllegalStateException("ethertype 0x" + Integer.toHexString(ethertype) + " already has a handler");
        }
        rebuild(ethertype, handler, -1);
        count++;
    }

    /** dev_remove_pack: the frames of {@code ethertype} are no longer taken. */
    public synchronized void unregister(int ethertype) {
        if (find(ethertype) == null) {
            throw new IllegalStateException("ethertype 0x" + Integer.toHexString(ethertype) + " has no handler");
        }
        rebuild(FREE, null, ethertype);
        count--;
    }

    /** The ethertypes that have a handler, in no particular order. */
    public synchronized List<Integer> ethertypes() {
        List<Integer> out = new ArrayList<>();
        for (int t : slots.types) {
            if (t != FREE) {
                out.add(t);
            }
        }
        return out;
    }

    // A new table of every entry but {@code without}, plus {@code add} when not FREE, at most half full.
    private void rebuild(int add, PacketHandler addHandler, int without) {
        Slots old = slots;
        int capacity = old.types.length;
        while ((count + 1) * 2 > capacity) {
            capacity *= 2;
        }
        Slots s = new Slots(capacity);
        for (int i = 0; i < old.types.length; i++) {
            if (old.types[i] != FREE && old.types[i] != without) {
                put(s, old.types[i], old.handlers[i]);
            }
        }
        if (add != FREE) {
            put(s, add, addHandler);
        }
        slots = s;
    }

    private static void put(Slots s, int ethertype, PacketHandler handler) {
        int mask = s.types.length - 1;
        int i = slot(ethertype, mask);
        while (s.types[i] != FREE) {
            i = (i + 1) & mask;
        }
        s.types[i] = ethertype;
        s.handlers[i] = handler;
    }

    // The low bits differ across the common types (0x0800 IP, 0x0806 ARP, 0x86dd IPv6, 0x8100 VLAN); the high byte is
    // folded in for the rest.
    private static int slot(int ethertype, int mask) {
        return (ethertype ^ (ethertype >>> 8)) & mask;
    }
}
