package dev.usnet.tap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.tap.netns.Netns;
import dev.usnet.tap.rtnl.RtGenMsg;
import dev.usnet.tap.rtnl.RtnlAddr;
import dev.usnet.tap.rtnl.RtnlSocket;
import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SysException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The rtnetlink layer against the kernel here: another namespace's addresses by nsid (RTM_GETADDR with
 * IFA_TARGET_NETNSID) from a viewer namespace, the same as {@code ip -j addr} prints inside it and as a dump after
 * setns. Kernel namespaces named usnet-t-PID-..., addresses from 198.18.0.0/15, deleted afterwards. Needs root and
 * iproute2: skipped without them, a failure when CI=true.
 */
class RtnlKernelTest {
    private KernelNetns kns;

    @BeforeEach
    void setUp() {
        KernelNetns.require(HostCommand.isRoot() && KernelNetns.run(5, "ip", "-V").ok(), "needs root and iproute2");
        kns = new KernelNetns();
    }

    @AfterEach
    void tearDown() {
        if (kns != null) {
            kns.close();
        }
    }

    /** "ifindex local/prefix label scope" of every IPv4 address {@code ip -4 -j addr show} lists in {@code netns}. */
    private TreeSet<String> ipAddr(String netns) throws Exception {
        JsonNode links = new ObjectMapper().readTree(kns.exec(netns, "ip", "-4", "-j", "addr", "show"));
        TreeSet<String> out = new TreeSet<>();
        for (JsonNode l : links) {
            for (JsonNode a : l.path("addr_info")) {
                out.add(l.path("ifindex").asInt() + " " + a.path("local").asText() + "/" + a.path("prefixlen").asInt() + " "
                        + a.path("label").asText() + " " + a.path("scope").asText());
            }
        }
        return out;
    }

    private static TreeSet<String> lines(List<RtnlAddr> addrs) {
        TreeSet<String> out = new TreeSet<>();
        for (RtnlAddr a : addrs) {
            out.add(a.ifindex() + " " + a.cidr() + " " + a.label() + " " + (a.scope() == 254 ? "host" : a.scope() == 0 ? "global"
                    : String.valueOf(a.scope())));
        }
        return out;
    }

    @Test
    void addressesByNsidAreWhatIpAddrShowsInsideAndWhatADumpAfterSetnsSees() throws Exception {
        String viewer = kns.create("v");
        String target = kns.create("q");
        kns.exec(target, "ip", "addr", "add", "198.18.9.1/24", "dev", "lo");
        kns.exec(target, "ip", "addr", "add", "198.18.9.2/32", "dev", "lo", "label", "lo:two");
        TreeSet<String> shown = ipAddr(target);
        assertTrue(shown.contains("1 198.18.9.1/24 lo global") && shown.contains("1 198.18.9.2/32 lo:two global"), shown.toString());

        record Seen(int nsid, List<RtnlAddr> byNsid, List<RtnlAddr> entered, int nsidAfter) {}
        Seen seen = Netns.onOwnThread("rtnl-test", () -> {
            Netns.enter(viewer);
            int back = Netns.openCurrent();
            int fd = Netns.open(target);
            try (RtnlSocket rtnl = RtnlSocket.open()) {
                assertEquals(RtGenMsg.NSID_NOT_ASSIGNED, rtnl.getNsid(fd, target));
                rtnl.newNsid(fd, RtGenMsg.NSID_NOT_ASSIGNED, target);
                int nsid = rtnl.getNsid(fd, target);
                List<RtnlAddr> byNsid = rtnl.dumpAddrs(Libc.AF_INET, nsid);
                Netns.enter(fd, target);
                List<RtnlAddr> entered;
                try (RtnlSocket inside = RtnlSocket.open()) {
                    entered = inside.dumpAddrs(Libc.AF_INET, -1);
                }
                Netns.enter(back, viewer);
                // Back in the viewer, the id is still there: setns did not change what the viewer calls the target.
                return new Seen(nsid, byNsid, entered, rtnl.getNsid(fd, target));
            } finally {
                Libc.close(fd);
                Libc.close(back);
            }
        });
        assertTrue(seen.nsid() >= 0, "nsid " + seen.nsid());
        assertEquals(seen.nsid(), seen.nsidAfter());
        assertEquals(shown, lines(seen.byNsid()));
        assertEquals(shown, lines(seen.entered()));
        for (RtnlAddr a : seen.byNsid()) {
            assertEquals(seen.nsid(), a.targetNsid(), "IFA_TARGET_NETNSID echoed in " + a);
        }
        for (RtnlAddr a : seen.entered()) {
            assertEquals(-1, a.targetNsid(), a.toString());
        }
    }

    @Test
    void anNsidTheViewerNeverGaveIsRefusedWithTheKernelsReason() throws Exception {
        String viewer = kns.create("v");
        SysException e = assertThrows(SysException.class, () -> Netns.callIn(viewer, () -> {
            try (RtnlSocket rtnl = RtnlSocket.open()) {
                return rtnl.dumpAddrs(Libc.AF_INET, 4242);
            }
        }));
        assertEquals("RTM_GETADDR", e.op());
        assertEquals(Errno.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("ip netns set NAME auto") && e.getMessage().contains("kernel:"), e.getMessage());
    }

    @Test
    void addressesAndLinkStateSetOverRtnetlinkAreWhatIpSees() throws Exception {
        String target = kns.create("a");
        kns.exec(target, "ip", "link", "set", "lo", "down");
        Netns.callIn(target, () -> {
            try (RtnlSocket rtnl = RtnlSocket.open()) {
                rtnl.setLinkUp(1);
                rtnl.addAddr4(1, new byte[] {(byte) 198, 18, 10, 7}, 32, 0);
                SysException twice = assertThrows(SysException.class,
                        () -> rtnl.addAddr4(1, new byte[] {(byte) 198, 18, 10, 7}, 32, 0));
                assertEquals(Errno.EEXIST, twice.errno());
            }
            return null;
        });
        assertTrue(ipAddr(target).contains("1 198.18.10.7/32 lo global"), ipAddr(target).toString());
        assertTrue(kns.exec(target, "ip", "link", "show", "lo").contains(",UP"), "lo is up");
    }

    @Test
    void aTapBornPrivatelyIsMovedIntoItsNamespaceOverRtnetlink() throws Exception {
        KernelNetns.require(java.nio.file.Files.exists(java.nio.file.Path.of("/dev/net/tun")), "needs /dev/net/tun");
        String target = kns.create("m");
        List<String> before = new ArrayList<>(List.of(KernelNetns.run(5, "ip", "-o", "link").output().split("\n")));
        try (Tun tun = Tun.open(Tun.Options.movedInto(target, "utapmv"))) {
            assertTrue(kns.exec(target, "ip", "-o", "link", "show", "utapmv").contains("utapmv"));
            assertNotEquals(-1, tun.fd());
        }
        // Nothing appeared in usnet's own namespace.
        assertEquals(before.stream().filter(l -> l.contains("utapmv")).count(), 0);
    }
}
