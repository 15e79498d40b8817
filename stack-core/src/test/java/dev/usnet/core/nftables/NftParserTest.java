package dev.usnet.core.nftables;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.netfilter.NfHook;
import dev.usnet.core.netfilter.NfIpPriority;
import dev.usnet.core.netfilter.NfNatRange;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.testing.TestNet;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The language: every form of the subset, the listing as nft 1.0.6 prints it (the expected listings were printed
 * by the real nft from the same input, in a throwaway network namespace), errors with their positions, and
 * transactions that change nothing when they fail.
 */
class NftParserTest {
    private final TestNet net = new TestNet();
    private final NetStack ns = net.ns("r");
    private final NftFakes.Conntrack ct = new NftFakes.Conntrack();
    private final NftFakes.Nat nat = new NftFakes.Nat();
    private final Nftables nft;

    NftParserTest() {
        ns.ipv4().netfilter().install(ct, nat);
        nft = new Nftables(ns.ipv4());
    }

    @AfterEach
    void close() {
        nft.close();
        net.close();
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = NftParserTest.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void everyFormOfTheSubsetListsAsNftListsIt() throws IOException {
        nft.apply(resource("subset.nft"));
        assertEquals(resource("subset.nft-list"), nft.listRuleset(false));
        assertEquals(resource("subset.nft-list-a"), nft.listRuleset(true));
    }

    @Test
    void negationsSetsRangesAndPrioritiesWithOffsetsListAsNftListsThem() throws IOException {
        nft.apply(resource("more.nft"));
        assertEquals(resource("more.nft-list"), nft.listRuleset(false));
    }

    @Test
    void aProtocolMatchATransportMatchDependsOnIsLeftOutOfTheListing() throws IOException {
        nft.apply(resource("dependencies.nft"));
        assertEquals(resource("dependencies.nft-list"), nft.listRuleset(false));
    }

    @Test
    void theListingReadsBackToItself() throws IOException {
        nft.apply(resource("subset.nft"));
        String listed = nft.listRuleset(false);
        Nftables again = new Nftables(ns.ipv4());
        try {
            again.apply(listed);
            assertEquals(listed, again.listRuleset(false));
        } finally {
            again.close();
        }
    }

    @Test
    void flatCommandsBuildTheSameAsTheNestedForm() {
        nft.apply("""
                add table ip t
                add chain ip t c { type filter hook forward priority 0 ; policy drop ; }
                add rule ip t c ct state established accept
                add rule ip t c iifname "r1" counter accept
                insert rule ip t c ct state invalid drop
                add chain t sub
                add rule t sub return
                """);
        assertEquals("""
                table ip t {
                	chain c {
                		type filter hook forward priority filter; policy drop;
                		ct state invalid drop
                		ct state established accept
                		iifname "r1" counter packets 0 bytes 0 accept
                	}

                	chain sub {
                		return
                	}
                }
                """, nft.listRuleset(false));
        // Handles: table 1, chain c 1, rules 2 3 4, chain sub 5, its rule 6.
        assertTrue(nft.listRuleset(true).contains("ct state invalid drop # handle 4\n"), nft.listRuleset(true));
        nft.apply("delete rule ip t c handle 2");
        assertEquals(List.of("ct state invalid drop", "iifname \"r1\" counter packets 0 bytes 0 accept", "return"),
                rules(nft.listTable("t", false)));
        nft.apply("add rule ip t c position 4 meta mark 0x1 accept");
        assertEquals(List.of("ct state invalid drop", "meta mark 0x00000001 accept",
                "iifname \"r1\" counter packets 0 bytes 0 accept", "return"), rules(nft.listTable("t", false)));
        nft.apply("flush chain ip t c");
        assertEquals(List.of("return"), rules(nft.listTable("t", false)));
        nft.apply("delete table ip t");
        assertEquals("", nft.listRuleset(false));
        assertNull(nft.listTable("t", false));
    }

    private static List<String> rules(String table) {
        return table.lines().filter(l -> l.startsWith("\t\t") && !l.startsWith("\t\ttype ")).map(String::strip).toList();
    }

    @Test
    void baseChainsRegisterAtTheirHookAndPriorityAndLeaveWhenDeleted() {
        var hooks = ns.ipv4().netfilter().hooks();
        nft.apply("""
                table ip t {
                    chain f { type filter hook forward priority filter + 5; policy accept; }
                    chain m { type filter hook prerouting priority mangle; }
                    chain n { type nat hook postrouting priority srcnat; }
                }
                """);
        assertArrayEquals(new int[] {5}, hooks.priorities(NfHook.FORWARD));
        assertArrayEquals(new int[] {NfIpPriority.MANGLE}, hooks.priorities(NfHook.PRE_ROUTING));
        assertEquals(List.of("register postrouting 100"), nat.calls);
        assertEquals(1, ct.users, "a nat chain uses connection tracking");
        nft.apply("flush ruleset");
        assertEquals(0, hooks.priorities(NfHook.FORWARD).length);
        assertEquals(0, hooks.priorities(NfHook.PRE_ROUTING).length);
        assertEquals(List.of("register postrouting 100", "unregister postrouting"), nat.calls);
        assertEquals(0, ct.users);
    }

    @Test
    void ctMatchesTakeConntrackOnceAndGiveItBackWhenTheLastGoes() {
        nft.apply("add table t\nadd chain t c { type filter hook input priority 0; }\nadd rule t c ct state new accept\n"
                + "add rule t c ct mark 0x1 accept");
        assertEquals(1, ct.users);
        nft.apply("delete rule ip t c handle 2");
        assertEquals(1, ct.users);
        nft.apply("delete rule ip t c handle 3");
        assertEquals(0, ct.users);
        nft.apply("add rule t c meta mark set 0x1");
        assertEquals(0, ct.users, "meta mark needs no connection tracking");
    }

    @Test
    void natStatementsBuildTheirRangesWhenParsed() {
        nft.apply("""
                table ip t {
                    chain pre { type nat hook prerouting priority dstnat; policy accept;
                        tcp dport 80 dnat to 198.19.1.2:8080
                        dnat to 198.19.1.2
                    }
                    chain post { type nat hook postrouting priority srcnat;
                        udp dport 53 snat to 198.18.0.1-198.18.0.4:1024-2000 random,persistent
                        masquerade
                        meta l4proto tcp masquerade to :1024-65535 fully-random
                    }
                }
                """);
        List<NftRule> pre = chain("t", "pre").rules;
        List<NftRule> post = chain("t", "post").rules;
        assertEquals(new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_SPECIFIED, 0xc6130102, 0xc6130102, 8080, 8080),
                ((NftNatExpr) last(pre.get(0))).range);
        assertEquals(new NfNatRange(NfNatRange.MAP_IPS, 0xc6130102, 0xc6130102, 0, 0), ((NftNatExpr) last(pre.get(1))).range);
        assertEquals(new NfNatRange(NfNatRange.MAP_IPS | NfNatRange.PROTO_SPECIFIED | NfNatRange.PROTO_RANDOM
                | NfNatRange.PERSISTENT, 0xc6120001, 0xc6120004, 1024, 2000), ((NftNatExpr) last(post.get(0))).range);
        assertEquals(NfNatRange.NONE, ((NftNatExpr) last(post.get(1))).range);
        assertEquals(new NfNatRange(NfNatRange.PROTO_SPECIFIED | NfNatRange.PROTO_RANDOM_FULLY, 0, 0, 1024, 65535),
                ((NftNatExpr) last(post.get(2))).range);
        assertEquals(List.of("udp dport 53 snat to 198.18.0.1-198.18.0.4:1024-2000 random,persistent", "masquerade",
                "meta l4proto tcp masquerade to :1024-65535 fully-random"), rules(nft.listTable("t", false)).subList(2, 5));
    }

