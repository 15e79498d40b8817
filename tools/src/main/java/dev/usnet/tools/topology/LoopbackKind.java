package dev.usnet.tools.topology;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Loopback;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.Set;

/** {@code kind: loopback}: the namespace's existing {@code lo}, to give it addresses and settings. */
final class LoopbackKind implements LinkKind<Loopback> {
    @Override
    public String name() {
        return "loopback";
    }

    @Override
    public Set<String> keys() {
        return Set.of();
    }

    @Override
    public String fixedName() {
        return "lo";
    }

    @Override
    public boolean reads(DeviceSpec d) {
        return d instanceof Loopback;
    }

    @Override
    public Loopback read(Entry e) {
        if (!e.link().name().equals("lo")) {
            e.m().problems().add(e.m().where("name"), "a loopback device is the namespace's 'lo'; got \"" + e.link().name() + "\"");
            return null;
        }
        return new Loopback(e.link());
    }

    /** Every namespace has it already. */
    /** Nothing to compare with other entries: every namespace has its own lo. */
    @Override
    public void check(Checks c, TopologySpec.Ns ns, Loopback d) {
    }

    @Override
    public void create(TopologyBuilder b, String ns, NetStack s, Loopback d, long mac) {
        b.made(d.link(), s.loopback());
    }


    @Override
    public LiveAdd liveAdd() {
        return new LiveAdd.Refused("every namespace has its lo from the start, and only that one");
    }
}
