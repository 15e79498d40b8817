package dev.usnet.tools.run;

import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.kernel.Leftovers;
import dev.usnet.tools.kernel.Privileges;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.KernelNs;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Pcap;
import dev.usnet.tools.topology.file.TopologySpec.Tap;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link Daemon#start} checks before any side effect: the capabilities the topology needs, the device kinds
 * this build must provide, kernel namespaces that must exist, and leftovers of an earlier run in the way. Every
 * problem found is reported at once.
 */
final class DaemonPreflight {
    private DaemonPreflight() {}

    static void check(TopologySpec spec, Daemon.Providers providers) {
        requirePrivileges(spec, providers);
        List<String> problems = new ArrayList<>();
        List<String> declared = spec.kernelNamespaces().stream().map(KernelNs::name).toList();
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof Tap t) {
                    String k = t.kernel().namespace();
                    if (k != null && !declared.contains(k) && !providers.kernel().namespaceExists(k)) {
                        problems.add(t.kernel().where().error("kernel namespace " + k
                                + " does not exist; list it under kernel.namespaces for usnet to create it"));
                    }
                }
            }
        }
        if (hasDevice(spec, Tap.class)) {
            providers.tap().requireAvailable();
        }
        if (hasDevice(spec, Pcap.class)) {
            providers.pcap().requireAvailable();
        }
        List<Leftovers.Found> found = Leftovers.find(spec, providers.kernel());
        for (Leftovers.Found f : found) {
            problems.add(f.where().error(f.message()));
        }
        if (found.stream().anyMatch(Leftovers.Found::removable)) {
            problems.add("run: usnet cleanup " + found.get(0).where().file());
        }
        if (!problems.isEmpty()) {
            throw new UsageException(String.join("\n", problems));
        }
    }

    /**
     * Refuses a topology that changes the kernel when this process lacks the capabilities for it, before anything
     * is done (else the first {@code ip} or TUNSETIFF would fail half-way with its own words).
     */
    private static void requirePrivileges(TopologySpec spec, Daemon.Providers providers) {
        List<String> what = new ArrayList<>();
        List<String> caps = new ArrayList<>();
        Privileges p = providers.privileges();
        boolean namespaces = !spec.kernelNamespaces().isEmpty();
        if (namespaces) {
            what.add("kernel namespaces (" + String.join(", ", spec.kernelNamespaces().stream().map(KernelNs::name).toList()) + ")");
        }
        boolean tapIntoNamespace = false;
        List<String> tapNames = new ArrayList<>();
        List<String> pcapNames = new ArrayList<>();
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (d instanceof Tap t) {
                    tapNames.add(t.kernel().ifname());
                    tapIntoNamespace |= t.kernel().namespace() != null;
                } else if (d instanceof Pcap pc) {
                    pcapNames.add(pc.iface());
                }
            }
        }
        if (!tapNames.isEmpty()) {
            what.add("TAP devices (" + String.join(", ", tapNames) + ")");
        }
        if (!pcapNames.isEmpty()) {
            what.add("pcap ports on " + String.join(", ", pcapNames));
        }
        if ((namespaces || !tapNames.isEmpty()) && !p.has(Privileges.CAP_NET_ADMIN)) {
            caps.add("CAP_NET_ADMIN");
        }
        // ip netns add mounts; a TAP goes into its namespace through unshare and setns.
        if ((namespaces || tapIntoNamespace) && !p.has(Privileges.CAP_SYS_ADMIN)) {
            caps.add("CAP_SYS_ADMIN");
        }
        if (!pcapNames.isEmpty() && !p.has(Privileges.CAP_NET_RAW)) {
            caps.add("CAP_NET_RAW");
        }
        if (!caps.isEmpty()) {
            throw new UsageException(spec.name() + ": " + String.join(" and ", what) + " need " + String.join(" and ", caps)
                    + ", which this process does not have (CapEff in /proc/self/status): run as root (sudo)");
        }
    }

    static boolean hasDevice(TopologySpec spec, Class<? extends DeviceSpec> kind) {
        return spec.namespaces().stream().flatMap(n -> n.devices().stream()).anyMatch(kind::isInstance);
    }
}
