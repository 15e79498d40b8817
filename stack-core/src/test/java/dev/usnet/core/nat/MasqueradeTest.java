package dev.usnet.core.nat;

import static dev.usnet.core.nat.NatFrames.a;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import org.junit.jupiter.api.Test;

/** Which address masquerade takes: the outgoing device's, chosen for the next hop, or none. */
class MasqueradeTest {
    @Test
    void theOutgoingDevicesAddressOnTheNextHopsSubnetIsTaken() {
        try (TestNet net = new TestNet()) {
            NetStack r = net.ns("r");
            TestNet.Wire up = net.wire(r, "up", 0x0200_0000_0101L);
            TestNet.Wire lan = net.wire(r, "lan", 0x0200_0000_0102L);
            TestNet.addr(r, lan.dutEnd, "10.0.0.1/24");
            TestNet.addr(r, up.dutEnd, "198.18.0.1/24");
            TestNet.addr(r, up.dutEnd, "198.18.7.1/24");
            Masquerade m = new Masquerade(r.ipv4());
            assertEquals(a("198.18.7.1"), m.source(up.dutEnd, a("198.18.7.254")));
            assertEquals(a("198.18.0.1"), m.source(up.dutEnd, a("198.18.0.254")));
            // A next hop on none of its subnets: the device's first primary address, never the other device's.
            assertEquals(a("198.18.0.1"), m.source(up.dutEnd, a("198.19.9.9")));
        }
    }

    @Test
    void aDeviceWithoutAddressBorrowsAnotherDevicesButNeverLoopbacks() {
        try (TestNet net = new TestNet()) {
            NetStack r = net.ns("r");
            TestNet.Wire up = net.wire(r, "up", 0x0200_0000_0101L);
            TestNet.Wire lan = net.wire(r, "lan", 0x0200_0000_0102L);
            Masquerade m = new Masquerade(r.ipv4());
            assertEquals(0, m.source(up.dutEnd, a("198.18.0.254")), "only loopback's address: none to masquerade with");
            TestNet.addr(r, lan.dutEnd, "10.0.0.1/24");
            assertEquals(a("10.0.0.1"), m.source(up.dutEnd, a("198.18.0.254")));
        }
    }

    @Test
    void theRangeKeepsTheRulesPortsAndFlagsWithTheOneAddress() {
        NfNatRange rule = new NfNatRange(NfNatRange.PROTO_SPECIFIED | NfNatRange.PROTO_RANDOM, 0, 0, 1024, 65535);
        NfNatRange r = Masquerade.range(rule, a("198.18.0.1"));
        assertEquals(NfNatRange.MAP_IPS | NfNatRange.PROTO_SPECIFIED | NfNatRange.PROTO_RANDOM, r.flags());
        assertEquals(a("198.18.0.1"), r.minAddr());
        assertEquals(a("198.18.0.1"), r.maxAddr());
        assertEquals(1024, r.minPort());
        assertEquals(65535, r.maxPort());
        assertTrue(Masquerade.leavesAlone(0));
        assertFalse(Masquerade.leavesAlone(a("10.0.0.1")));
    }
}
