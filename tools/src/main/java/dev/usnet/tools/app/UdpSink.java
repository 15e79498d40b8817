package dev.usnet.tools.app;

import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.topology.file.TopologySpec;

/** {@code kind: udp-sink}: counts the datagrams arriving on a port. */
public final class UdpSink extends App {
    private final int port;
    private UdpSocket sock;

    public UdpSink(String ns, NetStack stack, TopologySpec.UdpSink u) {
        super(ns, stack);
        this.port = u.port();
    }

    public long received() {
        UdpSocket s = sock;
        return s == null ? 0 : s.rxDatagrams();
    }

    @Override
    public String kind() {
        return "udp-sink";
    }

    /** Payload bytes received. */
    public long bytes() {
        UdpSocket s = sock;
        return s == null ? 0 : s.rxBytes();
    }

    public int port() {
        return port;
    }

    @Override
    public void start() {
        running = true;
        sock = stack.udp().bind(0, port);
    }

    @Override
    public void stop() {
        running = false;
        if (sock != null) {
            sock.close();
        }
    }

    @Override
    public String summary() {
        UdpSocket s = sock;
        return ns + ": udp-sink :" + port + ": " + received() + " received (" + (s == null ? 0 : s.rxBytes()) + " bytes)";
    }

    /** Failed when nothing arrived: a sink is there to show that traffic gets through. */
    @Override
    public Outcome outcome() {
        return received() == 0 ? Outcome.failed("nothing received on port " + port) : Outcome.OK;
    }

    @Override
    public String peer() {
        return ":" + port;
    }

    /** Datagrams received and their payload bytes. */
    @Override
    public AppCounters counters() {
        return AppCounters.of(bytes(), received());
    }

    @Override
    public String label() {
        return ns + ": udp-sink :" + port;
    }
}
