package dev.usnet.tools.ctl;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.usnet.core.testing.LeakGuard;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;

/**
 * The control protocol on arbitrary input, against one running in-JVM daemon (three containers, a bridge, a router;
 * no apps, so nothing allocates buffers but what a request does):
 * <ul>
 * <li>{@code line}: bytes as a request line: {@link CtlRequest#parse} takes it apart or refuses it with a message;
 *     nothing else escapes;</li>
 * <li>{@code verbs}: requests made of the protocol's own words, the daemon's names and numbers, each run as the
 *     server runs it (on the namespace's loop): answered, or refused with a message that says why — an internal error
 *     (any other exception) fails the input; a refused request leaves the daemon's state as it was; afterwards the
 *     daemon still answers {@code version} and {@code ns list}; no buffer is left allocated.</li>
 * </ul>
 */
class CtlFuzzTest {
    /** Words of the protocol, the daemon's namespaces and devices, addresses, knobs, numbers and filler. */
    private static final String[] WORDS = {
        "ns", "list", "add", "del", "link", "show", "set", "up", "down", "mtu", "address", "master", "nomaster",
        "type", "veth", "bridge", "peer", "addr", "dev", "route", "get", "replace", "change", "via", "default",
        "proto", "metric", "scope", "table", "src", "unreachable", "prohibit", "blackhole", "neigh", "lladdr",
        "flush", "nud", "permanent", "fdb", "sysctl", "-a", "-w", "netem", "delay", "rate", "loss", "limit", "jitter",
        "duplicate", "reorder", "stats", "capture", "start", "stop", "in", "out", "inout", "count", "hist", "dump",
        "apps", "version", "br", "learning", "flood", "hairpin",
        "host", "ctr1", "ctr2", "ctr3", "nope", "br0", "hb1", "hb2", "hr3", "eth0", "lo", "ctr1/eth0", "host/br0",
        "ctr3/eth0", "x.pcap", "198.18.0.1", "198.18.0.11/24", "198.18.1.0/24", "198.18.7.0/24", "198.18.1.13",
        "0.0.0.0/0", "255.255.255.255/32", "02:00:00:00:00:05", "ff:ff:ff:ff:ff:ff", "net.ipv4.ip_forward=1",
        "net.ipv4.ip_forward", "net.ipv4.tcp_sack=0", "usnet.hz=100", "net.ipv4.conf.hb1.proxy_arp=1",
        "usnet.netem.hr3.loss=1%", "net.ipv4.icmp_ratelimit", "0", "1", "-1", "9000", "65536", "1ms", "100mbit",
        "50%", "2147483648", "", " ", "=", "/"};

    private static Path dir;
    private static LiveDaemon daemon;

    private static synchronized LiveDaemon daemon() throws Exception {
        if (daemon == null) {
            dir = Files.createTempDirectory("usnet-ctl-fuzz");
            daemon = LiveDaemon.start(LiveDaemon.topology("", ""), dir);
        }
        return daemon;
    }

    @AfterAll
    static void stop() throws Exception {
        if (daemon != null) {
            daemon.close();
            daemon = null;
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @FuzzTest(maxDuration = "5m")
    void line(byte[] data) {
        String line = new String(data, StandardCharsets.UTF_8).trim();
        if (line.isEmpty()) {
            return;
        }
        try {
            CtlRequest r = CtlRequest.parse(line);
            if (r.args().isEmpty() || r.args().stream().anyMatch(a -> a == null)) {
                throw new AssertionError("a parsed request has a verb and string words: " + r);
            }
        } catch (CtlRequest.Refused e) {
            if (e.getMessage() == null || e.getMessage().isBlank()) {
                throw new AssertionError("a refused line must say why: " + line);
            }
        }
    }

    @FuzzTest(maxDuration = "5m")
    void verbs(byte[] data) throws Exception {
        LiveDaemon d = daemon();
        ControlPlane cp = d.control.plane();
        String ns = null;
        List<String> args = new ArrayList<>();
        int i = 0;
        if (data.length > 0) {
            int n = data[i++] & 0xff;
            ns = n % 5 == 4 ? null : new String[] {"host", "ctr1", "ctr2", "ctr3"}[n % 5];
        }
        while (i < data.length && args.size() < 12) {
            int b = data[i++] & 0xff;
            if (b < 224 || i >= data.length) {
                args.add(WORDS[b % WORDS.length]);
            } else {
                // A word of its own: up to 16 bytes mapped to letters, digits and .:-_%
                int len = Math.min(data[i++] & 0x0f, data.length - i);
                StringBuilder w = new StringBuilder();
                for (int k = 0; k < len; k++) {
                    w.append("abcdefghijklmnopqrstuvwxyz0123456789.:-_%".charAt((data[i++] & 0xff) % 41));
                }
                args.add(w.toString());
            }
        }
        if (args.isEmpty() || args.getFirst().equals("events")) {
            return;
        }
        long live = LeakGuard.liveBuffers();
        String before = state(cp);
        try {
            cp.handle(ns, args);
        } catch (CtlException e) {
            if (e.getMessage() == null || e.getMessage().isBlank()) {
                throw new AssertionError("a refused request must say why: " + ns + " " + args);
            }
            String after = state(cp);
            if (!after.equals(before)) {
                throw new AssertionError("a refused request changed the daemon (" + ns + " " + args + ": "
                        + e.getMessage() + ")\nbefore: " + before + "\nafter:  " + after);
            }
        }
        cp.handle(null, List.of("version"));
        cp.handle(null, List.of("ns", "list"));
        if (LeakGuard.liveBuffers() != live) {
            throw new AssertionError((LeakGuard.liveBuffers() - live) + " buffer(s) left allocated by " + ns + " " + args);
        }
    }

    /** What a request could change, as the daemon shows it (counters left out: they move on their own). */
    private static String state(ControlPlane cp) {
        StringBuilder b = new StringBuilder();
        b.append(cp.handle(null, List.of("ns", "list")).data());
        for (Object o : (List<?>) cp.handle(null, List.of("ns", "list")).data()) {
            String ns = String.valueOf(o instanceof java.util.Map<?, ?> m ? m.get("name") : o);
            for (String[] v : new String[][] {{"addr", "show"}, {"route", "show"}, {"neigh", "show"},
                    {"netem", "show"}}) {
                b.append(ns).append(Arrays.toString(v)).append(cp.handle(ns, List.of(v)).data());
            }
            b.append(cp.handle(ns, List.of("sysctl", "-a")).data());
            b.append(linksWithoutCounters(cp.handle(ns, List.of("link", "show")).data()));
        }
        b.append(cp.handle(null, List.of("capture", "list")).data());
        return b.toString();
    }

    private static String linksWithoutCounters(Object links) {
        StringBuilder b = new StringBuilder();
        for (Object o : (List<?>) links) {
            var m = new java.util.TreeMap<String, Object>();
            ((java.util.Map<?, ?>) o).forEach((k, v) -> m.put(String.valueOf(k), v));
            m.remove("stats64");
            b.append(m);
        }
        return b.toString();
    }
}
