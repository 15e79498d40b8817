package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.topology.file.CaptureFilter;
import org.junit.jupiter.api.Test;

/** The pcap-filter subset of capture checks: what each primitive matches, precedence, and errors by column. */
class CaptureFilterTest {
    /** An Ethernet + IPv4 frame: protocol, addresses, and for TCP/UDP ports (and TCP flags). */
    private static byte[] ip(int proto, String src, String dst, int sport, int dport, int tcpFlags) {
        int l4 = proto == 6 ? 20 : proto == 17 ? 8 : 8;
        byte[] f = new byte[14 + 20 + l4];
        f[12] = 0x08;
        f[13] = 0x00;
        f[14] = 0x45;
        f[16] = 0;
        f[17] = (byte) (20 + l4);
        f[22] = 64;
        f[23] = (byte) proto;
        put(f, 26, dev.usnet.core.wire.Ipv4Addr.parse(src));
        put(f, 30, dev.usnet.core.wire.Ipv4Addr.parse(dst));
        if (proto == 6 || proto == 17) {
            f[34] = (byte) (sport >> 8);
            f[35] = (byte) sport;
            f[36] = (byte) (dport >> 8);
            f[37] = (byte) dport;
        }
        if (proto == 6) {
            f[46] = 0x50;
            f[47] = (byte) tcpFlags;
        }
        if (proto == 1) {
            f[34] = (byte) sport; // the ICMP type
        }
        for (int i = 0; i < 6; i++) {
            f[i] = (byte) (i == 0 ? 2 : i == 5 ? 0x0a : 0);
            f[6 + i] = (byte) (i == 0 ? 2 : i == 5 ? 0x0b : 0);
        }
        return f;
    }

    private static byte[] arp(String sender, String target) {
        byte[] f = new byte[42];
        f[12] = 0x08;
        f[13] = 0x06;
        put(f, 14 + 14, dev.usnet.core.wire.Ipv4Addr.parse(sender));
        put(f, 14 + 24, dev.usnet.core.wire.Ipv4Addr.parse(target));
        return f;
    }

    private static void put(byte[] f, int at, int v) {
        f[at] = (byte) (v >>> 24);
        f[at + 1] = (byte) (v >>> 16);
        f[at + 2] = (byte) (v >>> 8);
        f[at + 3] = (byte) v;
    }

    private static final byte[] SYN = ip(6, "198.19.1.1", "198.18.27.10", 1024, 80, 0x02);
    private static final byte[] SYN_ACK = ip(6, "198.18.27.10", "198.19.1.1", 80, 1024, 0x12);
    private static final byte[] RST = ip(6, "198.18.27.10", "198.19.1.1", 80, 1024, 0x14);
    private static final byte[] DNS = ip(17, "198.18.27.10", "198.18.26.53", 5353, 53, 0);
    private static final byte[] TIME_EXCEEDED = ip(1, "198.18.26.1", "198.19.200.7", 11, 0, 0);
    private static final byte[] ECHO = ip(1, "198.19.200.7", "198.18.27.10", 8, 0, 0);
    private static final byte[] ARP = arp("198.18.26.2", "198.18.26.1");

    private static boolean m(String filter, byte[] frame) {
        return CaptureFilter.parse(filter).matches(frame);
    }

    @Test
    void protocols() {
        assertTrue(m("ether", ARP));
        assertTrue(m("tcp", SYN));
        assertFalse(m("udp", SYN));
        assertTrue(m("udp", DNS));
        assertTrue(m("icmp", ECHO));
        assertTrue(m("ip", DNS));
        assertFalse(m("ip", ARP));
        assertTrue(m("arp", ARP));
        assertFalse(m("arp", SYN));
    }

