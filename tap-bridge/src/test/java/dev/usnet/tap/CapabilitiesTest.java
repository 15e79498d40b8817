package dev.usnet.tap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Dropping a thread's capabilities through FFM capset/prctl: the thread (and those it starts) keeps only what it
 * was told to, a program it runs cannot regain the rest even as root, and a TAP's carrier can still be switched
 * from such a thread (TUNSETCARRIER needs the fd, not CAP_NET_ADMIN). Root: skipped elsewhere, required when CI=true.
 */
class CapabilitiesTest {
    @Test
    void aDroppedThreadKeepsOnlyWhatItWasToldToAndSoDoItsChildren() throws Exception {
        KernelNetns.require(HostCommand.isRoot(), "root");
        AtomicReference<Object> out = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                Capabilities.dropThisThread(1L << Capabilities.CAP_NET_ADMIN);
                long self = Capabilities.effectiveOf(Capabilities.threadId());
                long[] child = new long[1];
                Thread c = new Thread(() -> child[0] = Capabilities.effectiveOf(Capabilities.threadId()));
                c.start();
                c.join();
                // A program started from here: root, yet no capability comes back on exec.
                HostCommand.Result r = HostCommand.run(10, "grep", "CapEff", "/proc/self/status");
                out.set(new Object[] {self, child[0], r.output().trim()});
            } catch (Throwable e) {
                out.set(e);
            }
        });
        t.start();
        t.join();
        if (out.get() instanceof Throwable e) {
            throw new AssertionError(e);
        }
        Object[] r = (Object[]) out.get();
        assertEquals(1L << Capabilities.CAP_NET_ADMIN, r[0]);
        assertEquals(1L << Capabilities.CAP_NET_ADMIN, r[1], "a thread started after the drop inherits it");
        assertEquals("CapEff:\t0000000000001000", r[2], "a program run after the drop regained capabilities");
        assertTrue((Capabilities.effective() >>> Capabilities.CAP_NET_ADMIN & 1) == 1, "other threads are untouched");
    }

    @Test
    void aTapsCarrierIsSwitchedWithoutAnyCapability() throws Exception {
        KernelNetns.require(KernelNetns.available(), "root, /dev/net/tun and iproute2");
        try (KernelNetns k = new KernelNetns()) {
            String ns = k.create("cap");
            try (Tun tun = Tun.open(Tun.Options.inNetns(ns, "ucap0"))) {
                k.exec(ns, "ip", "link", "set", "ucap0", "up");
                AtomicReference<Throwable> err = new AtomicReference<>();
                Thread t = new Thread(() -> {
                    try {
                        Capabilities.dropThisThread(0);
                        tun.setCarrier(false);
                    } catch (Throwable e) {
                        err.set(e);
                    }
                });
                t.start();
                t.join();
                if (err.get() != null) {
                    throw new AssertionError(err.get());
                }
                String show = k.exec(ns, "ip", "link", "show", "ucap0");
                assertTrue(show.contains("NO-CARRIER"), show);
                tun.setCarrier(true);
                assertTrue(!k.exec(ns, "ip", "link", "show", "ucap0").contains("NO-CARRIER"));
            }
        }
    }
}
