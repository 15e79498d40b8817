package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The registry is the one list of device kinds: the file may name those, and nothing else is built. */
class LinkKindsTest {
    /** An entry of a kind nobody registered. */
    private record Vxlan(TopologySpec.Link link) implements TopologySpec.DeviceSpec {
        @Override
        public String kind() {
            return "vxlan";
        }
    }

    @Test
    void theRegisteredKindsAreTheOnesAFileMayName() {
        assertEquals(List.of("veth", "bridge", "tap", "pcap", "loopback", "replay"), LinkKinds.names());
        TopologyException e = assertThrows(TopologyException.class, () -> TopologyFile.parse("t.yaml", """
                version: 1
                namespaces:
                  a:
                    devices:
                      - {name: vx0, kind: vxlan}
                """));
        assertTrue(e.getMessage().contains("t.yaml:5: namespaces.a.devices[0].kind: expected one of veth, bridge, tap, pcap,"
                + " loopback, replay, got \"vxlan\""), e.getMessage());
    }

    @Test
    void anEntryOfAnUnregisteredKindIsRefusedLoudly() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> LinkKinds.of(new Vxlan(null)));
        assertEquals("no registered device kind reads Vxlan entries (kind vxlan; registered: veth, bridge, tap, pcap,"
                + " loopback, replay)", e.getMessage());
    }

    @Test
    void twoKindsOfOneNameAreRefused() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> LinkKinds.index(List.of(new VethKind(), new BridgeKind(), new VethKind())));
        assertEquals("two device kinds are named veth", e.getMessage());
    }

    @Test
    void aKeyOfAnotherKindSaysWhichKindItBelongsTo() {
        TopologyException e = assertThrows(TopologyException.class, () -> TopologyFile.parse("t.yaml", """
                version: 1
                namespaces:
                  a:
                    devices:
                      - {name: br0, kind: bridge, vnet_hdr: true}
                """));
        assertTrue(e.getMessage().contains("namespaces.a.devices[0].vnet_hdr: 'vnet_hdr' applies to kind tap, not bridge"),
                e.getMessage());
    }
}
