package dev.usnet.core.nftables;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.netfilter.IpConntrackInfo;
import dev.usnet.core.netfilter.IpConntrackStatus;
import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfVerdict;
import dev.usnet.core.stats.DropReason;
import dev.usnet.core.testing.Frames;
import dev.usnet.core.testing.TwoPortRouter;
import dev.usnet.core.wire.Checksum;
import dev.usnet.core.wire.EthernetFrame;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.Ipv4Packet;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Rules on packets through a router (h1 - r1 [r] r2 - h2): verdicts and policies, connection state from a
 * stand-in tracker at the conntrack priority, counters, jump, goto and return, marks, reject's ICMP error and TCP
 * reset byte for byte, and NAT statements' calls.
 */
class NftEvalTest {
    static final long R1 = TwoPortRouter.R1;
    static final long R2 = TwoPortRouter.R2;
    static final long H1 = TwoPortRouter.H1;
    static final long H2 = TwoPortRouter.H2;

    private static final class Router extends TwoPortRouter {
        final NftFakes.Conntrack ct = new NftFakes.Conntrack();
        final NftFakes.Nat nat = new NftFakes.Nat();
        final Nftables nft;
        /** What the stand-in tracker gives every packet: an entry (or none) and its ctinfo. */
        NftFakes.Entry entry;
        int ctinfo;

        Router() {
            r.ipv4().netfilter().install(ct, nat);
            r.ipv4().netfilter().hooks().register(NfHook.PRE_ROUTING, NfIpPriority.CONNTRACK, (p, st) -> {
                if (entry != null) {
                    p.setNfct(entry, ctinfo);
                }
                return NfVerdict.ACCEPT;
            });
            nft = new Nftables(r.ipv4());
        }

        @Override
        public void close() {
            nft.close();
            super.close();
        }
    }

    /** An Ethernet + IPv4 + UDP frame from h1 to {@code dst} with the ports given and valid checksums. */
    static byte[] udp(String src, String dst, int sport, int dport, int payloadLen) {
        return l4(src, dst, Ipv4Packet.PROTO_UDP, 8 + payloadLen, (b, t, s, d) -> {
            b.setShort(t, sport);
            b.setShort(t + 2, dport);
            b.setShort(t + 4, 8 + payloadLen);
        });
    }

    /** A TCP segment from h1 (no options) with {@code flags}, sequence and acknowledgment numbers and payload. */
    static byte[] tcp(String src, String dst, int sport, int dport, int seq, int ack, int flags, int payloadLen) {
        return l4(src, dst, Ipv4Packet.PROTO_TCP, 20 + payloadLen, (b, t, s, d) -> {
            b.setShort(t, sport);
            b.setShort(t + 2, dport);
            b.setInt(t + 4, seq);
            b.setInt(t + 8, ack);
            b.setByte(t + 12, 5 << 4);
            b.setByte(t + 13, flags);
            b.setShort(t + 14, 64240);
        });
    }

    interface Fill {
        void fill(ByteBuf b, int t, int s, int d);
    }

    private static byte[] l4(String src, String dst, int proto, int l4len, Fill fill) {
        int len = 14 + 20 + l4len;
        ByteBuf b = Unpooled.buffer(len);
        b.writerIndex(len);
        EthernetFrame.write(b, 0, R1, H1, EthernetFrame.ETH_P_IP);
        int s = Ipv4Addr.parse(src);
        int d = Ipv4Addr.parse(dst);
        int t = 34;
        for (int i = 0; i < l4len; i++) {
            b.setByte(t + i, 'a' + (i % 26));
        }
        fill.fill(b, t, s, d);
        int csumAt = proto == Ipv4Packet.PROTO_TCP ? 16 : 6;
        b.setShort(t + csumAt, 0);
        b.setShort(t + csumAt, Checksum.finish(Checksum.add(b, t, l4len, Checksum.pseudoHeader(s, d, proto, l4len))));
        Ipv4Packet.writeHeader(b, 14, 0, 20 + l4len, 7, 0, 64, proto, s, d);
        byte[] a = new byte[len];
        b.getBytes(0, a);
        b.release();
        return a;
    }

