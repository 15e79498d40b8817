package dev.usnet.tap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tap.sys.Errno;
import org.junit.jupiter.api.Test;

/** The messages users see when creating a TAP device fails, without needing to lack any privilege. */
class ErrnoMessageTest {
    @Test
    void epermOnTunsetiffSaysCapNetAdmin() {
        assertEquals("TUNSETIFF failed: EPERM — creating a TAP device needs CAP_NET_ADMIN (run as root or grant the"
                + " capability: setcap cap_net_admin+ep on the java binary)", Errno.message("TUNSETIFF", "tap0", Errno.EPERM));
        assertTrue(Errno.message("TUNSETIFF", "tap0", Errno.EACCES).startsWith("TUNSETIFF failed: EACCES — creating a TAP"
                + " device needs CAP_NET_ADMIN"));
    }

    @Test
    void missingDevNetTunSaysSo() {
        String m = Errno.message("open /dev/net/tun", "tap0", Errno.ENOENT);
        assertTrue(m.startsWith("open /dev/net/tun failed: ENOENT — /dev/net/tun does not exist"), m);
        assertTrue(m.contains("modprobe tun"), m);
        assertTrue(Errno.message("open /dev/net/tun", "tap0", Errno.EACCES).contains("no permission"));
    }

    @Test
    void otherFailuresNameTheErrnoAndTheSubject() {
        assertTrue(Errno.message("TUNSETIFF", "tap0", Errno.EBUSY).contains("tap0 already exists"));
        assertTrue(Errno.message("open netns", "nope", Errno.ENOENT).contains("ip netns add nope"));
        assertTrue(Errno.message("setns", "k", Errno.EPERM).contains("CAP_SYS_ADMIN"));
        assertTrue(Errno.message("move", "k", Errno.EEXIST).contains("already has a device"));
        assertEquals("EBADFD", Errno.name(77));
        assertEquals("errno 4242", Errno.name(4242));
    }

    @Test
    void missingNamespaceFailsClearlyBeforeAnyDeviceExists() {
        String ns = "usnet-t-" + ProcessHandle.current().pid() + "-does-not-exist";
        TunException e = assertThrows(TunException.class, () -> Tun.open(Tun.Options.inNetns(ns, "utap0")));
        assertEquals("open netns", e.op());
        assertEquals(Errno.ENOENT, e.errno());
        assertTrue(e.getMessage().contains("network namespace " + ns + " does not exist"), e.getMessage());
        e = assertThrows(TunException.class, () -> Tun.open(Tun.Options.movedInto(ns, "utap0")));
        assertEquals(Errno.ENOENT, e.errno());
    }

    @Test
    void optionsAreValidated() {
        assertThrows(IllegalArgumentException.class, () -> Tun.Options.inNetns("k", "a-name-far-too-long"));
        assertThrows(IllegalArgumentException.class, () -> Tun.Options.inNetns("../etc", "tap0"));
        assertThrows(IllegalArgumentException.class, () -> new Tun.Options(Tun.Birth.IN_NETNS, null, "tap0", false, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new Tun.Options(Tun.Birth.CURRENT_NETNS, null, "tap0", false, Tun.OFFLOAD_GSO));
        assertThrows(IllegalArgumentException.class,
                () -> new Tun.Options(Tun.Birth.CURRENT_NETNS, null, "tap0", true, Tun.TUN_F_TSO4));
        assertEquals(Tun.OFFLOAD_GSO, Tun.Options.movedInto("k", "tap0").withVnetHdr(true).offloads());
    }
}
