package dev.usnet.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.Knobs;
import dev.usnet.tcp.cc.KernelPreset;
import org.junit.jupiter.api.Test;

/** TCP's knobs are TCP's own: declared here, found by name through the SysctlTable service, read typed. */
class TcpSysctlTest {
    @Test
    void tcpKnobsAreKnownByNameWithoutTcpHavingRun() {
        // The registry finds TCP's table on the class path; nothing here touches Tcp or TcpSock first.
        assertTrue(Knobs.known().contains("net.ipv4.tcp_congestion_control"));
        var e = assertThrows(IllegalArgumentException.class,
                () -> new Knobs().set("net.ipv4.tcp_congestion_contrl", "cubic"));
        assertEquals("unknown knob 'net.ipv4.tcp_congestion_contrl' (did you mean 'net.ipv4.tcp_congestion_control'?)",
                e.getMessage());
        assertSame(TcpSysctl.SACK, Knobs.declared("net.ipv4.tcp_sack"));
    }

    @Test
    void whatAConnectionReadsWhenItOpensAppliesToNewSocketsTheRestAtOnce() {
        assertEquals(Knob.Applies.NEW_SOCKETS, Knobs.applies("net.ipv4.tcp_sack"));
        assertEquals(Knob.Applies.NEW_SOCKETS, Knobs.applies("usnet.tcp.kernel"));
        assertEquals(Knob.Applies.NEW_SOCKETS, Knobs.applies("usnet.tcp.cubic_idle_shift"));
        assertEquals(Knob.Applies.LIVE, Knobs.applies("usnet.tcp.rto_min_ms"), "read at every RTT sample");
        assertEquals(Knob.Applies.LIVE, Knobs.applies("net.ipv4.tcp_retries2"), "read when the RTO fires");
    }

    @Test
    void wordsAndListsAreParsedWhenSetAndNormalized() {
        Knobs k = new Knobs();
        k.set("usnet.tcp.kernel", "4.2");
        assertEquals(KernelPreset.V4_0, k.get(TcpSysctl.KERNEL), "4.1 and 4.2 behave as 4.0");
        assertEquals("4.0", k.get("usnet.tcp.kernel"));
        k.set("net.ipv4.tcp_rmem", " 4096   87380  0x600000 ");
        assertEquals(new TcpSysctl.TcpMem(4096, 87380, 6291456), k.get(TcpSysctl.RMEM));
        assertEquals("4096 87380 6291456", k.get("net.ipv4.tcp_rmem"));
        k.set("usnet.tcp.ai", "per-ack");
        assertEquals("per-ack", k.get(TcpSysctl.SWITCHES.get(0)));
    }

    @Test
    void badValuesNameTheKnobAndWhatItTakes() {
        Knobs k = new Knobs();
        assertEquals("usnet.tcp.kernel: '5.10' is not one of 3.18, 3.19, 4.0, 4.3, 6.x",
                assertThrows(IllegalArgumentException.class, () -> k.set("usnet.tcp.kernel", "5.10")).getMessage());
        assertEquals("net.ipv4.tcp_congestion_control: 'bbr' is not one of reno, cubic",
                assertThrows(IllegalArgumentException.class,
                        () -> k.set("net.ipv4.tcp_congestion_control", "bbr")).getMessage());
        assertEquals("net.ipv4.tcp_wmem: expected min <= default <= max, got '4 3 2'",
                assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.tcp_wmem", "4 3 2")).getMessage());
        assertEquals("usnet.tcp.ss_cap: 'ssthresh+2' is not one of ssthresh+1, ssthresh",
                assertThrows(IllegalArgumentException.class, () -> k.set("usnet.tcp.ss_cap", "ssthresh+2")).getMessage());
        assertEquals("net.ipv4.tcp_reordering: 301 is out of range 1..300",
                assertThrows(IllegalArgumentException.class, () -> k.set("net.ipv4.tcp_reordering", "301")).getMessage());
        assertEquals("4.3", k.get("usnet.tcp.kernel"));
    }

    @Test
    void aConnectionReadsItsNamespacesKnobs() {
        try (SegmentHarness h = new SegmentHarness("net.ipv4.tcp_sack", "0", "net.ipv4.tcp_congestion_control", "reno",
                "usnet.tcp.init_cwnd", "4")) {
            TcpSock s = h.accept(SegmentHarness.PeerSyn.linux());
            TcpInfo i = s.info();
            assertEquals("reno", i.congestionControl());
            assertEquals(false, i.sack(), "SACK is not offered, so not used though the peer offered it");
            assertEquals(4, i.cwnd());
        }
    }
}
