package dev.usnet.tools.app;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv6.Icmpv6;
import dev.usnet.tools.topology.file.EntryValues;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.Map;
import dev.usnet.tcp.app.Percentiles;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.app.Outcome;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.SingleWriterRecorder;

/**
 * {@code kind: ping}: echo requests every interval, round-trip times in a histogram. Over ICMP to an IPv4 address,
 * over ICMPv6 to an IPv6 one (a link-local one through its named device).
 */
public final class Pinger extends App {
    private static final int SLOTS = 1024;
    private final int to;
    /** The IPv6 destination, or null for an IPv4 one; its address as two longs for the per-reply compare. */
    private final EntryValues.Ip6Destination to6;
    private final long toHi;
    private final long toLo;
    private Device oif;
    private final long intervalNanos;
    private final int size;
    private final int id;
    private ByteBuf payload;
    private final long[] sentAt = new long[SLOTS];
    private final int[] sentSeq = new int[SLOTS];
    private final SingleWriterRecorder recorder = new SingleWriterRecorder(3);
    private final Histogram total = new Histogram(3);
    private volatile long sent;
    private volatile long received;
    private volatile long noRoute;
    /** IPv6 echoes not sent for want of a source address (all still tentative, say). */
    private volatile long noSource;
    // Echoes unanswered when the app stopped but sent too recently to call lost (see stop); the longest RTT seen.
    private volatile long unansweredAtEnd;
    private long maxRtt;
    /** The hop limit (TTL) of the last reply, as ping's hlim= shows it; 0 before one. */
    private volatile int lastHopLimit;
    private int seq;
    private Timeout timer;
    /** A measured window ({@link #openWindow}): which requests were sent in it; namespace thread only. */
    private final boolean[] inWindow = new boolean[SLOTS];
    private boolean windowOpen;
    private long windowSent;
    private long windowReceived;
    private final Histogram windowRtt = new Histogram(3);

    public Pinger(String ns, NetStack stack, TopologySpec.Ping p, int id) {
        super(ns, stack);
        this.to = p.to();
        this.to6 = p.to6();
        this.toHi = to6 == null ? 0 : to6.address().hi();
        this.toLo = to6 == null ? 0 : to6.address().lo();
        this.intervalNanos = Math.max(1_000_000L, Math.round(p.intervalSeconds() * 1e9));
        this.size = p.size();
        this.id = id;
        java.util.Arrays.fill(sentSeq, -1);
    }

    public long sent() {
        return sent;
    }

    public long received() {
        return received;
    }

    /** The hop limit the last IPv6 reply arrived with; 0 before one, and for IPv4. */
    public int lastHopLimit() {
        return lastHopLimit;
    }

    @Override
    public String kind() {
        return "ping";
    }

    /** The address pinged, dotted or (IPv6) in its text form. */
    public String to() {
        return to6 != null ? to6.toString() : Ipv4Addr.format(to);
    }

    @Override
    public void start() {
        running = true;
        payload = Unpooled.buffer(size).writeZero(size);
        if (to6 == null) {
            stack.icmp().openPing(id, (from, s, data, off, len) -> {
                if (from == to) {
                    reply(s, 0);
                }
            });
        } else {
            oif = to6.dev() == null ? null : stack.device(to6.dev());
            stack.ipv6().icmp().openPing(id, (fromHi, fromLo, s, hopLimit, data, off, len) -> {
                if (fromHi == toHi && fromLo == toLo) {
                    reply(s, hopLimit);
                }
            });
        }
        tick();
    }

