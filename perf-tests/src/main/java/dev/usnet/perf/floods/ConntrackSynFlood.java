package dev.usnet.perf.floods;

import dev.usnet.core.conntrack.ConntrackCore;
import dev.usnet.core.conntrack.ConntrackEntry;
import dev.usnet.core.conntrack.ConntrackInvalid;
import dev.usnet.core.conntrack.ConntrackStats;
import dev.usnet.core.conntrack.ConntrackSysctl;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.nat.NatCore;
import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.netfilter.NfConntrack;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfHookOps;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpState;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * conntrack-syn-flood: 10^6 SYNs from spoofed sources (198.18.128.0/17, random ports) at a port a NAT router
 * publishes by DNAT (198.18.41.1:8080 → the server 198.18.40.2:80), at the syn-flood's rate (10^5/s for 10 s), with
 * nf_conntrack_max 65536 (and as many buckets, Linux's default ratio). Every SYN is a new connection to the router's
 * connection tracking: the table fills within the first 0.7 s and stays full (the flood's entries wait in SYN_RECV
 * for 60 s, the server's SYN-ACKs going unanswered); from then on each new SYN evicts an unassured entry near its
 * bucket (early_drop), or is dropped when there is none. The router runs a stateful forward filter (established and
 * related pass; new only to a published port or from the inside) and masquerades what leaves towards the outside.
 *
 * <p>Beside it, the legitimate traffic through the same DNAT: a TCP stream opened before the flood (its entry is
 * ASSURED, so early_drop never picks it), writing 1250 bytes every millisecond (10 Mbit/s), and a new connection
 * every 100 ms that sends 10 KB and closes. The server's listener (backlog 128) answers the flood with SYN cookies.
 */
final class ConntrackSynFlood {
    private static final long MS = 1_000_000L;
    private static final long SEC = 1_000_000_000L;
    static final int CONNTRACK_MAX = 65_536;
    static final int STREAM_CHUNK = 1250;
    static final long STREAM_EVERY = MS;
    static final int SHORT_BYTES = 10_000;

    private ConntrackSynFlood() {
    }

    static Floods.Result run(double scale) {
        try (FloodNet net = new FloodNet()) {
            NetStack rtr = net.ns("rtr");
            NetStack srv = net.ns("srv");
            NetStack cli = net.ns("cli");
            rtr.knobs().set("net.ipv4.ip_forward", "1");
            rtr.knobs().set("net.netfilter.nf_conntrack_max", Integer.toString(CONNTRACK_MAX));
            rtr.knobs().set("net.netfilter.nf_conntrack_buckets", Integer.toString(CONNTRACK_MAX));
            VethEnd[] inside = net.link(srv, "eth0", "198.18.40.2/24", rtr, "rin", "198.18.40.1/24");
            VethEnd[] outside = net.link(cli, "eth0", "198.18.41.2/24", rtr, "rout", "198.18.41.1/24");
            VethEnd x = net.attacker(rtr, "rx", "198.18.42.1/24");
            VethEnd rx = (VethEnd) rtr.device("rx");
            FloodNet.route(srv, "0.0.0.0/0", "198.18.40.1", inside[0]);
            FloodNet.route(rtr, "198.18.128.0/17", "198.18.42.2", rx);
            rtr.neigh().addPermanent(rx, Ipv4Addr.parse("198.18.42.2"), x.mac());

            int published = Ipv4Addr.parse("198.18.41.1");
            int server = Ipv4Addr.parse("198.18.40.2");
            NatCore nat = NatCore.of(rtr.ipv4());
            NfNatRange toServer = new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_SPECIFIED, server, server, 80,
                    80);
            nat.registerChain(NfHook.PRE_ROUTING, NfIpPriority.NAT_DST, (p, st) -> {
                ByteBuf b = p.buf();
                int ip = p.network();
                int l4 = ip + (b.getUnsignedByte(ip) & 0xf) * 4;
                if (b.getUnsignedByte(ip + 9) == 6 && b.getInt(ip + 16) == published
                        && b.getUnsignedShort(l4 + 2) == 8080) {
                    return nat.setup(p, toServer, false);
                }
                return NfVerdict.ACCEPT;
            });
            VethEnd rout = outside[1];
            nat.registerChain(NfHook.POST_ROUTING, NfIpPriority.NAT_SRC,
                    (p, st) -> st.out() == rout ? nat.masquerade(p, NfNatRange.NONE, st.out()) : NfVerdict.ACCEPT);
            VethEnd rin = inside[1];
            NfHookOps filter = (p, st) -> {
                Object e = p.nfct();
                if (e == null) {
                    return st.drop(DropReason.NETFILTER_DROP);
                }
                if (p.ctinfo() != IpConntrackInfo.NEW || st.in() == rin
                        || (((NfConntrack) e).status() & IpConntrackStatus.DST_NAT) != 0) {
                    return NfVerdict.ACCEPT;
                }
                return st.drop(DropReason.NETFILTER_DROP);
            };
            ConntrackCore ct = ConntrackCore.of(rtr.ipv4());
            ct.get();
            rtr.ipv4().netfilter().hooks().register(NfHook.FORWARD, NfIpPriority.FILTER, filter);

            Tcp stcp = Tcp.of(srv);
            // Bytes the server read: [0] from the stream (the first connection it accepts), [1] from the others.
            long[] received = {0, 0};
            int[] accepted = {0};
            TcpListener l = stcp.listen(0, 80, 128, c -> {
                int which = accepted[0]++ == 0 ? 0 : 1;
                c.setCallbacks(new TcpSock.Callbacks() {
                    @Override
                    public void readable(TcpSock s) {
                        int k;
                        while ((k = s.skip(1 << 20)) > 0) {
                            received[which] += k;
                        }
                        if (k < 0) {
                            s.close();
                        }
                    }
                });
            });

            // The long-lived stream, established before the flood.
            Tcp ctcp = Tcp.of(cli);
            ByteBuf chunk = Unpooled.wrappedBuffer(new byte[Math.max(STREAM_CHUNK, SHORT_BYTES)]);
            long[] streamWritten = {0};
            long[] streamWrittenInFlood = {0};
            boolean[] streaming = {true};
            boolean[] flooding = {false};
            TcpError[] streamError = {null};
            TcpSock stream = ctcp.connect(published, 8080, new TcpSock.Callbacks() {
                @Override
                public void closed(TcpSock s, TcpError error) {
                    streamError[0] = error;
                }
            });
            Runnable[] writer = new Runnable[1];
            writer[0] = () -> {
                if (!streaming[0]) {
                    return;
                }
                if (stream.state() == TcpState.ESTABLISHED) {
                    int k = stream.write(chunk, 0, STREAM_CHUNK);
                    if (k > 0) {
                        streamWritten[0] += k;
                        if (flooding[0]) {
                            streamWrittenInFlood[0] += k;
                        }
                    }
                }
                cli.schedule(writer[0], STREAM_EVERY);
            };
            cli.schedule(writer[0], 0);
            net.vs.runFor(500 * MS);
            if (stream.state() != TcpState.ESTABLISHED) {
                throw new IllegalStateException("conntrack-syn-flood: the stream through the DNAT did not connect: "
                        + stream.state() + " drops " + net.drops());
            }
            ConntrackEntry streamEntry = ct.table().entries().stream()
                    .filter(e -> e.hasStatus(IpConntrackStatus.DST_NAT)).findFirst().orElseThrow();
            boolean assuredBefore = streamEntry.hasStatus(IpConntrackStatus.ASSURED);
            long receivedBefore = received[0];

            // New short connections through the DNAT during the flood: [start, connected-at or -1].
            List<long[]> conns = new ArrayList<>();
            boolean[] opening = {true};
            Runnable[] opener = new Runnable[1];
            opener[0] = () -> {
                if (!opening[0]) {
                    return;
                }
                long[] c = {cli.now(), -1};
                conns.add(c);
                ctcp.connect(published, 8080, new TcpSock.Callbacks() {
                    @Override
                    public void connected(TcpSock s) {
                        c[1] = cli.now();
                        s.write(chunk, 0, SHORT_BYTES);
                        s.shutdownOutput();
                    }
                });
                cli.schedule(opener[0], 100 * MS);
            };

            HeapProbe heap = new HeapProbe();
            cli.schedule(opener[0], 0);
            flooding[0] = true;
            long floodStart = net.now();
            long n = (long) (1_000_000 * scale);
            long duration = 10 * SEC;
            SplittableRandom rnd = new SplittableRandom(6);
            ByteBuf f = Unpooled.buffer(128);
            long rxMac = rx.mac();
            int[] tablePeak = {0};
            long[] fullAt = {-1};
            Floods.drive(net, n, duration, heap, i -> {
                int src = Ipv4Addr.parse("198.18.128.0") + rnd.nextInt(1 << 15);
                int len = Floods.synFrame(f, x.mac(), rxMac, src, published, 1024 + rnd.nextInt(60000), 8080,
                        rnd.nextInt());
                FloodNet.inject(x, f, len);
                int count = ct.table().count();
                if (count > tablePeak[0]) {
                    tablePeak[0] = count;
                }
                if (fullAt[0] < 0 && count >= CONNTRACK_MAX) {
                    fullAt[0] = net.now() - floodStart;
                }
            });
            flooding[0] = false;
            long floodNanos = net.now() - floodStart;
            long receivedInFlood = received[0] - receivedBefore;
            int tableAtEnd = ct.table().count();
            opening[0] = false;
            net.vs.runFor(2 * SEC);
            streaming[0] = false;
            net.vs.runFor(2 * SEC);

            int complete = 0;
            long worstHandshake = 0;
            for (long[] c : conns) {
                if (c[1] >= 0) {
                    complete++;
                    worstHandshake = Math.max(worstHandshake, c[1] - c[0]);
                }
            }
            boolean streamEntryKept = ct.table().entries().contains(streamEntry);
            double offeredMbit = STREAM_CHUNK * 8.0 / (STREAM_EVERY / 1e9) / 1e6;
            double inFloodMbit = receivedInFlood * 8.0 / (floodNanos / 1e9) / 1e6;
            long streamReceived = received[0];
            Map<String, Object> legit = new LinkedHashMap<>();
            legit.put("kind", "a TCP stream through the DNAT opened before the flood, 1250 B every 1 ms (10 Mbit/s);"
                    + " and a new connection through the DNAT every 100 ms, 10 KB each, then close");
            legit.put("stream_state_end", stream.state().name());
            legit.put("stream_error", String.valueOf(streamError[0]));
            legit.put("stream_entry_assured_before", assuredBefore);
            legit.put("stream_entry_kept", streamEntryKept);
            legit.put("stream_offered_mbit_s", offeredMbit);
            legit.put("stream_received_in_flood_mbit_s", inFloodMbit);
            legit.put("stream_bytes_written", streamWritten[0]);
            legit.put("stream_bytes_written_in_flood", streamWrittenInFlood[0]);
            legit.put("stream_bytes_received", streamReceived);
            legit.put("new_connections", conns.size());
            legit.put("new_handshakes_completed", complete);
            legit.put("new_worst_handshake_ms", worstHandshake / 1e6);
            legit.put("new_bytes_received", received[1]);
            legit.put("new_bytes_expected", (long) conns.size() * SHORT_BYTES);
            legit.put("accepted_by_server", accepted[0]);
            boolean streamOk = stream.state() == TcpState.ESTABLISHED && streamError[0] == null && streamEntryKept
                    && inFloodMbit >= 0.99 * offeredMbit && streamReceived == streamWritten[0];
            boolean shortOk = !conns.isEmpty() && complete == conns.size() && worstHandshake < SEC
                    && received[1] == (long) conns.size() * SHORT_BYTES;
            legit.put("stream_ok", streamOk);
            legit.put("new_connections_ok", shortOk);

            ConntrackStats s = ct.stats();
            Map<String, Object> state = new LinkedHashMap<>();
            state.put("syns", n);
            state.put("offered_pps", (long) (n / (duration / 1e9)));
            state.put("nf_conntrack_max", rtr.knobs().get(ConntrackSysctl.MAX));
            state.put("nf_conntrack_buckets", rtr.knobs().get(ConntrackSysctl.BUCKETS));
            state.put("table_peak", tablePeak[0]);
            state.put("table_full_after_ms", fullAt[0] < 0 ? -1.0 : fullAt[0] / 1e6);
            state.put("table_at_flood_end", tableAtEnd);
            state.put("early_drop", s.earlyDrop());
            state.put("drop", s.drop());
            state.put("insert_failed", s.insertFailed());
            state.put("invalid", s.invalid());
            for (ConntrackInvalid why : ConntrackInvalid.values()) {
                if (s.byReason(why) > 0) {
                    state.put("invalid_" + why.name(), s.byReason(why));
                }
            }
            state.put("syn_queue", l.synQueueLength());
            state.put("server_sockets", stcp.sockets().size());
            for (Mib m : new Mib[] {Mib.TcpExtSyncookiesSent, Mib.TcpExtTCPReqQFullDoCookies,
                    Mib.TcpExtListenOverflows, Mib.TcpExtListenDrops}) {
                state.put(m.name(), srv.mib().get(m));
            }
            state.put("rtr_IpForwDatagrams", rtr.mib().get(Mib.IpForwDatagrams));
            state.put("rtr_cpu_model_busy_ms", rtr.cpu().modelBusyNanos() / 1e6);
            state.put("heap_bytes_per_entry_at_peak", heap.peak() / Math.max(1, tablePeak[0]));
            return new Floods.Result("conntrack-syn-flood", "virtual", heap.peak(), heap.samples(), net.drops(),
                    streamOk && shortOk && tablePeak[0] <= CONNTRACK_MAX,
                    "the stream stays established, its entry is never evicted, it delivers >= 99% of its offered "
                            + "10 Mbit/s during the flood and every byte by the end; every new connection through the"
                            + " DNAT completes its handshake in under 1 s; the table never exceeds nf_conntrack_max",
                    legit, state);
        }
    }
}
