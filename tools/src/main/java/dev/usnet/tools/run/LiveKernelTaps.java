package dev.usnet.tools.run;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tap.TunException;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.kernel.KernelNet;
import dev.usnet.tools.kernel.Privileges;
import dev.usnet.tools.kernel.TapBridgeTaps;
import dev.usnet.tools.kernel.TapProvider;
import dev.usnet.tools.kernel.UsnetMark;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntSupplier;

/**
 * The TAPs {@code usnet ctl link add NAME type tap kernel-netns KNS} adds to a running {@link Daemon}, and the kernel
 * namespaces made for them. Its own lock: requests come from the control plane's threads, never the stop's.
 */
final class LiveKernelTaps implements dev.usnet.tools.ctl.KernelTaps {
    private record Live(String ifname, String kernelNamespace, boolean namespaceCreated) {}

    private final Daemon.Providers providers;
    /** The topology file's TAPs, opened by the start: their kernel names are taken. */
    private final List<Daemon.OpenedTap> fileTaps;
    /** The uid the daemon became when it dropped root, or -1. */
    private final IntSupplier becameUser;
    private final Map<Device, Live> live = new java.util.IdentityHashMap<>();
    private boolean stopped;

    LiveKernelTaps(Daemon.Providers providers, List<Daemon.OpenedTap> fileTaps, IntSupplier becameUser) {
        this.providers = providers;
        this.fileTaps = fileTaps;
        this.becameUser = becameUser;
    }

    @Override
    public synchronized Opened open(Request r, NetStack stack) {
        String what = "link add " + r.name() + " type tap";
        if (stopped) {
            throw new dev.usnet.tools.ctl.CtlException(what + ": the daemon is stopping");
        }
        Privileges p = providers.privileges();
        List<String> missing = new ArrayList<>();
        if (!p.has(Privileges.CAP_NET_ADMIN)) {
            missing.add("CAP_NET_ADMIN");
        }
        if (!p.has(Privileges.CAP_SYS_ADMIN)) {
            missing.add("CAP_SYS_ADMIN");
        }
        int became = becameUser.getAsInt();
        if (became >= 0 || missing.isEmpty() && providers.tap() instanceof TapBridgeTaps && !threadMayCreate()) {
            throw new dev.usnet.tools.ctl.CtlException(what + ": a TAP into kernel namespace " + r.kernelNamespace()
                    + " needs CAP_NET_ADMIN and CAP_SYS_ADMIN, which this daemon gave up once it was running ("
                    + (became >= 0 ? "started through sudo, it became uid " + became : "it dropped them")
                    + " after its start); to add TAPs live, start usnet run as root without sudo: it then keeps them"
                    + " on its control threads");
        }
        if (!missing.isEmpty()) {
            throw new dev.usnet.tools.ctl.CtlException(what + ": a TAP into kernel namespace " + r.kernelNamespace()
                    + " needs " + String.join(" and ", missing) + ", which this daemon does not have (CapEff in"
                    + " /proc/self/status): start usnet run as root (sudo)");
        }
        try {
            providers.tap().requireAvailable();
        } catch (UsageException e) {
            throw new dev.usnet.tools.ctl.CtlException(what + ": " + e.getMessage());
        }
        for (Daemon.OpenedTap t : fileTaps) {
            if (t.req().ifname().equals(r.ifname())) {
                throw new dev.usnet.tools.ctl.CtlException(what + ": kernel name " + r.ifname() + " is taken by TAP "
                        + t.req().usnetName() + " of the topology file (TAP kernel names are unique in a run)");
            }
        }
        for (Map.Entry<Device, Live> e : live.entrySet()) {
            if (e.getValue().ifname().equals(r.ifname())) {
                Device d = e.getKey();
                throw new dev.usnet.tools.ctl.CtlException(what + ": kernel name " + r.ifname() + " is taken by TAP "
                        + (d.stack() == null ? "" : d.stack().name() + "/") + d.name()
                        + " (TAP kernel names are unique in a run)");
            }
        }
        KernelNet kernel = providers.kernel();
        String kns = r.kernelNamespace();
        boolean exists = kernel.namespaceExists(kns);
        if (exists) {
            kernel.link(kns, r.ifname()).ifPresent(l -> {
                Optional<UsnetMark> mark = UsnetMark.parse(l.alias());
                throw new dev.usnet.tools.ctl.CtlException(what + ": interface " + r.ifname()
                        + " already exists in kernel namespace " + kns + mark.map(m -> " (marked by usnet pid " + m.pid()
                        + ")").orElse(" (not created by usnet)") + "; delete it or choose another name (kernel-name NAME)");
            });
        }
        boolean created = false;
        Device dev = null;
        try {
            if (!exists) {
                kernel.addNamespace(kns);
                created = true;
            }
            TapProvider.TapRequest req = new TapProvider.TapRequest(r.name(), r.ifname(), kns, r.vnetHdr(), r.mac());
            dev = providers.tap().openTap(req, stack);
            // The mark first, as at the start: whoever finds the name taken can then say whose it is.
            kernel.ip(kns, "link", "set", "dev", r.ifname(), "alias", UsnetMark.ofThisProcess().format());
            kernel.ip(kns, "link", "set", "dev", r.ifname(), "up");
        } catch (RuntimeException e) {
            if (dev != null) {
                dev.delete();
            }
            if (created) {
                try {
                    kernel.deleteNamespace(kns);
                } catch (RuntimeException again) {
                    e.addSuppressed(again);
                }
            }
            throw new dev.usnet.tools.ctl.CtlException(what + ": " + e.getMessage(), e);
        }
        live.put(dev, new Live(r.ifname(), kns, created));
        return new Opened(dev, created);
    }

    /** Whether this thread may still create TAPs and namespaces: the drop of root clears every thread's set. */
    private boolean threadMayCreate() {
        try {
            long eff = dev.usnet.tap.Capabilities.effective();
            return (eff >>> Privileges.CAP_NET_ADMIN & 1) != 0 && (eff >>> Privileges.CAP_SYS_ADMIN & 1) != 0;
        } catch (TunException | RuntimeException e) {
            return true;
        }
    }

    @Override
    public synchronized boolean owns(Device device) {
        return live.containsKey(device);
    }

    @Override
    public synchronized String deleted(Device device) {
        Live l = live.remove(device);
        if (l == null || !l.namespaceCreated() || stopped) {
            return null;
        }
        for (Map.Entry<Device, Live> e : live.entrySet()) {
            Live x = e.getValue();
            if (x.kernelNamespace().equals(l.kernelNamespace())) {
                // Another live TAP still ends there: the namespace goes with the last of them.
                e.setValue(new Live(x.ifname(), x.kernelNamespace(), true));
                return null;
            }
        }
        providers.kernel().deleteNamespace(l.kernelNamespace());
        return "kernel namespace " + l.kernelNamespace();
    }

    /** At the stop, after the usnet namespaces (and with them the TAPs) are gone: the namespaces made for them. */
    synchronized List<String> deleteAll(List<String> errors) {
        stopped = true;
        List<String> out = new ArrayList<>();
        for (Live l : live.values()) {
            if (l.namespaceCreated() && !out.contains(l.kernelNamespace())) {
                try {
                    providers.kernel().deleteNamespace(l.kernelNamespace());
                    out.add(l.kernelNamespace());
                } catch (RuntimeException e) {
                    errors.add("deleting kernel namespace " + l.kernelNamespace() + ": " + e.getMessage()
                            + " (delete it with: ip netns del " + l.kernelNamespace() + ")");
                }
            }
        }
        live.clear();
        return out;
    }
}
