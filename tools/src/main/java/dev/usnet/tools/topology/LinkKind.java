package dev.usnet.tools.topology;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.topology.file.TopologySpec.DeviceSpec;
import dev.usnet.tools.topology.file.TopologySpec.Link;
import dev.usnet.tools.topology.file.Problems;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One kind of device a {@code devices:} entry can name ({@code kind: veth}, ...), as iproute2 has one file per link
 * type: its own keys, how an entry of it is read and how the build makes it. {@link LinkKinds} lists every kind; the
 * reader and the build know the kinds only through it.
 *
 * @param <D> the entry the kind reads
 */
public interface LinkKind<D extends DeviceSpec> {
    /** What reading an entry has to hand: its namespace, its mapping, its shared settings, the veth peers seen so far. */
    record Entry(TopologyFile file, String ns, YamlMap m, Link link, Map<String, List<DeviceSpec>> peers) {}

    /**
     * What checking one device entry against the rest of the file sees: the file's namespaces (names, in order, and
     * what is said of a missing one, once), the devices of the entry's namespace by name, and what entries claimed
     * that must be unique across the file.
     */
    record Checks(Problems problems, Set<String> nsNames, List<String> nsOrder, Map<String, String> declared,
                  Map<String, DeviceSpec> byName, Map<String, DeviceSpec> claims) {
        /** Claims {@code what} (a kernel interface name, a NIC) for {@code d}; the entry that claimed it first, or null. */
        DeviceSpec claim(String what, DeviceSpec d) {
            return claims.putIfAbsent(what, d);
        }
    }

    /** The word after {@code kind:}. */
    String name();

    /** Its own keys, beyond those every device has ({@link TopologyFile#LINK_KEYS}). */
    Set<String> keys();

    /** The name a device of the kind always has (a loopback's {@code lo}), or null: the entry names it. */
    default String fixedName() {
        return null;
    }

    /** Reads an entry of this kind, its shared settings already read; null when something is wrong (reported). */
    D read(Entry e);

    /** Whether {@code d} is an entry this kind reads. */
    boolean reads(DeviceSpec d);

    /** Checks entry {@code d} of namespace {@code ns} against the rest of the file; problems go to {@code c}. */
    void check(Checks c, TopologySpec.Ns ns, D d);

    /**
     * Makes the device (or, for a pair, both ends) of entry {@code d} in namespace {@code ns}, whose stack is
     * {@code s}, with {@code mac}; what the core refuses is thrown and reported with the entry's line.
     */
    void create(TopologyBuilder b, String ns, NetStack s, D d, long mac);

    /**
     * What {@code usnet ctl link add NAME type KIND} does with this kind: how it reads the request's words and makes
     * the device in a running namespace, or why it cannot be added there.
     */
    LiveAdd liveAdd();
}
