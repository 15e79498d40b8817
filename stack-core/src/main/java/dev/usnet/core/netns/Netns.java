package dev.usnet.core.netns;

import dev.usnet.core.buf.CowStats;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.DeviceHost;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.knob.DevConf;
import dev.usnet.core.stats.DropCounters;
import dev.usnet.core.stats.MibCounters;
import dev.usnet.core.time.Timeout;
import java.util.List;

/**
 * One network namespace (struct net) as its protocols see it: its devices, clock, timers and seeded random
 * source, knobs, counters, and the protocol table its families register their ethertypes in. A protocol family
 * (IPv4 now, IPv6 later) is built on this view and never on the class that assembles the namespace, so the
 * families sit above it and the namespace below them.
 */
public interface Netns extends DeviceHost {
    /** dev_add_pack: frames of {@code ethertype} received here go to {@code handler}; one handler per type. */
    void registerPacketType(int ethertype, PacketHandler handler);

    /** A timer of this namespace: runs {@code task} after {@code delayNanos}, its run time measured as its CPU. */
    Timeout schedule(Runnable task, long delayNanos);

    /** Milliseconds since midnight UTC, as IP timestamp options carry (virtual clock in virtual time). */
    long msSinceMidnight();

    /** A random integer in [0, bound) from this namespace's seeded source; its thread only. */
    long randomBelow(long bound);

    /** The per-device settings of {@code dev} here ({@code net.ipv4.conf.<dev>.*}, {@code neigh.<dev>.*}). */
    DevConf conf(Device dev);

    DropCounters drops();

    MibCounters mib();

    CowStats cow();

    Loopback loopback();

    Device device(String name);

    Device device(int ifindex);

    /** The devices, lo included, as a copy. */
    List<Device> devices();
}
