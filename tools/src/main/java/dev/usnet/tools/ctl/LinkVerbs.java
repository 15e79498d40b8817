package dev.usnet.tools.ctl;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DeviceStats;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tools.topology.LinkKind;
import dev.usnet.tools.topology.LinkKinds;
import dev.usnet.tools.topology.LiveAdd;
import dev.usnet.tools.topology.LiveLinks;
import dev.usnet.tools.topology.TopologyFile;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code link show|set|add|del}: devices as {@code ip -s -d link} shows and changes them. */
final class LinkVerbs {
    /** The verb's usage; {@code link add} lists the kinds it makes. */
    private static final String USAGE = "link show [DEV] | link set DEV ... | link add NAME type "
            + String.join("|", LinkKinds.liveAddable()) + " ... | link del DEV";

    private LinkVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args(USAGE);
        String sub = a.more() ? a.next("subcommand") : "show";
        return switch (sub) {
            case "show", "list", "ls" -> show(c, a);
            case "set" -> set(c, a);
            case "add" -> add(c, a);
            case "del", "delete" -> del(c, a);
            default -> throw a.unexpected(sub);
        };
    }

    private static Reply show(ControlPlane.Call c, Args a) {
        a.accept("dev");
        String dev = a.more() ? a.next("device") : null;
        a.end();
        NetStack s = c.stack();
        List<Map<String, Object>> links = c.cp().onLoop(s, () -> {
            List<Map<String, Object>> l = new ArrayList<>();
            if (dev != null) {
                l.add(describe(c.cp(), ControlPlane.device(s, dev)));
            } else {
                for (Device d : s.devices()) {
                    l.add(describe(c.cp(), d));
                }
            }
            return l;
        });
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : links) {
            text(sb, m);
        }
        return Reply.of(links, sb.toString().stripTrailing());
    }

    /** One device as {@code ip -s -d -j link} keys it. On the namespace's thread. */
    static Map<String, Object> describe(ControlPlane cp, Device d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ifindex", d.ifindex());
        m.put("ifname", d.name());
        m.put("kind", d.kind());
        m.put("flags", flags(d));
        m.put("mtu", d.mtu());
        m.put("operstate", operstate(d));
        m.put("address", MacAddr.format(d.mac()));
        m.put("master", d.master() == null ? null : d.master().name());
        if (d instanceof VethEnd v) {
            VethEnd p = v.peer();
            NetStack ps = p == null ? null : p.stack();
            m.put("peer", ps == null ? null : ps.name() + "/" + p.name());
        }
        Map<String, Object> off = new LinkedHashMap<>();
        off.put("tx_checksumming", d.txChecksumOffload());
        off.put("gso", d.gsoOffload());
        off.put("gro", d.groEnabled());
        off.put("needed_headroom", d.neededHeadroom());
        m.put("offloads", off);
        m.put("netem", d.netemParams().isNone() ? null : d.netemParams().format());
        DeviceStats st = d.stats();
        Map<String, Object> rx = new LinkedHashMap<>();
        rx.put("bytes", st.rxBytes);
        rx.put("packets", st.rxPackets);
        rx.put("errors", st.rxErrors);
        rx.put("dropped", st.rxDropped);
        rx.put("multicast", st.rxMulticast);
        Map<String, Object> tx = new LinkedHashMap<>();
        tx.put("bytes", st.txBytes);
        tx.put("packets", st.txPackets);
        tx.put("errors", st.txErrors);
        tx.put("dropped", st.txDropped);
        m.put("stats64", Map.of("rx", rx, "tx", tx));
        return m;
    }

    static List<String> flags(Device d) {
        List<String> f = new ArrayList<>();
        if (d instanceof Loopback) {
            f.add("LOOPBACK");
        } else {
            if (d.isUp() && !d.hasCarrier()) {
                f.add("NO-CARRIER");
            }
            f.add("BROADCAST");
            f.add("MULTICAST");
        }
        if (d.isPromisc()) {
            f.add("PROMISC");
        }
        if (d.isUp()) {
            f.add("UP");
            if (d.hasCarrier()) {
                f.add("LOWER_UP");
            }
        }
        return f;
    }

    static String operstate(Device d) {
        if (d instanceof Loopback) {
            return "UNKNOWN";
        }
        return !d.isUp() ? "DOWN" : d.hasCarrier() ? "UP" : "LOWERLAYERDOWN";
    }

    @SuppressWarnings("unchecked")
    private static void text(StringBuilder sb, Map<String, Object> m) {
        sb.append(m.get("ifindex")).append(": ").append(m.get("ifname"));
        if (m.get("peer") != null) {
            sb.append("@").append(m.get("peer"));
        }
        sb.append(": <").append(String.join(",", (List<String>) m.get("flags"))).append("> mtu ").append(m.get("mtu"));
        if (m.get("master") != null) {
            sb.append(" master ").append(m.get("master"));
        }
        sb.append(" state ").append(m.get("operstate")).append('\n');
        Map<String, Object> off = (Map<String, Object>) m.get("offloads");
        sb.append("    link/").append(m.get("kind").equals("loopback") ? "loopback " : "ether ").append(m.get("address"))
                .append("  ").append(m.get("kind")).append(" tx-checksumming ").append(onOff(off.get("tx_checksumming")))
                .append(" gso ").append(onOff(off.get("gso"))).append(" gro ").append(onOff(off.get("gro")));
        if (!off.get("needed_headroom").equals(0)) {
            sb.append(" needed_headroom ").append(off.get("needed_headroom"));
        }
        sb.append('\n');
        if (m.get("netem") != null) {
            sb.append("    qdisc netem ").append(m.get("netem")).append('\n');
        }
        Map<String, Map<String, Object>> st = (Map<String, Map<String, Object>>) m.get("stats64");
        Map<String, Object> rx = st.get("rx");
        Map<String, Object> tx = st.get("tx");
        sb.append(String.format("    RX: %12s %10s %7s %8s %8s%n", "bytes", "packets", "errors", "dropped", "mcast"));
        sb.append(String.format("        %12s %10s %7s %8s %8s%n", rx.get("bytes"), rx.get("packets"), rx.get("errors"),
                rx.get("dropped"), rx.get("multicast")));
        sb.append(String.format("    TX: %12s %10s %7s %8s%n", "bytes", "packets", "errors", "dropped"));
        sb.append(String.format("        %12s %10s %7s %8s%n", tx.get("bytes"), tx.get("packets"), tx.get("errors"),
                tx.get("dropped")));
    }

    private static String onOff(Object b) {
        return Boolean.TRUE.equals(b) ? "on" : "off";
    }

    /** {@code link set DEV [up|down] [mtu N] [address MAC] [master BR|nomaster]}: all checked, then applied in that order. */
    private static Reply set(ControlPlane.Call c, Args a) {
        a.accept("dev");
        String name = a.next("device");
        Boolean up = null;
        Integer mtu = null;
        Long mac = null;
        String master = null;
        boolean nomaster = false;
        if (!a.more()) {
            throw new CtlException("link set " + name + ": nothing to set (up, down, mtu N, address MAC, master BRIDGE, nomaster)");
        }
        while (a.more()) {
            String w = a.next("setting");
            switch (w) {
                case "up" -> up = true;
                case "down" -> up = false;
                case "mtu" -> mtu = Args.integer(a.next("MTU"), "mtu", 68, 65535);
                case "address" -> {
                    String t = a.next("MAC");
                    mac = Args.mac(t);
                    if (!MacAddr.isValidUnicast(mac)) {
                        throw new CtlException("address " + t + " is not a unicast MAC address");
                    }
                }
                case "master" -> master = a.next("bridge");
                case "nomaster" -> nomaster = true;
                default -> throw a.unexpected(w);
            }
        }
        if (master != null && nomaster) {
            throw new CtlException("link set " + name + ": master and nomaster together");
        }
        NetStack s = c.stack();
        Boolean fUp = up;
        Integer fMtu = mtu;
        Long fMac = mac;
        String fMaster = master;
        boolean fNomaster = nomaster;
        return c.cp().change(s, () -> {
            Device d = ControlPlane.device(s, name);
            Bridge br = null;
            if (fMaster != null) {
                Device m = ControlPlane.device(s, fMaster);
                if (!(m instanceof Bridge b)) {
                    throw new CtlException("master " + fMaster + " is a " + m.kind() + ", not a bridge");
                }
                if (d == m) {
                    throw new CtlException(name + " cannot be its own master");
                }
                if (d instanceof Loopback || d instanceof Bridge) {
                    throw new CtlException(name + " is a " + d.kind() + "; only veth, tap and pcap devices can be bridge ports");
                }
                if (d.master() != null && d.master() != m) {
                    throw new CtlException(name + " is already a port of " + d.master().name() + " (nomaster first)");
                }
                br = b;
            }
            if (d instanceof Loopback && fMac != null) {
                throw new CtlException("lo has no MAC address to set");
            }
            List<String> did = new ArrayList<>();
            if (fMac != null && fMac != d.mac()) {
                if (d.master() != null) {
                    throw new CtlException(name + " is a bridge port: change its address after nomaster");
                }
                d.setMac(fMac);
                did.add("address " + MacAddr.format(fMac));
            }
            if (fMtu != null) {
                d.setMtu(fMtu);
                did.add("mtu " + fMtu);
            }
            if (br != null && d.master() == null) {
                br.addPort(d);
                did.add("master " + br.name());
            }
            if (fNomaster && d.master() instanceof Bridge b) {
                b.removePort(d);
                did.add("nomaster (was " + b.name() + ")");
            }
            if (fUp != null && fUp != d.isUp()) {
                d.setUp(fUp);
                did.add(fUp ? "up" : "down");
            }
            return Reply.done(s.name() + "/" + name + ": " + (did.isEmpty() ? "unchanged" : String.join(", ", did)));
        });
    }

    /**
     * {@code link add NAME [mtu N] [address MAC] type KIND [KIND's words]}, in any order, as {@code ip link add}: the
     * words every kind takes are read here, the rest by the kind (its {@link LiveAdd}), which then makes the device.
     * The kind is found by name in {@link LinkKinds}; one that is not made live is refused with its reason.
     */
    private static Reply add(ControlPlane.Call c, Args a) {
        a.accept("name");
        String name = a.next("device name");
        checkName(name);
        List<String> rest = new ArrayList<>();
        while (a.more()) {
            rest.add(a.next("setting"));
        }
        String type = typeOf(rest);
        if (type == null) {
            List<String> forms = new ArrayList<>();
            for (LinkKind<?> k : LinkKinds.all()) {
                if (k.liveAdd() instanceof LiveAdd.Addable ad) {
                    forms.add("'type " + ad.usage() + "'");
                }
            }
            throw new CtlException("link add " + name + ": missing " + LinkKinds.orList(forms));
        }
        LinkKind<?> kind = LinkKinds.byName(type);
        if (kind == null) {
            throw new CtlException(LinkKinds.unknownKind(name, type));
        }
        LiveAdd.Addable addable = switch (kind.liveAdd()) {
            case LiveAdd.Refused r -> throw new CtlException(LinkKinds.liveAddRefusal(name, kind, r));
            case LiveAdd.Addable ad -> ad;
        };
        LiveAdd.Request request = addable.request().get();
        LiveLinks live = new CtlLiveLinks(c.cp());
        Args r = new Args(rest, 0, USAGE);
        LiveAdd.Words words = new LiveAdd.Words() {
            @Override
            public String next(String what) {
                return r.next(what);
            }

            @Override
            public boolean accept(String word) {
                return r.accept(word);
            }
        };
        Integer mtu = null;
        Long mac = null;
        while (r.more()) {
            String w = r.next("setting");
            switch (w) {
                case "type" -> {
                    String again = r.next("type");
                    if (!again.equals(type)) {
                        throw new CtlException("link add " + name + ": two types, " + type + " and " + again);
                    }
                }
                case "mtu" -> mtu = Args.integer(r.next("MTU"), "mtu", 68, 65535);
                case "address" -> mac = Args.mac(r.next("MAC"));
                default -> {
                    if (!request.parse(w, words, live)) {
                        throw notOf(name, w, r);
                    }
                }
            }
        }
        return Reply.done(request.add(live, new LiveAdd.Target(c.stack(), name, mtu, mac)));
    }

    /**
     * The word after the first {@code type} that is not the value of {@code mtu} or {@code address}, or null when
     * there is none; a {@code type} at the end is missing its word.
     */
    private static String typeOf(List<String> words) {
        for (int i = 0; i < words.size(); i++) {
            switch (words.get(i)) {
                case "mtu", "address" -> i++;
                case "type" -> {
                    return new Args(words, i + 1, USAGE).next("type (" + LinkKinds.orList(LinkKinds.liveAddable()) + ")");
                }
                default -> {
                }
            }
        }
        return null;
    }

    /** A word the request's kind does not take: another kind's (named), or no kind's. */
    private static CtlException notOf(String name, String w, Args r) {
        for (LinkKind<?> k : LinkKinds.all()) {
            if (k.liveAdd() instanceof LiveAdd.Addable ad && ad.words().contains(w)) {
                List<String> ws = ad.words();
                String listing = ws.size() == 1 ? ws.getFirst()
                        : String.join(", ", ws.subList(0, ws.size() - 1)) + " and " + ws.getLast();
                return new CtlException("link add " + name + ": " + listing + (ws.size() == 1 ? " is" : " are")
                        + " for type " + k.name());
            }
        }
        return r.unexpected(w);
    }

    static void checkName(String n) {
        if (!TopologyFile.validIfname(n)) {
            throw new CtlException("not a device name: \"" + n + "\" (1..15 printable characters, no '/', ':' or spaces)");
        }
    }

    static void requireFree(NetStack s, String name) {
        if (s.device(name) != null) {
            throw new CtlException("device " + name + " already exists in namespace " + s.name() + " (RTNETLINK: File exists)");
        }
    }

    private static Reply del(ControlPlane.Call c, Args a) {
        a.accept("dev");
        String name = a.next("device");
        a.end();
        NetStack s = c.stack();
        KernelTaps taps = c.cp().host().kernelTaps();
        return c.cp().exclusive(() -> {
            Device[] gone = new Device[1];
            String done = c.cp().onLoop(s, () -> {
                Device d = ControlPlane.device(s, name);
                if (d instanceof Loopback) {
                    throw new CtlException("lo cannot be deleted");
                }
                String extra = "";
                if (d instanceof VethEnd v && v.peer() != null && v.peer().stack() != null) {
                    extra = " with its peer " + v.peer().stack().name() + "/" + v.peer().name();
                }
                c.cp().captures().forget(d);
                d.delete();
                gone[0] = d;
                return "deleted " + d.kind() + " " + s.name() + "/" + name + extra;
            });
            // A TAP's kernel end went with its fd; the kernel namespace made for it goes here, off the namespace's
            // thread (ip netns del needs the capabilities that thread gave up).
            String also = taps.owns(gone[0]) ? taps.deleted(gone[0]) : null;
            return Reply.done(done + (also == null ? "" : " and " + also));
        });
    }
}
