package dev.usnet.tools.app;

import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.ipv6.Udp6Socket;
import dev.usnet.core.wire.Ipv6Addr;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.topology.file.TopologySpec;

/**
 * {@code kind: udp-sink}: counts the datagrams arriving on a port, over IPv4 and, in a namespace with IPv6 on, over
 * IPv6 too (as one dual-stack socket would).
 */
public final class UdpSink extends App {
    private final int port;
    private UdpSocket sock;
    private Udp6Socket sock6;

    public UdpSink(String ns, NetStack stack, TopologySpec.UdpSink u) {
        super(ns, stack);
        this.port = u.port();
    }

    public long received() {
        UdpSocket s = sock;
        Udp6Socket s6 = sock6;
        return (s == null ? 0 : s.rxDatagrams()) + (s6 == null ? 0 : s6.rxDatagrams());
    }

    @Override
    public String kind() {
        return "udp-sink";
    }

    /** Payload bytes received. */
    public long bytes() {
        UdpSocket s = sock;
        Udp6Socket s6 = sock6;
        return (s == null ? 0 : s.rxBytes()) + (s6 == null ? 0 : s6.rxBytes());
    }

    public int port() {
        return port;
    }

    @Override
    public void start() {
        running = true;
        sock = stack.udp().bind(0, port);
        sock6 = stack.ipv6().udp().bind(Ipv6Addr.ANY, port);
    }

    @Override
    public void stop() {
        running = false;
        if (sock != null) {
            sock.close();
        }
        if (sock6 != null) {
            sock6.close();
        }
    }

    @Override
    public String summary() {
        return ns + ": udp-sink :" + port + ": " + received() + " received (" + bytes() + " bytes)";
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
