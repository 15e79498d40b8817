package dev.usnet.core.testing;

import dev.usnet.core.stack.NetStack;
import dev.usnet.core.wire.Ipv4Addr;
import java.util.List;

/**
 * A router "r" with two test wires, r1 (hosts at H1's MAC behind it) and r2 (at H2's), forwarding on and the
 * hosts' addresses as permanent neighbours: what the hook, conntrack, NAT and nftables tests send packets through.
 */
public class TwoPortRouter implements AutoCloseable {
    public static final long R1 = 0x0200_0000_0101L;
    public static final long R2 = 0x0200_0000_0102L;
    public static final long H1 = 0x0200_0000_aa01L;
    public static final long H2 = 0x0200_0000_bb02L;

    public final TestNet net = new TestNet();
    public final NetStack r = net.ns("r");
    public final TestNet.Wire w1 = net.wire(r, "r1", R1);
    public final TestNet.Wire w2 = net.wire(r, "r2", R2);

    /** r1 198.18.1.1/24 with host 198.18.1.2, r2 198.18.2.1/24 with host 198.18.2.2. */
    public TwoPortRouter() {
        this("198.18.1.1/24", List.of("198.18.1.2"), "198.18.2.1/24", List.of("198.18.2.2"));
    }

    public TwoPortRouter(String r1Cidr, List<String> r1Hosts, String r2Cidr, List<String> r2Hosts) {
        r.knobs().set("net.ipv4.ip_forward", "1");
        TestNet.addr(r, w1.dutEnd, r1Cidr);
        TestNet.addr(r, w2.dutEnd, r2Cidr);
        for (String h : r1Hosts) {
            r.neigh().addPermanent(w1.dutEnd, Ipv4Addr.parse(h), H1);
        }
        for (String h : r2Hosts) {
            r.neigh().addPermanent(w2.dutEnd, Ipv4Addr.parse(h), H2);
        }
    }

    @Override
    public void close() {
        net.close();
    }
}
