package dev.usnet.tools.experiment.nsid;

import dev.usnet.tap.netns.Netns;
import dev.usnet.tap.rtnl.IfAddrMsg;
import dev.usnet.tap.rtnl.RtGenMsg;
import dev.usnet.tap.rtnl.RtnlAddr;
import dev.usnet.tap.rtnl.RtnlSocket;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SysException;
import dev.usnet.tcp.app.Percentiles;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;

/**
 * Another kernel namespace's addresses, asked for from one namespace (the viewer) in the ways a manager of many
 * namespaces can: RTM_GETADDR with IFA_TARGET_NETNSID on one long-lived rtnetlink socket; the same with a new socket
 * per query (as getifaddrs opens one each call); and entering the namespace (setns, a socket there, RTM_GETADDR, close,
 * setns back to the viewer). For each namespace count N it creates the viewer and N namespaces ({@value #PREFIX}-PID-*,
 * each with lo up, 127.0.0.1/8 and one address from 198.18.0.0/15 on lo, and an nsid in the viewer), asks round robin,
 * timing each query, and deletes them. Everything runs on one platform thread: setns moves only the calling thread.
 */
public final class KernelNsidQueries {
    /** Names of the kernel namespaces this measurement creates. */
    public static final String PREFIX = "usnet-nsq";

    /** How a query is made. */
    public enum Mode {
        BY_NSID("RTM_GETADDR by nsid"),
        BY_NSID_NEW_SOCKET("new socket + by nsid"),
        SETNS("setns + new socket + dump + setns back");

        private final String label;

