package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.usnet.tap.HostCommand;
import dev.usnet.tools.topology.LinkKind;
import dev.usnet.tools.topology.LinkKinds;
import dev.usnet.tools.topology.LiveAdd;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code usnet ctl link add} reaches every device kind through {@link LinkKinds}: each registered kind either makes a
 * device in a running namespace or is refused with the documented message, which names the kinds that can. A kind
 * registered later that is addable but missing from {@link #ADDABLE} fails here, as does one ctl cannot reach. The TAP
 * needs root and /dev/net/tun; without them its add must still reach the TAP code (the daemon's refusal names the
 * type). Its kernel namespace is usnet-lak-PID-k and is deleted here, by name, also when the test fails.
 */
class LinkAddKindsTest {
    private static final String KNS = "usnet-lak-" + ProcessHandle.current().pid() + "-k";
    /** For each kind link add makes: the words after {@code type KIND} of a request that must succeed. */
    private static final Map<String, List<String>> ADDABLE = new LinkedHashMap<>();

    static {
        ADDABLE.put("veth", List.of("peer", "u2/p0"));
        ADDABLE.put("bridge", List.of());
        ADDABLE.put("tap", List.of("kernel-netns", KNS, "kernel-name", "ulak0"));
    }

    private LiveDaemon daemon;

    @AfterEach
    void cleanUp() {
        try {
            if (daemon != null) {
                daemon.close();
            }
        } finally {
            if (Files.exists(Path.of("/run/netns", KNS))) {
                HostCommand.run(10, "ip", "netns", "del", KNS);
            }
        }
    }

    private static boolean canTap() {
        return HostCommand.isRoot() && Files.exists(Path.of("/dev/net/tun")) && HostCommand.has("ip");
    }

    @Test
    void everyRegisteredKindIsAddedLiveOrRefusedNamingTheKindsThatAre(@TempDir Path dir) throws Exception {
        daemon = LiveDaemon.start("name: lak\nnamespaces:\n  u1: {}\n  u2: {}\n", dir);
        assertEquals(List.copyOf(ADDABLE.keySet()), LinkKinds.liveAddable(), "the kinds link add makes");
        int i = 0;
        for (LinkKind<?> k : LinkKinds.all()) {
            String name = "d" + i++;
            List<String> words = new ArrayList<>(List.of("link", "add", name, "type", k.name()));
            if (k.liveAdd() instanceof LiveAdd.Addable) {
                words.addAll(ADDABLE.get(k.name()));
                if (k.name().equals("tap") && !canTap()) {
                    assertTrue(daemon.error("u1", words.toArray(String[]::new)).startsWith("link add " + name
                            + " type tap: "), "the TAP request reached the daemon's TAPs");
                    continue;
                }
                String done = daemon.text("u1", words.toArray(String[]::new));
                assertTrue(done.startsWith("added " + k.name() + " u1/" + name + " "), done);
                JsonNode shown = daemon.ok("u1", "link", "show", name);
                assertEquals(k.name(), shown.get(0).path("kind").asText());
                assertEquals("down", shown.get(0).path("operstate").asText().toLowerCase());
                daemon.ok("u1", "link", "del", name);
            } else {
                String err = daemon.error("u1", words.toArray(String[]::new));
                assertTrue(err.startsWith("link add " + name + ": type " + k.name() + " cannot be added to a running"
                        + " namespace: "), err);
                assertTrue(err.endsWith(" (link add makes veth, bridge or tap)"), err);
                assertEquals(List.of("lo"), daemon.names(daemon.ok("u1", "link", "show"), "ifname"), "nothing added");
            }
        }
        assertEquals(List.of("lo"), daemon.names(daemon.ok("u2", "link", "show"), "ifname"), "the veth's peer went too");
    }

    @Test
    void loopbackIsRefusedWithItsReason(@TempDir Path dir) throws Exception {
        daemon = LiveDaemon.start("name: lak\nnamespaces:\n  u1: {}\n", dir);
        assertEquals("link add lo2: type loopback cannot be added to a running namespace: every namespace has its lo"
                + " from the start, and only that one (link add makes veth, bridge or tap)",
                daemon.error("u1", "link", "add", "lo2", "type", "loopback"));
    }

    @Test
    void anUnknownTypeOrAMissingOneListsTheKinds(@TempDir Path dir) throws Exception {
        daemon = LiveDaemon.start("name: lak\nnamespaces:\n  u1: {}\n", dir);
        assertEquals("link add x0: unknown type 'vxlan' (device kinds: veth, bridge, tap, pcap, loopback, replay; link"
                + " add makes veth, bridge or tap)", daemon.error("u1", "link", "add", "x0", "type", "vxlan"));
        assertEquals("link add x0: missing 'type veth peer [NS/]NAME', 'type bridge' or 'type tap kernel-netns KNS'",
                daemon.error("u1", "link", "add", "x0", "mtu", "1400"));
        assertTrue(daemon.error("u1", "link", "add", "x0", "type").startsWith("missing type (veth, bridge or tap)"));
    }

    @Test
    void aWordOfAnotherKindIsRefusedNamingItsKind(@TempDir Path dir) throws Exception {
        daemon = LiveDaemon.start("name: lak\nnamespaces:\n  u1: {}\n", dir);
        assertEquals("link add b0: kernel-netns, kernel-name and vnet_hdr are for type tap",
                daemon.error("u1", "link", "add", "b0", "type", "bridge", "vnet_hdr"));
        assertEquals("link add v0: kernel-netns, kernel-name and vnet_hdr are for type tap",
                daemon.error("u1", "link", "add", "v0", "kernel-netns", "k", "type", "veth", "peer", "v1"));
        assertEquals("a bridge has no peer", daemon.error("u1", "link", "add", "b0", "type", "bridge", "peer", "x"));
        assertEquals("a tap has no peer: its other end is kernel-name in kernel-netns",
                daemon.error("u1", "link", "add", "t0", "peer", "x", "type", "tap"));
        assertTrue(daemon.error("u1", "link", "add", "b0", "type", "bridge", "sideways").startsWith("unknown word"
                + " 'sideways'"));
        assertEquals(List.of("lo"), daemon.names(daemon.ok("u1", "link", "show"), "ifname"), "nothing added");
    }

    @Test
    void wordsMayComeBeforeTheTypeAndTheSettingsEveryKindTakesApply(@TempDir Path dir) throws Exception {
        daemon = LiveDaemon.start("name: lak\nnamespaces:\n  u1: {}\n", dir);
        assertEquals("added veth u1/v0 <-> u1/v1 (both down)", daemon.text("u1", "link", "add", "v0", "mtu", "1400",
                "peer", "name", "v1", "address", "02:00:00:00:aa:01", "type", "veth"));
        JsonNode v0 = daemon.ok("u1", "link", "show", "v0").get(0);
        assertEquals(1400, v0.path("mtu").asInt());
        assertEquals("02:00:00:00:aa:01", v0.path("address").asText());
        assertEquals(1400, daemon.ok("u1", "link", "show", "v1").get(0).path("mtu").asInt());
    }
}
