package dev.usnet.tools.kernel;

import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.KernelNs;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.Tap;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.Where;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a topology would create in the kernel that is there already: its kernel namespaces, and links named like
 * its TAPs' kernel ends where those would appear (usnet's own namespace, or an existing kernel namespace the file
 * does not create; in one it creates a name cannot collide). {@code usnet run} refuses to start on any of them
 * and lists them all; {@code usnet cleanup} deletes those that are usnet's leftovers.
 *
 * <p>Whose a thing is comes from its {@link UsnetMark}: {@link Owner#USNET_GONE} when the mark's process no longer
 * runs, {@link Owner#USNET_RUNNING} when it does, {@link Owner#NOT_USNET} without a mark. Only kernel namespaces can
 * be leftovers usnet removes: its TAPs are never persistent, so the kernel deletes them with the process's fds
 * (kill -9 included); a link that exists under a TAP's name is held open or made persistent by someone else.
 */
public final class Leftovers {
    public enum Owner { USNET_GONE, USNET_RUNNING, NOT_USNET }

    /**
     * One existing object: a kernel namespace ({@code link} null) or the link {@code link} in kernel namespace
     * {@code namespace} (null: usnet's own).
     */
    public record Found(Where where, String namespace, String link, Owner owner, Optional<UsnetMark> mark) {
        public boolean isNamespace() {
            return link == null;
        }

        /** What {@code usnet cleanup} deletes: a kernel namespace of a usnet run that is gone. */
        public boolean removable() {
            return isNamespace() && owner == Owner.USNET_GONE;
        }

        /** Why a run cannot start with it there, and what to do. */
        public String message() {
            String pid = mark.map(m -> "pid " + m.pid() + ", started " + m.started()).orElse("");
            if (isNamespace()) {
                return switch (owner) {
                    case NOT_USNET -> "kernel namespace " + namespace + " already exists (not created by usnet); delete it"
                            + " (ip netns del " + namespace + ") or choose another name";
                    case USNET_GONE -> "kernel namespace " + namespace + " already exists, left over from a usnet run that"
                            + " is gone (" + pid + ")";
                    case USNET_RUNNING -> "kernel namespace " + namespace + " already exists and belongs to a running usnet ("
                            + pid + "); stop that one first";
                };
            }
            String in = namespace == null ? "" : " in kernel namespace " + namespace;
            return switch (owner) {
                case NOT_USNET -> "interface " + link + " already exists" + in + " (not created by usnet); delete it or"
                        + " choose another name";
                case USNET_RUNNING -> "interface " + link + " already exists" + in + " and belongs to a running usnet ("
                        + pid + "); stop that one or choose another name";
                // A non-persistent TAP outlives its usnet only while something else holds its fd.
                case USNET_GONE -> "interface " + link + " already exists" + in + ", marked by a usnet run that is gone ("
                        + pid + ") but kept by another process; delete it or choose another name";
            };
        }
    }

    private Leftovers() {}

    /** Every kernel namespace of {@code spec} that exists, then every existing link a TAP of it would collide with. */
    public static List<Found> find(TopologySpec spec, KernelNet kernel) {
        List<Found> found = new ArrayList<>();
        List<String> created = spec.kernelNamespaces().stream().map(KernelNs::name).toList();
        for (KernelNs k : spec.kernelNamespaces()) {
            if (kernel.namespaceExists(k.name())) {
                Optional<UsnetMark> mark = kernel.link(k.name(), "lo").flatMap(l -> UsnetMark.parse(l.alias()));
                found.add(new Found(k.where(), k.name(), null, owner(mark), mark));
            }
        }
        for (Ns ns : spec.namespaces()) {
            for (DeviceSpec d : ns.devices()) {
                if (!(d instanceof Tap t)) {
                    continue;
                }
                String k = t.kernel().namespace();
                if (k != null && (created.contains(k) || !kernel.namespaceExists(k))) {
                    continue;
                }
                kernel.link(k, t.kernel().ifname()).ifPresent(l -> {
                    Optional<UsnetMark> mark = UsnetMark.parse(l.alias());
                    found.add(new Found(t.kernel().where(), k, l.name(), owner(mark), mark));
                });
            }
        }
        return found;
    }

    private static Owner owner(Optional<UsnetMark> mark) {
        return mark.map(m -> m.ownerRunning() ? Owner.USNET_RUNNING : Owner.USNET_GONE).orElse(Owner.NOT_USNET);
    }
}
