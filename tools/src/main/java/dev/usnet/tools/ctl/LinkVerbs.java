package dev.usnet.tools.ctl;

import dev.usnet.core.bridge.Bridge;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DeviceStats;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.topology.TopologyFile;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code link show|set|add|del}: devices as {@code ip -s -d link} shows and changes them. */
final class LinkVerbs {
    private LinkVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("link show [DEV] | link set DEV ... | link add NAME type veth|bridge|tap ... | link del DEV");
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

    /** {@code link add NAME type veth peer [name] [NS/]PEER} or {@code link add NAME type bridge}. */
    private static Reply add(ControlPlane.Call c, Args a) {
        a.accept("name");
        String name = a.next("device name");
        checkName(name);
        Integer mtu = null;
        Long mac = null;
        String type = null;
        String peer = null;
        String kernelNs = null;
        String kernelName = null;
        boolean vnetHdr = false;
        while (a.more()) {
            String w = a.next("setting");
            switch (w) {
                case "type" -> type = a.next("type (veth, bridge or tap)");
                case "kernel-netns" -> kernelNs = a.next("kernel namespace (ip netns name)");
                case "kernel-name" -> kernelName = a.next("kernel interface name");
                case "vnet_hdr" -> vnetHdr = true;
                case "mtu" -> mtu = Args.integer(a.next("MTU"), "mtu", 68, 65535);
                case "address" -> mac = Args.mac(a.next("MAC"));
                case "peer" -> {
                    a.accept("name");
                    peer = a.next("peer [NS/]NAME");
                }
                default -> throw a.unexpected(w);
            }
        }
        if (type == null) {
            throw new CtlException("link add " + name + ": missing 'type veth peer [NS/]NAME', 'type bridge' or"
                    + " 'type tap kernel-netns KNS'");
        }
        if (!type.equals("tap") && (kernelNs != null || kernelName != null || vnetHdr)) {
            throw new CtlException("link add " + name + ": kernel-netns, kernel-name and vnet_hdr are for type tap");
        }
        NetStack s = c.stack();
        NamespaceRegistry reg = c.cp().topology().registry();
        Integer fMtu = mtu;
        Long fMac = mac;
        switch (type) {
            case "bridge" -> {
                if (peer != null) {
                    throw new CtlException("a bridge has no peer");
                }
                return c.cp().change(s, () -> {
                    requireFree(s, name);
                    Bridge b = new Bridge(name, fMac != null ? fMac : NamespaceRegistry.macFor(s.name() + "/" + name));
                    s.register(b);
                    if (fMtu != null) {
                        b.setMtu(fMtu);
                    }
                    return Reply.done("added bridge " + s.name() + "/" + name + " (down)");
                });
            }
            case "veth" -> {
                if (peer == null) {
                    throw new CtlException("link add " + name + " type veth: missing 'peer [NS/]NAME'");
                }
                int slash = peer.indexOf('/');
                String peerNsName = slash < 0 ? s.name() : peer.substring(0, slash);
                String peerName = slash < 0 ? peer : peer.substring(slash + 1);
                checkName(peerName);
                NetStack ps = c.cp().stack(peerNsName);
                if (ps == s && peerName.equals(name)) {
                    throw new CtlException("link add " + name + ": a veth's two ends need two names in one namespace");
                }
                return c.cp().change(s, () -> {
                    requireFree(s, name);
                    requireFree(ps, peerName);
                    NetNamespace nsA = reg.get(s.name());
                    NetNamespace nsB = reg.get(ps.name());
                    VethEnd[] ends = reg.createVeth(nsA, name, nsB, peerName);
                    if (fMac != null) {
                        ends[0].setMac(fMac);
                    }
                    if (fMtu != null) {
                        ends[0].setMtu(fMtu);
                        ends[1].setMtu(fMtu);
                    }
                    return Reply.done("added veth " + s.name() + "/" + name + " <-> " + ps.name() + "/" + peerName + " (both down)");
                });
            }
            case "tap" -> {
                if (peer != null) {
                    throw new CtlException("a tap has no peer: its other end is kernel-name in kernel-netns");
                }
                return addTap(c, s, name, kernelNs, kernelName == null ? name : kernelName, vnetHdr, fMtu, fMac);
            }
            default -> throw new CtlException("link add " + name + ": type '" + type + "' is not veth, bridge or tap");
        }
    }

    /**
     * {@code link add NAME type tap kernel-netns KNS [kernel-name IFNAME] [vnet_hdr] [mtu N] [address MAC]}: a TAP as a
     * topology file's {@code kind: tap} makes it, its kernel end IFNAME (default NAME) in kernel namespace KNS, made
     * when absent. The kernel side comes up (carrier follows the usnet side, which comes down, as every new link).
     */
    private static Reply addTap(ControlPlane.Call c, NetStack s, String name, String kernelNs, String ifname,
                                boolean vnetHdr, Integer mtu, Long mac) {
        if (kernelNs == null) {
            throw new CtlException("link add " + name + " type tap: missing 'kernel-netns KNS' (the kernel namespace"
                    + " its kernel end goes into; made when absent)");
        }
        if (!NsVerbs.NAME.matcher(kernelNs).matches() || kernelNs.equals(".") || kernelNs.equals("..")) {
            throw new CtlException("invalid kernel namespace name '" + kernelNs + "' (letters, digits, '_', '.', '-';"
                    + " at most 64)");
        }
        checkName(ifname);
        KernelTaps taps = c.cp().host().kernelTaps();
        return c.cp().exclusive(() -> {
            c.cp().onLoop(s, () -> {
                requireFree(s, name);
                return null;
            });
            long m = mac != null ? mac : NamespaceRegistry.macFor(s.name() + "/" + name);
            KernelTaps.Opened o = taps.open(new KernelTaps.Request(name, ifname, kernelNs, vnetHdr, m), s);
            Device d = o.device();
            try {
                c.cp().onLoop(s, () -> {
                    requireFree(s, name);
                    s.register(d);
                    if (mtu != null) {
                        d.setMtu(mtu);
                    }
                    return null;
                });
            } catch (RuntimeException e) {
                d.delete();
                taps.deleted(d);
                throw e;
            }
            return Reply.done("added tap " + s.name() + "/" + name + " <-> kernel " + ifname + " in kernel namespace "
                    + kernelNs + (o.namespaceCreated() ? " (created)" : "") + "; usnet side down, kernel side up");
        });
    }

    private static void checkName(String n) {
        if (!TopologyFile.validIfname(n)) {
            throw new CtlException("not a device name: \"" + n + "\" (1..15 printable characters, no '/', ':' or spaces)");
        }
    }

    private static void requireFree(NetStack s, String name) {
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
