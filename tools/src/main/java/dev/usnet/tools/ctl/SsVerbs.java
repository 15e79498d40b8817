package dev.usnet.tools.ctl;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tcp.Tcp;
import dev.usnet.tcp.TcpInfo;
import dev.usnet.tcp.TcpListener;
import dev.usnet.tcp.TcpSock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code ss [-tinla]}: a namespace's TCP sockets as {@code ss -tin} lists them, state, queues and addresses, and
 * with {@code -i} the detail line (congestion control, wscale, rto, rtt, cwnd, ssthresh, retransmissions, ...).
 * Read on each namespace's own thread, so a connection is seen between two of its events, never in the middle.
 */
final class SsVerbs {
    private SsVerbs() {}

    private static final String USAGE = "ss [-t] [-i] [-n] [-l|-a]";

    static Reply run(ControlPlane.Call c) {
        Args a = c.args(USAGE);
        boolean info = false;
        boolean listening = false;
        boolean all = false;
        while (a.more()) {
            String w = a.next("option");
            if (!w.startsWith("-") || w.length() < 2) {
                throw a.unexpected(w);
            }
            for (char f : w.substring(1).toCharArray()) {
                switch (f) {
                    case 't', 'n' -> { } // TCP is all usnet lists here, and addresses are always numeric.
                    case 'i' -> info = true;
                    case 'l' -> listening = true;
                    case 'a' -> all = true;
                    default -> throw new CtlException("ss: unknown option -" + f + " (" + USAGE + ")");
                }
            }
        }
        List<NetStack> stacks = c.stacksOrAll();
        boolean showListeners = listening || all;
        boolean showConnections = !listening || all;
        List<Map<String, Object>> l = new ArrayList<>();
        for (NetStack s : stacks) {
            l.addAll(c.cp().onLoop(s, () -> sockets(s, showListeners, showConnections)));
        }
        return Reply.of(l, text(l, info, c.ns() == null));
    }

    private static List<Map<String, Object>> sockets(NetStack s, boolean listeners, boolean connections) {
        List<Map<String, Object>> l = new ArrayList<>();
        Tcp tcp = Tcp.installedIn(s);
        if (tcp == null) {
            return l;
        }
        if (listeners) {
            for (TcpListener ls : tcp.listeners()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ns", s.name());
                m.put("state", "LISTEN");
                // As ss shows a listener: Recv-Q the accept queue, Send-Q the backlog.
                m.put("recv_q", ls.acceptQueueLength());
                m.put("send_q", ls.backlog());
                m.put("local", ls.localText());
                m.put("peer", ls.ipv6() ? "[::]:*" : "0.0.0.0:*");
                l.add(m);
            }
        }
        if (connections) {
            for (TcpSock sk : tcp.sockets()) {
                TcpInfo i = sk.info();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ns", s.name());
                m.put("state", i.state().ssName());
                m.put("recv_q", i.recvQueued());
                m.put("send_q", i.sendQueued());
                m.put("local", i.local());
                m.put("peer", i.peer());
                m.put("cc", i.congestionControl());
                m.put("cwnd", i.cwnd());
                m.put("ssthresh", i.ssthresh() < 0x7fff_ffffL ? i.ssthresh() : null);
                m.put("rtt_us", i.rttUs());
                m.put("rto_us", i.rtoUs());
                m.put("unacked", i.unacked());
                m.put("retrans", i.totalRetrans());
                m.put("bytes_acked", i.bytesAcked());
                m.put("bytes_received", i.bytesReceived());
                m.put("detail", i.format());
                l.add(m);
            }
        }
        return l;
    }

    private static String text(List<Map<String, Object>> l, boolean info, boolean perNamespace) {
        if (l.isEmpty()) {
            return "no TCP sockets";
        }
        StringBuilder b = new StringBuilder();
        b.append(perNamespace ? String.format(Locale.ROOT, "%-10s ", "Netns") : "")
                .append(String.format(Locale.ROOT, "%-10s %-6s %-6s %-21s %-21s%n", "State", "Recv-Q", "Send-Q",
                        "Local Address:Port", "Peer Address:Port"));
        for (Map<String, Object> m : l) {
            if (perNamespace) {
                b.append(String.format(Locale.ROOT, "%-10s ", m.get("ns")));
            }
            b.append(String.format(Locale.ROOT, "%-10s %-6s %-6s %-21s %-21s%n", m.get("state"), m.get("recv_q"),
                    m.get("send_q"), m.get("local"), m.get("peer")));
            if (info && m.get("detail") != null) {
                b.append("\t ").append(m.get("detail")).append('\n');
            }
        }
        // Columns are padded as ss pads them; no line ends in padding.
        return b.toString().lines().map(String::stripTrailing).collect(java.util.stream.Collectors.joining("\n"));
    }
}
