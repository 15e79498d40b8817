package dev.usnet.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.pcap4j.core.PcapHandle;
import org.pcap4j.core.Pcaps;
import org.pcap4j.packet.namednumber.DataLinkType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The CLI's libraries log through SLF4J to stderr: warnings and errors only, no INFO chatter. */
class LibraryLoggingTest {

    @Test
    void libraryLoggersSayWarningsButNotInfo() {
        Logger l = LoggerFactory.getLogger("org.pcap4j.core.NativeMappings");
        assertTrue(l.isWarnEnabled());
        assertFalse(l.isInfoEnabled());
    }

    @Test
    void loadingPcap4jAndOpeningAHandlePrintsNothing() throws Exception {
        PrintStream saved = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        String version;
        try {
            System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
            try {
                version = Pcaps.libVersion();
            } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
                Assumptions.abort("no libpcap here: " + e);
                return;
            }
            // A dead handle: pcap4j logs its properties and "Closed." at INFO, and touches no interface.
            PcapHandle h = Pcaps.openDead(DataLinkType.EN10MB, 65536);
            h.close();
        } finally {
            System.setErr(saved);
        }
        assertTrue(version.startsWith("libpcap"), version);
        List<String> lines = buf.toString(StandardCharsets.UTF_8).lines()
                .filter(s -> s.contains("org.pcap4j")).toList();
        assertEquals(List.of(), lines);
    }
}
