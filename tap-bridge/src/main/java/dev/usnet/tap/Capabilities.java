package dev.usnet.tap;

import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.Libc;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The calling thread's Linux capabilities (capabilities(7)), through the same FFM libc layer as {@link Tun}:
 * {@code capget}/{@code capset} and {@code prctl}. Capabilities belong to threads, not processes; a thread's
 * drop holds for the threads it starts afterwards and, with the securebits set here, for the programs they run.
 */
public final class Capabilities {
    /** CAP_NET_ADMIN: links, addresses, routes, TAP devices. */
    public static final int CAP_NET_ADMIN = 12;
    /** CAP_SETPCAP: needed to shrink the bounding set and lock securebits. */
    public static final int CAP_SETPCAP = 8;
    private static final int CAP_LAST = 40;

    private static final long SYS_CAPGET = 125;
    private static final long SYS_CAPSET = 126;
    private static final int LINUX_CAPABILITY_VERSION_3 = 0x20080522;
    private static final int PR_CAPBSET_DROP = 24;
    private static final int PR_SET_SECUREBITS = 28;
    private static final int PR_SET_NO_NEW_PRIVS = 38;
    private static final int PR_CAP_AMBIENT = 47;
    private static final long PR_CAP_AMBIENT_CLEAR_ALL = 4;
    private static final long PR_CAP_AMBIENT_RAISE = 2;
    // SECBIT_NOROOT and SECBIT_NO_SETUID_FIXUP with their locks, SECBIT_KEEP_CAPS_LOCKED: uid 0 grants nothing on
    // exec and a uid change cannot bring anything back.
    private static final long SECURE_BITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20;

    private Capabilities() {}

    /**
     * Drops every capability of the calling thread but those in {@code keep} (a mask of bits 1 &lt;&lt; CAP_*): from its
     * bounding set (so a program it starts cannot regain them, even as root), its ambient set, and its permitted,
     * effective and inheritable sets; root is made to grant nothing on exec (SECBIT_NOROOT, locked). Irreversible for
     * this thread and those it starts later. Throws {@link TunException} with the errno when the kernel refuses.
     */
    public static void dropThisThread(long keep) throws TunException {
        long have = effective();
        if ((have >>> CAP_SETPCAP & 1) != 0) {
            for (int c = 0; c <= CAP_LAST; c++) {
                if ((keep >>> c & 1) == 0 && Libc.prctl(PR_CAPBSET_DROP, c) < 0 && Libc.errno() != Errno.EINVAL) {
                    throw fail("prctl(PR_CAPBSET_DROP)");
                }
            }
            if (Libc.prctl(PR_SET_SECUREBITS, SECURE_BITS) < 0) {
                throw fail("prctl(PR_SET_SECUREBITS)");
            }
        }
        Libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL);
        long kept = keep & have;
        set(kept, kept, kept);
        // What is kept passes to the programs this thread runs (ambient), so an `ip` it starts can use it.
        for (int c = 0; c <= CAP_LAST; c++) {
            if ((kept >>> c & 1) != 0 && Libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c) < 0) {
                throw fail("prctl(PR_CAP_AMBIENT_RAISE)");
            }
        }
        if (keep == 0 && Libc.prctl(PR_SET_NO_NEW_PRIVS, 1) < 0) {
            throw fail("prctl(PR_SET_NO_NEW_PRIVS)");
        }
    }

    /**
     * Makes the whole process user {@code uid} and group {@code gid} with no supplementary groups (setgroups,
     * setresgid, setresuid, which glibc applies to every thread): root's capabilities go from every thread at once,
     * permitted and effective, as the kernel clears them when all user ids leave 0. Irreversible.
     */
    public static void becomeUser(int uid, int gid) throws TunException {
        if (Libc.setgroupsNone() < 0) {
            throw fail("setgroups");
        }
        if (Libc.setresgid(gid) < 0) {
            throw fail("setresgid");
        }
        if (Libc.setresuid(uid) < 0) {
            throw fail("setresuid");
        }
    }

    /** The calling thread's effective set (capget), one bit per capability. */
    public static long effective() throws TunException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment hdr = a.allocate(8);
            hdr.set(JAVA_INT, 0, LINUX_CAPABILITY_VERSION_3);
            hdr.set(JAVA_INT, 4, 0);
            MemorySegment data = a.allocate(24);
            if (Libc.syscall(SYS_CAPGET, hdr, data) < 0) {
                throw fail("capget");
            }
            return (data.get(JAVA_INT, 0) & 0xffffffffL) | (data.get(JAVA_INT, 12) & 0xffffffffL) << 32;
        }
    }

    private static void set(long eff, long perm, long inh) throws TunException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment hdr = a.allocate(8);
            hdr.set(JAVA_INT, 0, LINUX_CAPABILITY_VERSION_3);
            hdr.set(JAVA_INT, 4, 0);
            MemorySegment data = a.allocate(24);
            data.set(JAVA_INT, 0, (int) eff);
            data.set(JAVA_INT, 4, (int) perm);
            data.set(JAVA_INT, 8, (int) inh);
            data.set(JAVA_INT, 12, (int) (eff >>> 32));
            data.set(JAVA_INT, 16, (int) (perm >>> 32));
            data.set(JAVA_INT, 20, (int) (inh >>> 32));
            if (Libc.syscall(SYS_CAPSET, hdr, data) < 0) {
                throw fail("capset");
            }
        }
    }

    /** {@code CapEff} of thread {@code tid} of this process, from /proc/self/task/TID/status; -1 when unreadable. */
    public static long effectiveOf(long tid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/task/" + tid + "/status"))) {
                if (line.startsWith("CapEff:")) {
                    return Long.parseUnsignedLong(line.substring(7).trim(), 16);
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** The kernel's id of the calling thread (gettid), from /proc/thread-self. */
    public static long threadId() {
        try {
            return Long.parseLong(Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static TunException fail(String op) {
        int e = Libc.errno();
        return new TunException(op, e, op + ": " + Errno.name(e));
    }
}
