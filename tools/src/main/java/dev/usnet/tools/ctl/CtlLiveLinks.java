package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.ns.NamespaceRegistry;
import dev.usnet.tools.topology.LiveLinks;
import java.util.concurrent.Callable;

/** The control plane as a device kind's {@code link add} sees it: its namespaces, its change lock, the daemon's TAPs. */
final class CtlLiveLinks implements LiveLinks {
    private final ControlPlane cp;

    CtlLiveLinks(ControlPlane cp) {
        this.cp = cp;
    }

    @Override
    public NetStack stack(String name) {
        return cp.stack(name);
    }

    @Override
    public NamespaceRegistry registry() {
        return cp.topology().registry();
    }

    @Override
    public <T> T change(NetStack s, Callable<T> task) {
        return cp.change(s, task);
    }

    @Override
    public <T> T onLoop(NetStack s, Callable<T> task) {
        return cp.onLoop(s, task);
    }

    @Override
    public <T> T exclusive(Callable<T> task) {
        return cp.exclusive(task);
    }

    @Override
    public RuntimeException refused(String message) {
        return new CtlException(message);
    }

    @Override
    public void checkName(String name) {
        LinkVerbs.checkName(name);
    }

    @Override
    public void requireFree(NetStack s, String name) {
        LinkVerbs.requireFree(s, name);
    }

    @Override
    public OpenedTap openTap(String name, String ifname, String kernelNs, boolean vnetHdr, long mac, NetStack s) {
        KernelTaps.Opened o = cp.host().kernelTaps().open(new KernelTaps.Request(name, ifname, kernelNs, vnetHdr, mac), s);
        return new OpenedTap(o.device(), o.namespaceCreated());
    }

    @Override
    public void tapGone(Device tap) {
        cp.host().kernelTaps().deleted(tap);
    }
}