    @Test
    void forwardPolicyDropLetsThroughOnlyWhatRulesAccept() {
        try (Router t = new Router()) {
            t.nft.apply("""
                    table ip filter {
                        chain forward {
                            type filter hook forward priority filter; policy drop;
                            ct state established,related accept
                            ct state invalid counter drop
                            iifname "r1" oifname "r2" ct state new udp dport 53 accept
                        }
                    }
                    """);
            // Without an entry the packet is invalid.
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 53, 10));
            t.net.settle();
            assertEquals(0, t.w2.received.size());
            assertArrayEquals(new long[] {1, 38}, t.nft.counter("filter", "forward", 3));
            t.entry = new NftFakes.Entry();
            t.ctinfo = IpConntrackInfo.NEW;
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 53, 10));
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 54, 10));
            t.net.settle();
            assertEquals(1, t.w2.received.size(), "new to port 53 accepted, to 54 left to the drop policy");
            t.ctinfo = IpConntrackInfo.ESTABLISHED_REPLY;
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 54, 10));
            t.net.settle();
            assertEquals(2, t.w2.received.size(), "established (reply direction) accepted");
            assertEquals(2, t.r.drops().get(DropReason.NETFILTER_DROP));
            assertEquals(1, t.ct.users);
        }
    }

    @Test
    void countersCountPacketsAndIpBytesAndListAsNftDoes() {
        try (Router t = new Router()) {
            t.nft.apply("""
                    table ip t {
                        chain c {
                            type filter hook forward priority 0; policy accept;
                            ip saddr 198.18.1.0/24 ip daddr { 198.18.2.2, 198.18.2.3 } counter
                            udp dport 1000-2000 counter
                            ip saddr != 198.18.1.0/24 counter
                        }
                    }
                    """);
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 1500, 100));
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 2001, 0));
            t.w1.send(udp("198.18.1.2", "198.18.2.9", 4000, 1000, 0));
            t.net.settle();
            assertEquals(3, t.w2.received.size());
            String l = t.nft.listRuleset(false);
            assertTrue(l.contains("ip saddr 198.18.1.0/24 ip daddr { 198.18.2.2, 198.18.2.3 } counter packets 2 bytes 156\n"), l);
            assertTrue(l.contains("udp dport 1000-2000 counter packets 2 bytes 156\n"), l);
            assertTrue(l.contains("ip saddr != 198.18.1.0/24 counter packets 0 bytes 0\n"), l);
            // The CPU model's count: three rules for each of the three packets (none ends the chain early).
            assertEquals(9, t.r.cpu().nftRules());
        }
    }

    @Test
    void jumpReturnsAfterTheJumpGotoDoesNotAndTheEndOfTheBaseChainGivesThePolicy() {
        try (Router t = new Router()) {
            t.nft.apply("""
                    table ip t {
                        chain c {
                            type filter hook forward priority 0; policy drop;
                            udp dport 1 jump mark
                            meta mark 0x7 counter accept
                            udp dport 2 goto mark
                            counter
                        }
                        chain mark {
                            meta mark set 0x7
                            udp dport 2 return
                            counter
                        }
                    }
                    """);
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 1, 0));
            t.net.settle();
            assertEquals(1, t.w2.received.size(), "marked in the jumped-to chain, accepted after the return");
            // Handles: chains c 1 and mark 2, then c's rules 3-6 and mark's 7-9.
            assertArrayEquals(new long[] {1, 28}, t.nft.counter("t", "c", 4));
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 2, 0));
            t.net.settle();
            // goto: the return ends the goto'd chain and with it the base chain: the policy, drop; the base
            // chain's rules after the goto are not reached.
            assertEquals(1, t.w2.received.size());
            assertArrayEquals(new long[] {0, 0}, t.nft.counter("t", "c", 6));
            assertArrayEquals(new long[] {1, 28}, t.nft.counter("t", "mark", 9), "only the jumped packet got past the return");
            assertEquals(1, t.r.drops().get(DropReason.NETFILTER_DROP));
        }
    }

    @Test
    void ctStatusAndMarksReadAndWriteTheEntry() {
        try (Router t = new Router()) {
            t.entry = new NftFakes.Entry();
            t.entry.status = IpConntrackStatus.DST_NAT | IpConntrackStatus.CONFIRMED;
            t.ctinfo = IpConntrackInfo.ESTABLISHED;
            t.nft.apply("""
                    table ip t {
                        chain c {
                            type filter hook forward priority 0; policy drop;
                            ct status snat drop
                            ct mark 0x0 ct status dnat ct mark set 0x42 meta mark set 0x9
                            ct mark 0x42 meta mark 0x9 tcp flags syn / syn,ack accept
                        }
                    }
                    """);
            t.w1.send(tcp("198.18.1.2", "198.18.2.2", 4000, 80, 1, 0, 0x02, 0));
            t.net.settle();
            assertEquals(1, t.w2.received.size());
            assertEquals(0x42, t.entry.mark);
            t.w1.send(tcp("198.18.1.2", "198.18.2.2", 4000, 80, 1, 1, 0x12, 0));
            t.net.settle();
            assertEquals(1, t.w2.received.size(), "syn,ack does not match syn / syn,ack");
        }
    }

    @Test
    void rejectAnswersWithPortUnreachableOrTheCodeGivenAndDropsThePacket() {
        try (Router t = new Router()) {
            t.nft.apply("""
                    table ip t {
                        chain c {
                            type filter hook forward priority 0; policy accept;
                            udp dport 9 reject
                            udp dport 10 reject with icmp type admin-prohibited
                            icmp type echo-request reject with icmp host-unreachable
                        }
                    }
                    """);
            byte[] sent = udp("198.18.1.2", "198.18.2.2", 4000, 9, 4);
            t.w1.send(sent);
            t.net.settle();
            assertEquals(0, t.w2.received.size());
            assertEquals(1, t.w1.received.size());
            byte[] e = t.w1.received.getFirst().data();
            assertEquals(Ipv4Addr.parse("198.18.1.1"), Frames.u32(e, 14 + 12), "from the router's address toward h1");
            assertEquals(Ipv4Addr.parse("198.18.1.2"), Frames.u32(e, 14 + 16));
            assertEquals(3, e[34] & 0xff);
            assertEquals(3, e[35] & 0xff);
            ByteBuf eb = Unpooled.wrappedBuffer(e);
            assertTrue(Checksum.verify(eb, 14, 20), "IP header checksum");
            assertTrue(Checksum.verify(eb, 34, e.length - 34), "ICMP checksum");
            // The quoted datagram is the one h1 sent, as the router saw it (after its TTL decrement at forward).
            assertEquals(Ipv4Addr.parse("198.18.2.2"), Frames.u32(e, 42 + 16));
            assertEquals(1, t.r.drops().get(DropReason.NETFILTER_DROP));
            t.net.run(2_000_000_000L);
            t.w1.clear();
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 10, 4));
            t.net.settle();
            assertEquals(13, t.w1.received.getFirst().data()[35] & 0xff);
        }
    }

    @Test
    void tcpResetIsBuiltAsLinuxBuildsIt() {
        try (Router t = new Router()) {
            t.nft.apply("add table t\nadd chain t c { type filter hook forward priority 0; }\n"
                    + "add rule t c tcp dport 80 reject with tcp reset");
            // A SYN: the reset acknowledges it (seq 0, ack = seq + 1, RST|ACK).
            t.w1.send(tcp("198.18.1.2", "198.18.2.2", 40000, 80, 1000, 0, 0x02, 0));
            t.net.settle();
            assertEquals(0, t.w2.received.size());
            assertEquals(1, t.w1.received.size());
            byte[] f = t.w1.received.getFirst().data();
            ByteBuf b = Unpooled.wrappedBuffer(f);
            assertEquals(14 + 40, f.length);
            assertEquals(H1, ((long) Frames.u16(f, 0) << 32) | (Frames.u32(f, 2) & 0xffff_ffffL));
            assertEquals(0x45, f[14] & 0xff);
            assertEquals(0, f[15]);
            assertEquals(40, Frames.u16(f, 16));
            assertEquals(0, Frames.u16(f, 18), "IP id 0");
            assertEquals(Ipv4Packet.FLAG_DF, Frames.u16(f, 20));
            assertEquals(64, f[22] & 0xff, "net.ipv4.ip_default_ttl");
            assertEquals(6, f[23]);
            assertTrue(Checksum.verify(b, 14, 20), "IP header checksum");
            assertEquals(Ipv4Addr.parse("198.18.2.2"), Frames.u32(f, 26), "from the address the SYN went to");
            assertEquals(Ipv4Addr.parse("198.18.1.2"), Frames.u32(f, 30));
            assertEquals(80, Frames.u16(f, 34));
            assertEquals(40000, Frames.u16(f, 36));
            assertEquals(0, Frames.u32(f, 38));
            assertEquals(1001, Frames.u32(f, 42));
            assertEquals(0x50, f[46] & 0xff);
            assertEquals(0x14, f[47] & 0xff, "RST|ACK");
            assertEquals(0, Frames.u16(f, 48), "window 0");
            assertEquals(0, Checksum.finish(Checksum.add(b, 34, 20, Checksum.pseudoHeader(Frames.u32(f, 26),
                    Frames.u32(f, 30), 6, 20))), "TCP checksum");
            // A segment with ACK and data: the reset's sequence number is its acknowledgment number, no ACK.
            t.w1.clear();
            t.w1.send(tcp("198.18.1.2", "198.18.2.2", 40000, 80, 5000, 0x8000_0001, 0x18, 100));
            t.net.settle();
            byte[] g = t.w1.received.getFirst().data();
            assertEquals(0x8000_0001, Frames.u32(g, 38));
            assertEquals(0, Frames.u32(g, 42));
            assertEquals(0x04, g[47] & 0xff);
            // A reset is not answered, nor a segment whose checksum is wrong; both are still dropped.
            t.w1.clear();
            t.w1.send(tcp("198.18.1.2", "198.18.2.2", 40000, 80, 5000, 0, 0x04, 0));
            byte[] bad = tcp("198.18.1.2", "198.18.2.2", 40000, 80, 5000, 0, 0x02, 0);
            bad[50] ^= 1;
            t.w1.send(bad);
            t.net.settle();
            assertEquals(0, t.w1.received.size());
            assertEquals(0, t.w2.received.size());
            assertEquals(4, t.r.drops().get(DropReason.NETFILTER_DROP));
            // A UDP datagram does not match the hidden "meta l4proto tcp" of reject with tcp reset.
            t.nft.apply("add rule t c reject with tcp reset");
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 80, 0));
            t.net.settle();
            assertEquals(1, t.w2.received.size());
        }
    }

    @Test
    void evaluationAllocatesNothingPerPacket() {
        try (Router t = new Router()) {
            t.entry = new NftFakes.Entry();
            t.nft.apply("""
                    table ip t {
                        chain c {
                            type filter hook forward priority 0; policy accept;
                            iifname "r1" oifname != "r9" ip saddr 198.18.1.0/24 ip daddr { 198.18.2.2, 198.18.2.3 } counter jump sub
                            ct state new meta mark 0x5 tcp dport { 80, 443 } accept
                        }
                        chain sub {
                            tcp dport 1-100 tcp flags syn / syn,ack meta mark set 0x5 ct mark set 0x1
                            return
                        }
                    }
                    """);
            byte[] frame = tcp("198.18.1.2", "198.18.2.2", 40000, 80, 1, 0, 0x02, 0);
            // A plain heap buffer: the leak detector (paranoid in tests) records every access to a tracked one.
            dev.usnet.core.buf.Packet p = dev.usnet.core.buf.Packet.wrap(Unpooled.wrappedBuffer(frame));
            p.setNetwork(p.start() + 14);
            p.setNfct(t.entry, IpConntrackInfo.NEW);
            var hooks = t.r.ipv4().netfilter().hooks();
            var mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            long tid = Thread.currentThread().threadId();
            try {
                for (int i = 0; i < 50_000; i++) {
                    hooks.run(NfHook.FORWARD, p, t.w1.dutEnd, t.w2.dutEnd);
                }
                long before = mx.getThreadAllocatedBytes(tid);
                for (int i = 0; i < 100_000; i++) {
                    if (hooks.run(NfHook.FORWARD, p, t.w1.dutEnd, t.w2.dutEnd) != p) {
                        throw new AssertionError("the packet was not accepted");
                    }
                }
                long allocated = mx.getThreadAllocatedBytes(tid) - before;
                assertTrue(allocated < 10_000, allocated + " bytes allocated for 100 000 packets");
                assertEquals(0x5, p.mark());
                assertEquals(1, t.entry.mark);
                // Handle 3 went to the anonymous set of the rule, which took 4.
                assertArrayEquals(new long[] {150_000, 150_000L * 40}, t.nft.counter("t", "c", 4));
            } finally {
                p.release();
            }
        }
    }

    @Test
    void natStatementsCallNatWithTheRangeAndTheOutputDevice() {
        try (Router t = new Router()) {
            List<String> seen = new ArrayList<>();
            // The stand-in NAT runs registered chains at the hook itself (the real one runs them per connection).
            t.r.ipv4().netfilter().install(t.ct, new NftFakes.Nat() {
                @Override
                public void registerChain(NfHook hook, int priority, dev.usnet.core.netfilter.NfHookOps chain) {
                    super.registerChain(hook, priority, chain);
                    t.r.ipv4().netfilter().hooks().register(hook, priority, chain);
                }

                @Override
                public int masquerade(dev.usnet.core.buf.Packet p, dev.usnet.core.netfilter.NfNatRange range,
                                      dev.usnet.core.device.Device out) {
                    seen.add("masquerade out=" + out.name() + " " + range);
                    return NfVerdict.ACCEPT;
                }

                @Override
                public int setup(dev.usnet.core.buf.Packet p, dev.usnet.core.netfilter.NfNatRange range, boolean source) {
                    seen.add((source ? "snat " : "dnat ") + range);
                    return NfVerdict.ACCEPT;
                }
            });
            t.nft.apply("""
                    table ip nat {
                        chain pre {
                            type nat hook prerouting priority dstnat;
                            udp dport 53 dnat to 198.18.2.2:5353
                        }
                        chain post {
                            type nat hook postrouting priority srcnat;
                            oifname "r2" udp dport 99 masquerade to :2000-2001
                            oifname "r2" snat to 198.18.2.1
                        }
                    }
                    """);
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 53, 0));
            t.w1.send(udp("198.18.1.2", "198.18.2.2", 4000, 99, 0));
            t.net.settle();
            assertEquals(List.of(
                    "dnat NfNatRange[flags=3, minAddr=" + Ipv4Addr.parse("198.18.2.2") + ", maxAddr="
                            + Ipv4Addr.parse("198.18.2.2") + ", minPort=5353, maxPort=5353]",
                    "snat NfNatRange[flags=1, minAddr=" + Ipv4Addr.parse("198.18.2.1") + ", maxAddr="
                            + Ipv4Addr.parse("198.18.2.1") + ", minPort=0, maxPort=0]",
                    "masquerade out=r2 NfNatRange[flags=2, minAddr=0, maxAddr=0, minPort=2000, maxPort=2001]"), seen);
            assertEquals(2, t.w2.received.size());
            assertNotNull(t.nft.listTable("nat", false));
        }
    }
}
