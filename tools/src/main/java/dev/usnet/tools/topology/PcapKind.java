package dev.usnet.tools.topology;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Pcap;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/** {@code kind: pcap}: a live NIC reached through pcap (capture and inject). */
final class PcapKind implements LinkKind<Pcap> {
    @Override
    public String name() {
        return "pcap";
    }

    @Override
    public Set<String> keys() {
        return Set.of("interface", "promisc");
    }

    @Override
    public boolean reads(DeviceSpec d) {
        return d instanceof Pcap;
    }

    @Override
    public Pcap read(Entry e) {
        YamlMap m = e.m();
        if (m.has("gso")) {
            // What such a device may be handed is what the NIC on its other side takes.
            m.problems().add(m.where("gso"), "a pcap port sends frames of at most its MTU, as the NIC takes them");
        }
        String iface = null;
        if (m.require("interface")) {
            iface = m.string("interface");
            if (iface != null && !TopologyFile.validIfname(iface)) {
                m.problems().add(m.where("interface"), "not an interface name: \"" + iface + "\"");
                iface = null;
            }
        }
        Boolean promisc = m.bool("promisc");
        return iface == null ? null : new Pcap(e.link(), iface, promisc == null || promisc);
    }

    /** One pcap device per interface. */
    @Override
    public void check(Checks c, TopologySpec.Ns ns, Pcap d) {
        if (c.claim("pcap " + d.iface(), d) instanceof Pcap first) {
            c.problems().add(d.link().where().child("interface"), "interface " + d.iface() + " is already pcap device "
                    + first.link().name() + " (line " + first.link().where().line() + ")");
        }
    }

    @Override
    public void create(TopologyBuilder b, String ns, NetStack s, Pcap d, long mac) {
        b.made(d.link(), TopologyBuilder.register(s, b.external().pcap(ns, d, mac, s)));
    }


    /** A NIC of the machine is reached only as the file declares it, where its checks and kernel safety run. */
    @Override
    public LiveAdd liveAdd() {
        return new LiveAdd.Refused("it reaches a NIC of the machine, which only a topology file's kind: pcap entry may"
                + " name (its checks and kernel safety run when usnet starts)");
    }
}
