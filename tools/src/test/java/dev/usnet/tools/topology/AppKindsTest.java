package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.AppContext;
import dev.usnet.tools.app.AppKind;
import dev.usnet.tools.app.AppKinds;
import dev.usnet.tools.app.PingKind;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.Where;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The registry is the one list of app kinds: what it lists is what a file may name, and an entry or app of a kind it
 * does not list is refused loudly, never taken for another kind.
 */
class AppKindsTest {
    /** An entry of a kind nobody registered. */
    private record Unregistered(Where where) implements TopologySpec.App {
        @Override
        public String kind() {
            return "udp-discard";
        }
    }

    /** A kind whose name is one already taken. */
    private static final class SecondPing implements AppKind<TopologySpec.Ping> {
        @Override
        public String name() {
            return "ping";
        }

        @Override
        public Set<String> keys() {
            return Set.of("kind");
        }

        @Override
        public Class<TopologySpec.Ping> specType() {
            return TopologySpec.Ping.class;
        }

        @Override
        public Order order() {
            return Order.SENDER;
        }

        @Override
        public TopologySpec.Ping read(YamlMap m) {
            return null;
        }

        @Override
        public App create(AppContext c, String ns, TopologySpec.Ping spec) {
            return null;
        }
    }

    @Test
    void everyRegisteredKindIsOneAFileMayName() {
        assertEquals(List.of("ping", "udp-send", "udp-sink", "stream", "rr", "burst", "spawn", "mpi", "udp-echo", "http-server",
                "http-get"),
                AppKinds.names());
        for (AppKind<?> k : AppKinds.all()) {
            assertTrue(k.keys().contains("kind"), k.name());
            assertEquals(k, AppKinds.byName(k.name()));
        }
    }

    @Test
    void anEntryOfAnUnregisteredKindIsRefusedNotMadeASink() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> AppKinds.create(new AppContext(null, false, 0), "a", new Unregistered(null)));
        assertTrue(e.getMessage().startsWith("no registered app kind reads Unregistered entries (kind udp-discard;"
                + " registered: ping, udp-send, udp-sink,"), e.getMessage());
    }

    @Test
    void anEntryOfAnotherTypeUnderARegisteredNameIsRefused() {
        TopologySpec.App fake = new TopologySpec.App() {
            @Override
            public Where where() {
                return null;
            }

            @Override
            public String kind() {
                return "udp-sink";
            }
        };
        assertThrows(IllegalStateException.class, () -> AppKinds.create(new AppContext(null, false, 0), "a", fake));
    }

    @Test
    void twoKindsOfOneNameAreRefused() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> AppKinds.index(List.of(new PingKind(), new SecondPing())));
        assertEquals("two app kinds are named ping", e.getMessage());
    }

    @Test
    void anUnknownKindInAFileNamesTheLineTheKeyAndTheKinds() {
        TopologyException e = assertThrows(TopologyException.class, () -> TopologyFile.parse("t.yaml", """
                version: 1
                namespaces:
                  a:
                    apps:
                      - {kind: udp-discard, port: 9}
                """));
        assertTrue(e.getMessage().contains("t.yaml:5: namespaces.a.apps[0].kind: expected one of ping, udp-send, udp-sink,"
                + " stream, rr, burst, spawn, mpi, udp-echo, http-server, http-get, got \"udp-discard\""), e.getMessage());
    }
}
