package dev.usnet.tools.app;

import dev.usnet.core.ipv4.UdpSocket;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tcp.app.Outcome;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.Where;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/**
 * {@code kind: udp-echo}: the echo service of RFC 862 over UDP. Every datagram arriving on {@code port} goes back to
 * the address and port it came from with the same payload, so a {@code udp-send} has traffic flowing both ways and
 * the return path is exercised as much as the forward one. Starts with the sinks, before the senders.
 */
public final class UdpEcho extends DeclaredAppKind<UdpEcho.Entry> {
    private static final Set<String> KEYS = Set.of("kind", "port");

    /** An entry: the port it answers on. */
    public record Entry(int port, Where where) implements TopologySpec.App {
        @Override
        public String kind() {
            return "udp-echo";
        }

        @Override
        public int udpPort() {
            return port;
        }
    }

    public UdpEcho() {
        super("udp-echo", KEYS, Entry.class, Order.RECEIVER);
    }

    @Override
    public Entry read(YamlMap m) {
        m.allow(KEYS);
        Long port = m.require("port") ? m.integer("port", 1, 65535) : null;
        return port == null ? null : new Entry(port.intValue(), m.where());
    }

    @Override
    public App create(AppContext c, String ns, Entry spec) {
        return new Server(ns, c.topology().stack(ns), spec.port());
    }

    /** The running service: a socket on the port whose receiver sends each datagram back. */
    public static final class Server extends App {
        private final int port;
        private UdpSocket sock;
        private volatile long received;
        private volatile long echoed;
        private volatile long echoedBytes;
        /** Datagrams that could not go back: no route to their source. */
        private volatile long noRoute;

        Server(String ns, NetStack stack, int port) {
            super(ns, stack);
            this.port = port;
        }

        @Override
        public String kind() {
            return "udp-echo";
        }

        /** Datagrams that arrived. */
        public long received() {
            return received;
        }

        /** Datagrams sent back. */
        public long echoed() {
            return echoed;
        }

        @Override
        public void start() {
            running = true;
            sock = stack.udp().bind(0, port);
            sock.setReceiver(this::echo);
        }

        /** On the namespace thread, as the datagram arrives: the same bytes back to where they came from. */
        @SuppressWarnings("NonAtomicOperationOnVolatileField")
        private void echo(UdpSocket s, int srcAddr, int srcPort, io.netty.buffer.ByteBuf payload, int off, int len) {
            received++;
            if (s.sendTo(srcAddr, srcPort, payload, off, len)) {
                echoed++;
                echoedBytes += len;
            } else {
                noRoute++;
            }
        }

        @Override
        public void stop() {
            running = false;
            if (sock != null) {
                sock.close();
            }
        }

        @Override
        public String peer() {
            return ":" + port;
        }

        /** Datagrams echoed and their payload bytes. */
        @Override
        public AppCounters counters() {
            return AppCounters.of(echoedBytes, echoed);
        }

        @Override
        public String summary() {
            long n = noRoute;
            return ns + ": udp-echo :" + port + ": " + received + " received, " + echoed + " echoed"
                    + (n == 0 ? "" : ", " + n + " without a route back");
        }

        /** Failed when nothing arrived, or nothing could be sent back. */
        @Override
        public Outcome outcome() {
            long r = received;
            if (r == 0) {
                return Outcome.failed("nothing received on port " + port);
            }
            return echoed == 0 ? Outcome.failed("no route back: 0 of " + r + " datagrams echoed") : Outcome.OK;
        }

        @Override
        public String label() {
            return ns + ": udp-echo :" + port;
        }
    }
}
