package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.topology.file.TopologyException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Addresses {@code ip addr add} takes but a Linux user wants to hear about, and IPv6 ping destinations. */
class AddressWarningsTest {
    /** Namespace a with devices eth0 (peer in b) and eth1 (peer in c); {@code A0}, {@code A1}, {@code B} filled in. */
    private static final String FILE = """
            version: 1
            namespaces:
              a:
                devices:
                  - {name: eth0, kind: veth, addresses: [A0], peer: {namespace: b, name: eth0, addresses: [B]}}
                  - {name: eth1, kind: veth, addresses: [A1], peer: {namespace: c, name: eth0, addresses: [198.18.5.2/24]}}
                apps:
                  - {kind: ping, to: TO}
              b: {}
              c: {}
            """;

    private static String file(String a0, String a1, String b, String to) {
        return FILE.replace("A0", a0).replace("A1", a1).replace("B", b).replace("TO", to);
    }

    private static List<String> warnings(String text) {
        return TopologyFile.check("t.yaml", text, List.of(), List.of()).warnings();
    }

    @Test
    void oneAddressWithTwoPrefixLengthsInOneNamespaceIsWarnedAbout() {
        List<String> w = warnings(file("198.18.0.1/24", "198.18.0.1/16", "198.18.0.2/24", "198.18.0.2"));
        assertEquals(2, w.size(), w.toString());
        assertTrue(w.get(0).startsWith("t.yaml:6: namespaces.a.devices[1].addresses[0]: warning: 198.18.0.1 is on a/eth1 as"
                + " /16 and on a/eth0 as /24 (line 5): one address with two prefix lengths"), w.get(0));
        // Its /16 also covers eth0's /24, as over IPv6.
        assertTrue(w.get(1).startsWith("t.yaml:6: namespaces.a.devices[1].addresses[0]: warning: prefix 198.18.0.0/16 of"
                + " a/eth1 overlaps 198.18.0.0/24 of a/eth0"), w.get(1));
        // The same prefix length, or different addresses: nothing to say.
        assertEquals(List.of(), warnings(file("198.18.0.1/24", "198.18.5.1/24", "198.18.0.2/24", "198.18.0.2")));
    }

    @Test
    void overlappingIpv4PrefixesOnDevicesOfDifferentLinksAreWarnedAboutAsIpv6Ones() {
        List<String> w = warnings(file("198.18.0.1/24", "198.18.9.1/16", "198.18.0.2/24", "198.18.0.2"));
        assertEquals(List.of("t.yaml:6: namespaces.a.devices[1].addresses[0]: warning: prefix 198.18.0.0/16 of a/eth1"
                + " overlaps 198.18.0.0/24 of a/eth0 (line 5), a device on another link: packets to 198.18.0.0/24 leave by"
                + " one of them only; give each link its own prefix"), w);
        // The same /24 on two links, said the same way.
        w = warnings(file("198.18.5.1/24", "198.18.5.9/24", "198.18.5.2/24", "198.18.5.2"));
        assertEquals(List.of("t.yaml:6: namespaces.a.devices[1].addresses[0]: warning: prefix 198.18.5.0/24 of a/eth1 is"
                + " also on a/eth0 (line 5), a device on another link: packets to 198.18.5.0/24 leave by one of them only;"
                + " give each link its own prefix"), w);
    }

    @Test
    void networkAndBroadcastAddressesAsHostAddressesAreWarnedAbout() {
        List<String> w = warnings(file("198.18.0.0/24", "198.18.5.255/24", "198.18.0.2/24", "198.18.0.2"));
        assertEquals(2, w.size(), w.toString());
        assertTrue(w.get(0).startsWith("t.yaml:5: namespaces.a.devices[0].addresses[0]: warning: 198.18.0.0/24 on a/eth0 is"
                + " the network address of 198.18.0.0/24"), w.get(0));
        assertTrue(w.get(1).startsWith("t.yaml:6: namespaces.a.devices[1].addresses[0]: warning: 198.18.5.255/24 on a/eth1 is"
                + " the broadcast address of 198.18.5.0/24: every host on the subnet takes packets to it as broadcasts"),
                w.get(1));
        // /31 (RFC 3021) and /32 have no network or broadcast address.
        assertEquals(List.of(), warnings(file("198.18.0.0/31", "198.18.5.1/32", "198.18.0.1/31", "198.18.0.1")));
    }

    @Test
    void pingTakesAnIpv6DestinationAndALinkLocalOneWithItsDevice() {
        assertEquals(List.of(), warnings(file("2001:db8::1/64", "198.18.5.1/24", "2001:db8::2/64", "2001:db8::2")));
        assertEquals(List.of(), warnings(file("2001:db8::1/64", "198.18.5.1/24", "2001:db8::2/64", "fe80::2%eth0")));
        TopologyException e = assertThrows(TopologyException.class,
                () -> warnings(file("2001:db8::1/64", "198.18.5.1/24", "2001:db8::2/64", "fe80::2")));
        assertEquals(List.of("t.yaml:8: namespaces.a.apps[0].to: a link-local destination needs its device, like"
                + " \"fe80::2%eth0\", got \"fe80::2\""), e.errors());
        e = assertThrows(TopologyException.class,
                () -> warnings(file("2001:db8::1/64", "198.18.5.1/24", "2001:db8::2/64", "fe80::2%eth7")));
        assertEquals(List.of("t.yaml:8: namespaces.a.apps[0].to: ping app: namespace a has no device eth7"),
                e.errors());
        e = assertThrows(TopologyException.class,
                () -> warnings(file("2001:db8::1/64", "198.18.5.1/24", "2001:db8::2/64", "2001:db8::2%eth0")));
        assertEquals(List.of("t.yaml:8: namespaces.a.apps[0].to: only a link-local destination names a device"
                + " (%eth0), got \"2001:db8::2%eth0\""), e.errors());
        e = assertThrows(TopologyException.class,
                () -> warnings(file("2001:db8::1/64", "198.18.5.1/24", "2001:db8::2/64", "fd00::9")));
        assertTrue(e.errors().getFirst().startsWith("t.yaml:8: namespaces.a.apps[0].to: ping app: namespace a has no"
                + " IPv6 route to fd00::9"), e.errors().toString());
    }

    @Test
    void udpSendTakesAnIpv6DestinationButKeepsNoClonesThereYet() {
        String udp = "{kind: udp-send, to: \"2001:db8::2\", port: 9}";
        assertEquals(List.of(), warnings(file("2001:db8::1/64", "198.18.5.1/24", "2001:db8::2/64", "X")
                .replace("{kind: ping, to: X}", udp)));
        TopologyException e = assertThrows(TopologyException.class, () -> warnings(file("2001:db8::1/64",
                "198.18.5.1/24", "2001:db8::2/64", "X").replace("{kind: ping, to: X}",
                udp.replace("port: 9", "port: 9, keep_clones: 4"))));
        assertEquals(List.of("t.yaml:8: namespaces.a.apps[0].keep_clones: keep_clones applies to IPv4 destinations"
                + " only so far"), e.errors());
    }
}
