package dev.usnet.tools.kernel;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The process's effective capabilities, for refusing a topology that changes the kernel before anything is done.
 * Read from {@code CapEff} in /proc/self/status rather than guessed from the uid: root without CAP_NET_ADMIN (a
 * container, {@code setpriv --bounding-set=-net_admin}) cannot, and a non-root java with the file capability can.
 * Tests pass a fixed set.
 */
@FunctionalInterface
public interface Privileges {
    /** Bit of CAP_NET_ADMIN: links, addresses, routes, TAP devices. */
    int CAP_NET_ADMIN = 12;
    /** Bit of CAP_NET_RAW: pcap capture and injection. */
    int CAP_NET_RAW = 13;
    /** Bit of CAP_SYS_ADMIN: {@code ip netns add} mounts, setns and unshare(CLONE_NEWNET). */
    int CAP_SYS_ADMIN = 21;

    /** The effective capability set, one bit per capability number. */
    long effective();

    default boolean has(int capability) {
        return (effective() >>> capability & 1) != 0;
    }

    /** This process as the kernel sees it now; no capabilities when /proc/self/status cannot be read. */
    static Privileges ofThisProcess() {
        return () -> {
            try {
                return capEff(Files.readString(Path.of("/proc/self/status")));
            } catch (IOException e) {
                return 0;
            }
        };
    }

    /** Every capability: for providers that are all stand-ins and change nothing. */
    static Privileges all() {
        return () -> -1L;
    }

    /** The {@code CapEff:} hex mask of a /proc/PID/status text; 0 when there is none. */
    static long capEff(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("CapEff:")) {
                return Long.parseUnsignedLong(line.substring("CapEff:".length()).trim(), 16);
            }
        }
        return 0;
    }
}