        Mode(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** One mode at one namespace count: the latency of a query (each timed on its own). */
    public record Row(int namespaces, Mode mode, Percentiles latency) {}

    /** Namespace counts, and queries per mode and count. */
    public record Params(List<Integer> counts, int iterations) {
        public Params {
            counts = List.copyOf(counts);
            if (counts.isEmpty() || counts.stream().anyMatch(n -> n < 1 || n > 100_000)) {
                throw new IllegalArgumentException("namespace counts must be 1..100000, got " + counts);
            }
            if (iterations < 1) {
                throw new IllegalArgumentException("iterations must be at least 1, got " + iterations);
            }
        }
    }

    /** Queries of one mode in a row before the next mode's turn: modes alternate so that drift hits each alike. */
    static final int BLOCK = 500;

    private KernelNsidQueries() {}

    /** The address namespace {@code i} gets on lo: 198.18.0.0/15 counted from 198.18.0.1. */
    static byte[] address(int i) {
        int v = (198 << 24 | 18 << 16) + i + 1;
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    /** Runs every count in turn; {@code progress} hears a line as each starts and ends. */
    public static List<Row> run(Params p, Consumer<String> progress) throws IOException {
        List<Row> rows = new ArrayList<>();
        for (int n : p.counts()) {
            List<String> tags = new ArrayList<>(n + 1);
            tags.add("viewer");
            for (int i = 0; i < n; i++) {
                tags.add(Integer.toString(i));
            }
            long t0 = System.nanoTime();
            try (KernelNamespaces k = KernelNamespaces.create(PREFIX, tags)) {
                progress.accept(String.format(java.util.Locale.ROOT, "kernel: %d namespace%s and the viewer created in %.2f s; %d"
                        + " queries per way", n, n == 1 ? "" : "s", (System.nanoTime() - t0) / 1e9, p.iterations()));
                List<String> names = k.names();
                rows.addAll(Netns.onOwnThread(PREFIX + "-" + n, () -> measure(names.getFirst(), names.subList(1, names.size()),
                        p.iterations())));
            }
        }
        return rows;
    }

    /** On the calling (own, platform) thread: set the namespaces up, then time every mode. */
    private static List<Row> measure(String viewer, List<String> targets, int iterations) throws SysException {
        int n = targets.size();
        int[] fds = new int[n];
        int[] nsids = new int[n];
        java.util.Arrays.fill(fds, -1);
        int back = -1;
        try (Arena arena = Arena.ofConfined()) {
            RtnlSocket.Buffers bufs = RtnlSocket.Buffers.allocate(arena);
            Netns.enter(viewer);
            back = Netns.openCurrent();
            for (int i = 0; i < n; i++) {
                fds[i] = Netns.open(targets.get(i));
                Netns.enter(fds[i], targets.get(i));
                try (RtnlSocket inside = RtnlSocket.open(bufs)) {
                    inside.setLinkUp(1);
                    inside.addAddr4(1, address(i), 32, IfAddrMsg.RT_SCOPE_UNIVERSE);
                }
                Netns.enter(back, viewer);
            }
            Histogram[] h = new Histogram[Mode.values().length];
            try (RtnlSocket viewerSock = RtnlSocket.open(bufs)) {
                for (int i = 0; i < n; i++) {
                    viewerSock.newNsid(fds[i], RtGenMsg.NSID_NOT_ASSIGNED, targets.get(i));
                    nsids[i] = viewerSock.getNsid(fds[i], targets.get(i));
                }
                Query q = new Query(viewer, targets, fds, nsids, back, bufs, viewerSock);
                // Warm-up, checking every answer in full: the JIT, the kernel's caches, and the proof that each mode
                // reads the namespace it means to.
                int warm = Math.max(1, Math.min(2000, iterations / 10));
                for (Mode m : Mode.values()) {
                    for (int k = 0; k < warm; k++) {
                        q.check(k % n, q.run(m, k % n));
                    }
                }
                for (int m = 0; m < h.length; m++) {
                    h[m] = new Histogram(3_600_000_000L, 3);
                }
                int done = 0;
                int turn = 0;
                while (done < iterations) {
                    int count = Math.min(BLOCK, iterations - done);
                    for (int j = 0; j < h.length; j++) {
                        Mode m = Mode.values()[(turn + j) % h.length];
                        for (int k = 0; k < count; k++) {
                            int i = (done + k) % n;
                            long t = System.nanoTime();
                            List<RtnlAddr> a = q.run(m, i);
                            h[m.ordinal()].recordValue(System.nanoTime() - t);
                            if (a.size() != 2) {
                                throw new IllegalStateException(m.label() + " of " + targets.get(i) + " gave " + a);
                            }
                        }
                    }
                    done += count;
                    turn++;
                }
            }
            List<Row> rows = new ArrayList<>();
            for (Mode m : Mode.values()) {
                rows.add(new Row(n, m, Percentiles.of(h[m.ordinal()])));
            }
            return rows;
        } finally {
            for (int fd : fds) {
                if (fd >= 0) {
                    Libc.close(fd);
                }
            }
            if (back >= 0) {
                Libc.close(back);
            }
        }
    }

    /** The three ways of asking, from the viewer, for target {@code i}'s IPv4 addresses. */
    private record Query(String viewer, List<String> targets, int[] fds, int[] nsids, int back, RtnlSocket.Buffers bufs,
                         RtnlSocket viewerSock) {
        List<RtnlAddr> run(Mode m, int i) throws SysException {
            return switch (m) {
                case BY_NSID -> viewerSock.dumpAddrs(Libc.AF_INET, nsids[i]);
                case BY_NSID_NEW_SOCKET -> {
                    try (RtnlSocket s = RtnlSocket.open(bufs)) {
                        yield s.dumpAddrs(Libc.AF_INET, nsids[i]);
                    }
                }
                case SETNS -> {
                    Netns.enter(fds[i], targets.get(i));
                    try (RtnlSocket s = RtnlSocket.open(bufs)) {
                        yield s.dumpAddrs(Libc.AF_INET, -1);
                    } finally {
                        Netns.enter(back, viewer);
                    }
                }
            };
        }

        /** The answer is target i's: 127.0.0.1/8 and its own 198.18 address on lo, nothing else. */
        void check(int i, List<RtnlAddr> a) {
            byte[] b = address(i);
            String mine = (b[0] & 255) + "." + (b[1] & 255) + "." + (b[2] & 255) + "." + (b[3] & 255) + "/32";
            List<String> got = a.stream().map(RtnlAddr::cidr).sorted().toList();
            if (!got.equals(List.of("127.0.0.1/8", mine).stream().sorted().toList())) {
                throw new IllegalStateException("the answer for " + targets.get(i) + " is " + got + ", expected 127.0.0.1/8 and "
                        + mine);
            }
        }
    }
}