    /** The reply to request {@code s}, if it is still outstanding; {@code hopLimit} 0 where not known. */
    private void reply(int s, int hopLimit) {
        int slot = s & (SLOTS - 1);
        if (sentSeq[slot] == s) {
            lastHopLimit = hopLimit;
            sentSeq[slot] = -1;
            long rtt = Math.max(0, stack.now() - sentAt[slot]);
            recorder.recordValue(rtt);
            maxRtt = Math.max(maxRtt, rtt);
            received++;
            if (inWindow[slot]) {
                inWindow[slot] = false;
                windowReceived++;
                windowRtt.recordValue(rtt);
            }
        }
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private void tick() {
        if (!running) {
            return;
        }
        int s = seq;
        seq = (seq + 1) & 0xffff;
        int slot = s & (SLOTS - 1);
        sentSeq[slot] = s;
        sentAt[slot] = stack.now();
        sent++;
        inWindow[slot] = windowOpen;
        if (windowOpen) {
            windowSent++;
        }
        if (to6 == null) {
            if (!stack.icmp().sendEcho(to, id, s, payload, 0, size, 0)) {
                noRoute++;
            }
        } else {
            switch (stack.ipv6().icmp().sendEcho(toHi, toLo, oif, id, s, payload, 0, size, 0)) {
                case Icmpv6.ECHO_NO_ROUTE -> noRoute++;
                case Icmpv6.ECHO_NO_SOURCE -> noSource++;
                default -> { }
            }
        }
        timer = stack.scheduler().schedule(this::tick, intervalNanos);
    }

    /**
     * Stops sending and listening. An echo still unanswered then, sent less than two of the longest round trips
     * seen before, may well be on its way back: like ping, which at its end waits two RTTs for the last replies
     * and no longer, it is counted apart ({@link #unansweredAtEnd}), not as lost. Without any reply there is no
     * round trip to go by, and every unanswered echo is lost.
     */
    @Override
    public void stop() {
        running = false;
        if (timer != null) {
            timer.cancel();
        }
        if (maxRtt > 0 || received > 0) {
            long now = stack.now();
            long window = 2 * Math.max(maxRtt, 1);
            long pending = 0;
            for (int slot = 0; slot < SLOTS; slot++) {
                if (sentSeq[slot] >= 0 && now - sentAt[slot] < window) {
                    pending++;
                }
            }
            unansweredAtEnd = pending;
        }
        if (to6 == null) {
            stack.icmp().closePing(id);
        } else {
            stack.ipv6().icmp().closePing(id);
        }
        payload.release();
    }

    /** Echoes unanswered at the stop that were sent within two round trips of it: neither received nor lost. */
    public long unansweredAtEnd() {
        return unansweredAtEnd;
    }

    @Override
    public synchronized Histogram histogram() {
        total.add(recorder.getIntervalHistogram());
        return total.copy();
    }

    /**
     * Opens a measured window (usnet demo's, after its warm-up): from now on the requests sent are counted
     * apart, with the replies to them whenever they arrive, so a late reply to an earlier request is not
     * counted in it. Call on the namespace thread.
     */
    public void openWindow() {
        windowOpen = true;
    }

    /** Ends the window: later requests are not counted in it; replies to those that were still are. Namespace thread. */
    public void closeWindow() {
        windowOpen = false;
    }

    /** Requests sent in the window. Namespace thread. */
    public long windowSent() {
        return windowSent;
    }

    /** Replies to requests sent in the window. Namespace thread. */
    public long windowReceived() {
        return windowReceived;
    }

    /** Round-trip times of the window's requests, nanoseconds (a copy). Namespace thread. */
    public Histogram windowRtt() {
        return windowRtt.copy();
    }

    @Override
    public String histogramName() {
        return ns + ".ping-" + to();
    }

    @Override
    public String summary() {
        Histogram h = histogram();
        String rtt = h.getTotalCount() == 0 ? ""
                : String.format(", rtt p50 %.1f us, p99 %.1f us", h.getValueAtPercentile(50) / 1000.0,
                h.getValueAtPercentile(99) / 1000.0);
        long s = sent;
        long r = received;
        long late = unansweredAtEnd;
        String loss = s == 0 ? "" : String.format(java.util.Locale.ROOT, ", %.0f%% loss", 100.0 * Math.max(0, s - r - late) / s);
        long n = noRoute;
        return ns + ": ping " + to() + ": " + s + " sent, " + r + " received"
                + (late == 0 ? "" : ", " + late + " unanswered at the end (sent within two round trips of it)") + loss + rtt
                + (n == 0 ? "" : ", " + n + " without a route")
                + (noSource == 0 ? "" : ", " + noSource + " without a source address (EADDRNOTAVAIL)");
    }

    /** Failed when no echo was answered; some loss is ok (the summary shows it). */
    @Override
    public Outcome outcome() {
        long s = sent;
        if (s == 0) {
            return Outcome.failed("sent no echo request");
        }
        if (received > 0) {
            return Outcome.OK;
        }
        if (noSource == s) {
            return Outcome.failed("no source address for " + to() + " (EADDRNOTAVAIL): no echo request left");
        }
        return Outcome.failed(noRoute == s ? "no route to " + to() + " (ENETUNREACH): no echo request left"
                : "no replies: 0 of " + s + " echoes answered");
    }

    @Override
    public String peer() {
        return to();
    }

    /** Replies received, and the round-trip times of the echoes answered. */
    @Override
    public AppCounters counters() {
        return new AppCounters(0, null, received(), Percentiles.of(histogram()), 0, 0);
    }

    @Override
    public void putLiveFields(Map<String, Object> m) {
        m.put("sent", sent());
    }

    @Override
    public String label() {
        return ns + ": ping " + to();
    }
}
