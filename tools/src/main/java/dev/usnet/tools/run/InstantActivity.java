package dev.usnet.tools.run;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.Mib;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the namespaces of a virtual run received at one instant that would not end: the counters of every device and
 * namespace taken when the watchdog began to look closer ({@link dev.usnet.core.time.VirtualScheduler#onLongInstant}),
 * compared with the same counters when it gave up. The difference says which devices the work went through and which
 * protocol it was, so a stalled run can name its cause instead of guessing.
 */
public final class InstantActivity {
    /** Frames and protocol messages received from the snapshot to now. */
    public record Delta(long frames, long broadcasts, long tcpSegments, long arp, long icmp, long udp, long forwarded,
                 List<Map.Entry<String, Long>> busiestDevices, List<Map.Entry<String, Long>> tcpNamespaces) {
        /** The protocol most of the received messages were, or null when nothing was received. */
        String mainProtocol() {
            long most = Math.max(Math.max(tcpSegments, arp), Math.max(icmp, udp));
            if (most == 0) {
                return null;
            }
            return most == tcpSegments ? "TCP" : most == arp ? "ARP" : most == icmp ? "ICMP" : "UDP";
        }
    }

    // Device "ns/dev" → {rx packets, rx multicast}; namespace → MIB counters in COUNTED's order.
    private final Map<String, long[]> devices = new HashMap<>();
    private final Map<String, long[]> namespaces = new HashMap<>();
    private static final Mib[] COUNTED = {Mib.TcpInSegs, Mib.ArpInRequests, Mib.ArpInReplies, Mib.IcmpInMsgs,
            Mib.UdpInDatagrams, Mib.IpForwDatagrams};

    /** Takes the counters of {@code stacks} now. */
    public void snapshot(List<NetStack> stacks) {
        devices.clear();
        namespaces.clear();
        for (NetStack s : stacks) {
            for (Device d : s.devices()) {
                devices.put(s.name() + "/" + d.name(), new long[] {d.stats().rxPackets, d.stats().rxMulticast});
            }
            namespaces.put(s.name(), mib(s));
        }
    }

    public boolean taken() {
        return !namespaces.isEmpty();
    }

    private static long[] mib(NetStack s) {
        long[] v = new long[COUNTED.length];
        for (int k = 0; k < COUNTED.length; k++) {
            v[k] = s.mib().get(COUNTED[k]);
        }
        return v;
    }

    /** What {@code stacks} received since {@link #snapshot} (devices and namespaces made since count from zero). */
    public Delta since(List<NetStack> stacks) {
        long frames = 0;
        long broadcasts = 0;
        long[] proto = new long[COUNTED.length];
        List<Map.Entry<String, Long>> perDevice = new ArrayList<>();
        List<Map.Entry<String, Long>> tcp = new ArrayList<>();
        for (NetStack s : stacks) {
            for (Device d : s.devices()) {
                long[] before = devices.getOrDefault(s.name() + "/" + d.name(), new long[2]);
                long rx = d.stats().rxPackets - before[0];
                frames += rx;
                broadcasts += d.stats().rxMulticast - before[1];
                if (rx > 0) {
                    perDevice.add(Map.entry(s.name() + "/" + d.name(), rx));
                }
            }
            long[] before = namespaces.getOrDefault(s.name(), new long[COUNTED.length]);
            long[] now = mib(s);
            for (int k = 0; k < COUNTED.length; k++) {
                proto[k] += now[k] - before[k];
            }
            if (now[0] - before[0] > 0) {
                tcp.add(Map.entry(s.name(), now[0] - before[0]));
            }
        }
        Comparator<Map.Entry<String, Long>> most = Map.Entry.<String, Long>comparingByValue().reversed()
                .thenComparing(Map.Entry.comparingByKey());
        perDevice.sort(most);
        tcp.sort(most);
        return new Delta(frames, broadcasts, proto[0], proto[1] + proto[2], proto[3], proto[4], proto[5],
                List.copyOf(perDevice.subList(0, Math.min(4, perDevice.size()))),
                List.copyOf(tcp.subList(0, Math.min(4, tcp.size()))));
    }

    /**
     * One line for the error: what was received and where, e.g. {@code since then the namespaces received 1203400
     * frames (TCP 601700 segments, ARP 0, ICMP 0, UDP 0; 0 broadcast or multicast), most on b/eth0 601700, ...}.
     */
    public static String describe(Delta d) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
                "since then the namespaces received %d frames (TCP %d segments, ARP %d, ICMP %d, UDP %d; %d broadcast"
                        + " or multicast; %d IP packets forwarded)", d.frames(), d.tcpSegments(), d.arp(), d.icmp(),
                d.udp(), d.broadcasts(), d.forwarded()));
        if (!d.busiestDevices().isEmpty()) {
            b.append(", most on ");
            d.busiestDevices().forEach(e -> b.append(e == d.busiestDevices().getFirst() ? "" : ", ")
                    .append(e.getKey()).append(' ').append(e.getValue()));
        }
        return b.toString();
    }
}