    private NftChain chain(String t, String c) {
        return tableOf(t).chain(c);
    }

    private NftTable tableOf(String t) {
        try {
            var f = Nftables.class.getDeclaredField("tables");
            f.setAccessible(true);
            return ((java.util.Map<String, NftTable>) f.get(nft)).get(t);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static NftExpr last(NftRule r) {
        return r.exprs[r.exprs.length - 1];
    }

    private NftSyntaxException refused(String text) {
        return assertThrows(NftSyntaxException.class, () -> nft.apply(text));
    }

    @Test
    void aMisspelledVerdictIsRefusedWithItsPositionAndWhatWasExpected() {
        NftSyntaxException e = refused("""
                table ip t {
                    chain c {
                        ct state established acept
                    }
                }
                """);
        assertEquals(3, e.line());
        assertEquals(30, e.column());
        assertTrue(e.getMessage().startsWith("line 3, column 30: expected a match or statement (iifname,"), e.getMessage());
        assertTrue(e.getMessage().endsWith("after \"ct state established\", found \"acept\""), e.getMessage());
        NftSyntaxException f = refused("add rule ip t c ct state establishd accept");
        assertEquals("line 1, column 26: expected \"new\", \"established\", \"related\", \"invalid\" or \"untracked\""
                + " after \"ct state\", found \"establishd\"", f.getMessage());
    }

    @Test
    void realNftSyntaxOutsideTheSubsetIsNamedAsNotSupported() {
        assertEquals("line 1, column 17: \"log\" is not supported by usnet",
                refused("add rule ip t c log prefix \"x\" drop").getMessage());
        assertEquals("line 1, column 11: the inet family (usnet has the ip family) is not supported by usnet",
                refused("add table inet f").getMessage());
        assertEquals("line 2, column 33: ip ttl is not supported by usnet",
                refused("table ip t {\n  chain c { ip saddr 1.2.3.4 ip ttl 3 drop }\n}").getMessage());
        assertEquals("line 1, column 20: ct helper is not supported by usnet",
                refused("add rule ip t c ct helper \"ftp\"").getMessage());
        assertEquals("line 1, column 24: a rule's comment is not supported by usnet",
                refused("add rule ip t c accept comment \"x\"").getMessage());
        assertEquals("line 2, column 5: \"set\" in a table is not supported by usnet",
                refused("table ip t {\n    set s { type ipv4_addr; }\n}").getMessage());
    }

    @Test
    void semanticErrorsNameTheirPlaceToo() {
        assertEquals("line 1, column 1: no table ip t", refused("add rule ip t c accept").getMessage());
        nft.apply("add table t\nadd chain t c");
        assertEquals("line 1, column 1: no rule with handle 99 in chain c",
                refused("delete rule ip t c handle 99").getMessage());
        assertEquals("line 1, column 22: no chain nochain in table ip t to jump",
                refused("add rule ip t c jump nochain").getMessage());
        assertEquals("line 1, column 47: conflicting protocols specified: tcp vs. udp",
                refused("add rule ip t c tcp sport 1-1024 tcp dport 22 udp dport 53 accept").getMessage());
        assertEquals("line 2, column 22: transport protocol mapping is only valid after transport protocol match",
                refused("add chain t n { type nat hook postrouting priority srcnat; }\nadd rule t n snat to 198.18.0.1:1024-2000")
                        .getMessage());
        assertEquals("line 1, column 50: priority dstnat is not valid at hook output (dstnat is for prerouting,"
                + " srcnat for postrouting)", refused("add chain t o { type filter hook output priority dstnat; }").getMessage());
        assertEquals("line 3, column 19: jump to c makes a loop (or nests over 16 deep) from chain c",
                refused("add chain t d\nadd rule t c jump d\nadd rule t d goto c").getMessage());
        assertEquals("line 2, column 19: chain b is a base chain: jump and goto go to regular chains",
                refused("add chain t b { type filter hook input priority 0; }\nadd rule t c jump b").getMessage());
    }

    @Test
    void natStatementsSitWhereLinuxAllowsThem() {
        nft.apply("add table t\nadd chain t pre { type nat hook prerouting priority dstnat; }\n"
                + "add chain t f { type filter hook forward priority 0; }");
        assertEquals("line 1, column 1: snat is not valid at hook prerouting (snat: postrouting, input; dnat:"
                + " prerouting, output; masquerade: postrouting)", refused("add rule t pre snat to 198.18.0.1").getMessage());
        assertEquals("line 1, column 1: masquerade is only valid in a nat chain (chain f is type filter)",
                refused("add rule t f masquerade").getMessage());
        nft.apply("add rule t pre dnat to 198.18.0.1");
    }

    @Test
    void aPortRangeMayFollowAnyKnownTransportProtocolMatchIcmpIncluded() {
        nft.apply("add table t\nadd chain t post { type nat hook postrouting priority srcnat; }\n"
                + "add rule t post ip protocol icmp masquerade to :40000-40001\n"
                + "add rule t post ip protocol tcp masquerade to :40000-40001");
        assertEquals(List.of("ip protocol icmp masquerade to :40000-40001", "ip protocol tcp masquerade to :40000-40001"),
                rules(nft.listTable("t", false)));
        assertEquals("line 1, column 46: transport protocol mapping is only valid after transport protocol match",
                refused("add rule t post ip protocol 99 masquerade to :1-2").getMessage());
    }

    @Test
    void aChainGoesWithItsRulesUnlessAnotherJumpsToIt() {
        nft.apply("add table t\nadd chain t a\nadd chain t b\nadd rule t a jump b\nadd rule t b accept");
        assertEquals("line 1, column 1: chain b is the target of a jump or goto", refused("delete chain t b").getMessage());
        nft.apply("delete chain t a\ndelete chain t b");
        assertEquals("table ip t {\n}\n", nft.listRuleset(false));
    }

    @Test
    void aFailedTransactionChangesNothing() {
        nft.apply("add table t\nadd chain t c { type filter hook forward priority 0; policy accept; }\nadd rule t c accept");
        String before = nft.listRuleset(true);
        NftSyntaxException e = refused("""
                flush ruleset
                add table ip u
                add chain ip u c { type filter hook input priority 0; policy drop; }
                add rule ip u c tcp dport 22 acept
                """);
        assertEquals(4, e.line());
        assertEquals(before, nft.listRuleset(true));
        // A batch that parses but fails when applied (its last command) changes nothing either.
        refused("flush ruleset\nadd table ip u\nadd rule ip u nochain accept");
        assertEquals(before, nft.listRuleset(true));
        assertArrayEquals(new int[] {0}, ns.ipv4().netfilter().hooks().priorities(NfHook.FORWARD));
        assertEquals(0, ns.ipv4().netfilter().hooks().priorities(NfHook.LOCAL_IN).length);
        // The handles a failed batch would have taken are not used up.
        nft.apply("add rule t c drop");
        assertTrue(nft.listRuleset(true).contains("drop # handle 3\n"), nft.listRuleset(true));
    }

    @Test
    void iifNeedsADeviceThatExists() {
        nft.apply("add table t\nadd chain t c");
        assertEquals("line 1, column 21: interface \"nope\" does not exist (iif and oif take a device that exists;"
                + " iifname and oifname take any name)", refused("add rule ip t c iif nope accept").getMessage());
        nft.apply("add rule ip t c iif lo oif \"lo\" accept");
        assertEquals(List.of("iif \"lo\" oif \"lo\" accept"), rules(nft.listTable("t", false)));
    }
}
