package dev.usnet.tools.topology;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Veth;
import dev.usnet.tools.topology.file.PcapReplay;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/**
 * {@code kind: replay}: a veth pair whose declared end sends a pcap file's frames ({@link PcapReplay}) and takes in
 * whatever reaches it. It has no addresses: nothing in its namespace speaks through it.
 */
final class ReplayKind implements LinkKind<Veth> {
    @Override
    public String name() {
        return "replay";
    }

    @Override
    public Set<String> keys() {
        return PcapReplay.KEYS;
    }

    @Override
    public boolean reads(DeviceSpec d) {
        return d instanceof Veth;
    }

    @Override
    public Veth read(Entry e) {
        YamlMap m = e.m();
        TopologyFile f = e.file();
        PcapReplay r = PcapReplay.read(m, PcapReplay.baseDir(f.file()), f.problems());
        if (!e.link().addresses().isEmpty() || !e.link().addresses6().isEmpty()) {
            f.problems().add(m.where("addresses"), "a replay device only sends its file's frames and takes in what"
                    + " arrives; give the addresses to its peer");
        }
        int mastersBefore = f.masterCount();
        Veth d = VethKind.readPair(e);
        // A master: on the replay end itself is refused by the keys it allows; it joins no bridge either.
        if (m.has("master")) {
            f.dropMaster(mastersBefore, m.where("master"));
        }
        // With its file unreadable (reported) the pair stays a plain one, so its peer is judged as it will be.
        return d != null && r != null ? new Veth(d.link(), d.peerNamespace(), d.peer(), false, r) : d;
    }

    /** As a veth pair's. */
    @Override
    public void check(Checks c, TopologySpec.Ns ns, Veth v) {
        VethKind.checkPeerNamespace(c, v);
    }

    @Override
    public void create(TopologyBuilder b, String ns, NetStack s, Veth v, long mac) {
        VethKind.createPair(b, ns, v);
    }


    /** Its frames are sent from the run's start, with the run's clock: a device added later would miss that start. */
    @Override
    public LiveAdd liveAdd() {
        return new LiveAdd.Refused("it sends its pcap file's frames from the run's start; declare it in the topology"
                + " file (kind: replay)");
    }
}
