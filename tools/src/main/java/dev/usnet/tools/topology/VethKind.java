package dev.usnet.tools.topology;

import java.util.List;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.core.device.VethEnd;
import dev.usnet.core.knob.NearestNames;
import dev.usnet.core.stack.NetStack;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Link;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.ArrayList;
import java.util.Set;

/**
 * {@code kind: veth}: a pair, declared once with its other end under {@code peer:} ({@code ip link add NAME type veth
 * peer name PEER netns PEERNS}); either end may be a port of a bridge of its namespace ({@code master:}).
 */
final class VethKind implements LinkKind<Veth> {
    /** The keys of the {@code peer:} mapping. */
    static final Set<String> PEER_KEYS = Set.of("namespace", "name", "mac", "mtu", "up", "addresses", "tx_checksumming",
            "gso", "gro", "netem", "needed_headroom", "master");

    @Override
    public String name() {
        return "veth";
    }

    @Override
    public Set<String> keys() {
        return Set.of("peer", "master");
    }

    @Override
    public boolean reads(DeviceSpec d) {
        return d instanceof Veth;
    }

    @Override
    public Veth read(Entry e) {
        return readPair(e);
    }

    /** The pair of entry {@code e}; its peer end joins the peer namespace's devices. Also read by {@code replay}. */
    static Veth readPair(Entry e) {
        YamlMap m = e.m();
        Link link = e.link();
        String ns = e.ns();
        if (!m.require("peer")) {
            return null;
        }
        YamlMap p = m.map("peer");
        if (p == null) {
            return null;
        }
        p.allow(PEER_KEYS);
        String peerNs = ns;
        if (p.has("namespace")) {
            peerNs = p.string("namespace");
            if (peerNs == null) {
                return null;
            }
        }
        Link peer = LinkSettings.read(p, null);
        if (peer == null) {
            e.file().problems().dropped(peerNs, TopologyFile.rawName(p.node("name")));
            return null;
        }
        if (m.has("master")) {
            String b = m.string("master");
            if (b != null) {
                e.file().addMaster(ns, link.name(), b.trim(), m.where("master"));
            }
        }
        if (p.has("master")) {
            String b = p.string("master");
            if (b != null) {
                e.file().addMaster(peerNs, peer.name(), b.trim(), p.where("master"));
            }
        }
        Veth v = new Veth(link, peerNs, peer, false);
        // The peer end appears in its namespace's device list, so references and duplicates treat it like
        // any other device there.
        e.peers().computeIfAbsent(peerNs, x -> new ArrayList<>()).add(new Veth(peer, ns, link, true));
        return v;
    }

    /** Both ends, from the declared end's entry; the peer end's own entry makes nothing. */
    /** The peer's namespace is one of the file's (checked once, at the declared end). */
    @Override
    public void check(Checks c, TopologySpec.Ns ns, Veth v) {
        checkPeerNamespace(c, v);
    }

    static void checkPeerNamespace(Checks c, Veth v) {
        if (v.peerSide()) {
            return;
        }
        if (!c.nsNames().contains(v.peerNamespace())) {
            c.problems().add(v.peer().where().child("namespace"), "no usnet namespace " + v.peerNamespace()
                    + " (declared: " + c.declared().computeIfAbsent(v.peerNamespace(),
                            x -> NearestNames.listing(x, c.nsOrder())) + ")");
        }
    }

    @Override
    public void create(TopologyBuilder b, String ns, NetStack s, Veth v, long mac) {
        createPair(b, ns, v);
    }

    static void createPair(TopologyBuilder b, String ns, Veth v) {
        if (v.peerSide()) {
            return;
        }
        NetNamespace peerNs = b.namespace(v.peerNamespace());
        if (peerNs == null || b.hasErrorAt(v.peer().where().child("name"))) {
            return;
        }
        var ends = b.registry().createVeth(b.namespace(ns), v.link().name(), peerNs, v.peer().name());
        b.made(v.link(), ends[0]);
        b.made(v.peer(), ends[1]);
    }


    /** {@code link add NAME type veth peer [name] [NS/]PEER}: both ends at once, the peer in its namespace (default NAME's). */
    @Override
    public LiveAdd liveAdd() {
        return new LiveAdd.Addable("veth peer [NS/]NAME", List.of("peer"), LiveVeth::new);
    }

    /** One live veth pair: its peer's words read, then both ends made, down. */
    private static final class LiveVeth implements LiveAdd.Request {
        private String peer;

        @Override
        public boolean parse(String w, LiveAdd.Words words, LiveLinks live) {
            if (!w.equals("peer")) {
                return false;
            }
            words.accept("name");
            peer = words.next("peer [NS/]NAME");
            return true;
        }

        @Override
        public String add(LiveLinks live, LiveAdd.Target t) {
            NetStack s = t.stack();
            String name = t.name();
            if (peer == null) {
                throw live.refused("link add " + name + " type veth: missing 'peer [NS/]NAME'");
            }
            int slash = peer.indexOf('/');
            String peerNsName = slash < 0 ? s.name() : peer.substring(0, slash);
            String peerName = slash < 0 ? peer : peer.substring(slash + 1);
            live.checkName(peerName);
            NetStack ps = live.stack(peerNsName);
            if (ps == s && peerName.equals(name)) {
                throw live.refused("link add " + name + ": a veth's two ends need two names in one namespace");
            }
            NamespaceRegistry reg = live.registry();
            return live.change(s, () -> {
                live.requireFree(s, name);
                live.requireFree(ps, peerName);
                VethEnd[] ends = reg.createVeth(reg.get(s.name()), name, reg.get(ps.name()), peerName);
                if (t.mac() != null) {
                    ends[0].setMac(t.mac());
                }
                if (t.mtu() != null) {
                    ends[0].setMtu(t.mtu());
                    ends[1].setMtu(t.mtu());
                }
                return "added veth " + s.name() + "/" + name + " <-> " + ps.name() + "/" + peerName + " (both down)";
            });
        }
    }
}
