package dev.usnet.tools.app;

import dev.usnet.core.device.Device;
import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.ipv6.Udp6Socket;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.tools.topology.file.EntryValues;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.Timeout;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.topology.file.TopologySpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/** {@code kind: udp-send}: datagrams at a steady rate, over IPv4 or IPv6. */
public final class UdpSender extends App {
    private final int to;
    /** The IPv6 destination, or null for an IPv4 one. */
    private final EntryValues.Ip6Destination to6;
    private final long toHi;
    private final long toLo;
    private Device oif;
    private Udp6Socket sock6;
    private volatile long noSource;
    private final int port;
    private final int rate;
    private final int size;
    private final int keepClones;
    /** With {@code max_burst:}: how many are due at each tick, a late tick's excess skipped; else null. */
    private final Pacer pacer;
    private ByteBuf data;
    private UdpSocket sock;
    private volatile long sent;
    private volatile long noRoute;
    private volatile long skipped;
    private long startNanos;
    private Timeout timer;

    public UdpSender(String ns, NetStack stack, TopologySpec.UdpSend u) {
        super(ns, stack);
        this.to = u.to();
        this.to6 = u.to6();
        this.toHi = to6 == null ? 0 : to6.address().hi();
        this.toLo = to6 == null ? 0 : to6.address().lo();
        this.port = u.port();
        this.rate = u.rate();
        this.size = u.size();
        this.keepClones = u.keepClones();
        this.pacer = u.maxBurstNanos() > 0 ? new Pacer(u.rate(), u.maxBurstNanos()) : null;
    }

    @Override
    public String kind() {
        return "udp-send";
    }

    /** Datagrams not sent because a tick ran later than {@code max_burst:} (0 without it). */
    public long skipped() {
        return skipped;
    }

    /** Clones of its last datagrams the socket keeps ({@code keep_clones:}). */
    public int keepClones() {
        return keepClones;
    }

    public long sent() {
        return sent;
    }

    /** Destination address:port. */
    public String to() {
        return to6 != null ? "[" + to6 + "]:" + port : Ipv4Addr.format(to) + ":" + port;
    }

    /** Payload bytes per datagram. */
    public int size() {
        return size;
    }

    @Override
    public void start() {
        running = true;
        data = Unpooled.buffer(size).writeZero(size);
        if (to6 == null) {
            sock = stack.udp().bind(0, 0);
            sock.setKeepClones(keepClones);
        } else {
            sock6 = stack.ipv6().udp().bind(Ipv6Addr.ANY, 0);
            oif = to6.dev() == null ? null : stack.device(to6.dev());
        }
        startNanos = stack.now();
        if (pacer != null) {
            pacer.start(startNanos);
        }
        tick();
    }

    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private void tick() {
        if (!running) {
            return;
        }
        if (pacer != null) {
            pacedTick();
            return;
        }
        long due = (stack.now() - startNanos) * rate / 1_000_000_000L + 1;
        while (sent < due) {
            send();
            sent++;
        }
        long period = rate >= 1000 ? 1_000_000L : 1_000_000_000L / rate;
        timer = stack.scheduler().schedule(this::tick, period);
    }

    /** {@code max_burst:}: what the pacer says is due, so a late tick sends at most max_burst worth. */
    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private void pacedTick() {
        for (long n = pacer.due(stack.now()); n > 0; n--) {
            send();
            sent++;
        }
        skipped = pacer.skipped();
        long period = rate >= 1000 ? 1_000_000L : 1_000_000_000L / rate;
        timer = stack.scheduler().schedule(this::tick, period);
    }

    /** One datagram; what kept it from leaving is counted. */
    @SuppressWarnings("NonAtomicOperationOnVolatileField")
    private void send() {
        if (to6 == null) {
            if (!sock.sendTo(to, port, data, 0, size)) {
                noRoute++;
            }
            return;
        }
        switch (sock6.sendTo(toHi, toLo, oif, port, data, 0, size)) {
            case Udp6Socket.NO_ROUTE -> noRoute++;
            case Udp6Socket.NO_SOURCE -> noSource++;
            default -> { }
        }
    }

    @Override
    public void stop() {
        running = false;
        if (timer != null) {
            timer.cancel();
        }
        if (sock != null) {
            sock.close();
        }
        if (sock6 != null) {
            sock6.close();
        }
        data.release();
    }

    @Override
    public String summary() {
        long n = noRoute;
        long late = skipped;
        long ns6 = noSource;
        return ns + ": udp-send " + to() + ": " + sent + " sent"
                + (n == 0 ? "" : ", " + n + " of them without a route")
                + (ns6 == 0 ? "" : ", " + ns6 + " of them without a source address (EADDRNOTAVAIL)")
                + (late == 0 ? "" : ", " + late + " skipped (the sender ran late by more than max_burst)");
    }

    /**
     * Failed when not one datagram left the namespace (no route to the destination); whether they arrive is
     * for a sink to say.
     */
    @Override
    public Outcome outcome() {
        long s = sent;
        if (s == 0) {
            return Outcome.failed("sent no datagram");
        }
        if (noSource == s) {
            return Outcome.failed("no source address for " + (to6 != null ? to6.toString() : Ipv4Addr.format(to))
                    + " (EADDRNOTAVAIL): no datagram left");
        }
        return noRoute == s ? Outcome.failed("no route to " + (to6 != null ? to6.toString() : Ipv4Addr.format(to))
                + " (ENETUNREACH): no datagram left") : Outcome.OK;
    }

    @Override
    public String peer() {
        return to();
    }

    /** Datagrams sent and their payload bytes. */
    @Override
    public AppCounters counters() {
        long s = sent;
        return AppCounters.of(s * size, s);
    }

    @Override
    public String label() {
        return ns + ": udp-send " + to();
    }
}