    @Test
    void hostsNetsAndPorts() {
        assertTrue(m("host 198.18.27.10", SYN));
        assertTrue(m("host 198.18.27.10", RST));
        assertTrue(m("dst host 198.18.27.10", SYN));
        assertFalse(m("src host 198.18.27.10", SYN));
        assertTrue(m("host 198.18.26.1", ARP), "host covers ARP's sender and target");
        assertTrue(m("src host 198.18.26.2", ARP));
        assertTrue(m("net 198.19.0.0/16", SYN));
        assertFalse(m("src net 198.18.0.0/16", SYN));
        assertTrue(m("dst net 198.18.0.0/15", SYN));
        assertTrue(m("port 80", SYN) && m("port 80", RST));
        assertTrue(m("dst port 80", SYN));
        assertFalse(m("dst port 80", RST));
        assertTrue(m("src port 80", RST));
        assertFalse(m("port 80", ECHO));
        assertTrue(m("udp dst port 53", DNS));
        assertFalse(m("tcp dst port 53", DNS));
        assertTrue(m("ip host 198.18.26.53", DNS));
        assertFalse(m("ip host 198.18.26.1", ARP), "ip narrows host to IPv4");
        assertTrue(m("ether src 02:00:00:00:00:0b", SYN));
        assertFalse(m("ether dst 02:00:00:00:00:0b", SYN));
    }

    @Test
    void tcpFlagsAndIcmpTypes() {
        assertTrue(m("tcp[tcpflags] & tcp-syn != 0", SYN));
        assertTrue(m("tcp[tcpflags] & tcp-syn != 0", SYN_ACK));
        assertTrue(m("tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn", SYN));
        assertFalse(m("tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn", SYN_ACK));
        assertTrue(m("tcp[13] & 0x04 != 0", RST));
        assertTrue(m("tcp-rst", RST));
        assertFalse(m("tcp-rst", SYN));
        assertTrue(m("tcp-syn and tcp-ack", SYN_ACK));
        assertFalse(m("tcp-syn", DNS), "a flag word is false for what is not TCP");
        assertTrue(m("icmp[icmptype] == icmp-timxceed", TIME_EXCEEDED));
        assertFalse(m("icmp[icmptype] == icmp-timxceed", ECHO));
        assertTrue(m("icmp[icmptype] != icmp-echoreply", ECHO));
        assertTrue(m("icmp[icmptype] == 8", ECHO));
    }

    @Test
    void andBindsTighterThanOrAndNotTighterThanAnd() {
        // or(and(udp, port 80), tcp): a SYN passes through the second branch.
        assertTrue(m("udp and port 80 or tcp", SYN));
        assertFalse(m("udp and (port 80 or tcp)", SYN));
        assertTrue(m("not udp and tcp", SYN));
        assertFalse(m("not (udp or tcp)", SYN));
        assertTrue(m("! udp && tcp || arp", ARP));
        assertTrue(m("tcp and not tcp-rst and dst port 80", SYN));
        assertFalse(m("tcp and not tcp-rst and src port 80", RST));
    }

    @Test
    void errorsNameTheColumn() {
        assertEquals("column 6: expected an IPv4 address like 198.18.0.1, got '80'",
                assertThrows(IllegalArgumentException.class, () -> CaptureFilter.parse("host 80")).getMessage());
        assertEquals("column 10: capture filters match IPv4 addresses only so far (no ip6 primitives yet), got"
                + " '2001:db8::1'", assertThrows(IllegalArgumentException.class,
                () -> CaptureFilter.parse("src host 2001:db8::1")).getMessage());
        assertEquals("column 10: expected a port number 0..65535, got '70000'",
                assertThrows(IllegalArgumentException.class, () -> CaptureFilter.parse("tcp port 70000")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CaptureFilter.parse("tcp and vlan"))
                .getMessage().startsWith("column 9: unknown word 'vlan'"));
        assertEquals("column 12: expected ')', got the end of the filter",
                assertThrows(IllegalArgumentException.class, () -> CaptureFilter.parse("(tcp or udp")).getMessage());
        assertEquals("column 5: expected 'and', 'or' or the end of the filter, got 'udp'",
                assertThrows(IllegalArgumentException.class, () -> CaptureFilter.parse("tcp udp")).getMessage());
        assertEquals("column 5: 'host' cannot follow this protocol (expected port)",
                assertThrows(IllegalArgumentException.class, () -> CaptureFilter.parse("tcp host 198.18.0.1")).getMessage());
        assertEquals("column 5: '198.18.0.1/16' has host bits set (non-network bits of netmask)",
                assertThrows(IllegalArgumentException.class, () -> CaptureFilter.parse("net 198.18.0.1/16")).getMessage());
        assertEquals("column 1: the filter is empty",
                assertThrows(IllegalArgumentException.class, () -> CaptureFilter.parse("  ")).getMessage());
    }
}
