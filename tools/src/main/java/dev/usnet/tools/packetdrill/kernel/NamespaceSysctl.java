package dev.usnet.tools.packetdrill.kernel;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import dev.usnet.tap.sys.Errno;
import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SocketCalls;
import dev.usnet.tools.packetdrill.TargetException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * {@code sysctl -w key=value} as a write to /proc/sys: /proc/sys/net shows the network namespace of the thread that
 * opens it, so {@link #write} must run on a thread inside the test namespace (many TCP sysctls are per namespace
 * since Linux 4.x). The host-wide ones under /proc/sys/net are read-only in a child namespace (the kernel answers
 * EACCES); those outside it (kernel.*, vm.*) would change the host and are refused here.
 */
final class NamespaceSysctl {
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_./-]*");
    private static final int O_WRONLY = 1;
    static final String CONGESTION_CONTROL = "net.ipv4.tcp_congestion_control";
    static final String ALLOWED = "net.ipv4.tcp_allowed_congestion_control";
    private NamespaceSysctl() {}

    /** /proc/sys/... of a dotted ({@code net.ipv4.tcp_sack}) or slash ({@code net/ipv4/tcp_sack}) key. */
    static Path path(String key) {
        if (key == null || !KEY.matcher(key).matches() || key.contains("..")) {
            throw new TargetException("bad sysctl name '" + key + "'");
        }
        return Path.of("/proc/sys", key.contains("/") ? key : key.replace('.', '/'));
    }

    static String dotted(String key) {
        return key.contains("/") ? key.replace('/', '.') : key;
    }

    /** Writes {@code value} to {@code key} in the calling thread's namespace; fails saying why and what to do. */
    static void write(String key, String value) {
        String name = dotted(key);
        if (!name.startsWith("net.")) {
            throw new TargetException("sysctl " + name + " is not a network sysctl: it is shared with the whole host,"
                    + " and the kernel target changes nothing outside its namespace");
        }
        Path p = path(key);
        if (!Files.exists(p)) {
            throw new TargetException("unknown sysctl " + name + " (this kernel has no " + p + ")");
        }
        int fd = Libc.open(p.toString(), O_WRONLY | Libc.O_CLOEXEC);
        if (fd < 0) {
            throw refused(name, value, Libc.errno());
        }
        try (Arena a = Arena.ofConfined()) {
            byte[] b = (value + "\n").getBytes(StandardCharsets.US_ASCII);
            MemorySegment buf = a.allocate(b.length);
            MemorySegment.copy(b, 0, buf, JAVA_BYTE, 0, b.length);
            long n = SocketCalls.write(fd, buf, b.length);
            if (n < 0) {
                throw refused(name, value, SocketCalls.errno());
            }
        } finally {
            Libc.close(fd);
        }
    }

    private static TargetException refused(String name, String value, int errno) {
        if (name.equals(CONGESTION_CONTROL) && errno == Errno.EPERM) {
            String allowed = readAllowed();
            boolean listed = Arrays.asList(allowed.trim().split("\\s+")).contains(value.trim());
            if (!listed) {
                return new TargetException("sysctl " + name + "=" + value + " failed: EPERM — in a child network"
                        + " namespace Linux only lets a congestion control be chosen that the root namespace's "
                        + ALLOWED + " lists, and it lists only \"" + allowed.trim() + "\". The kernel target never"
                        + " changes host settings; allow it yourself with: sysctl -w " + ALLOWED + "=\""
                        + allowed.trim() + " " + value.trim() + "\"");
            }
        }
        return new TargetException("sysctl " + name + "=" + value + " failed: " + Errno.name(errno)
                + (errno == Errno.EINVAL ? " (the kernel rejects this value)" : "")
                + (errno == Errno.ENOENT ? " (the kernel does not know this value)" : "")
                + (errno == Errno.EACCES ? " (a host-wide setting, read-only inside a network namespace: set it on"
                        + " the host before the run if the script needs it)" : ""));
    }

    /** The root namespace's allowed congestion controls (a global setting: readable from any namespace). */
    static String readAllowed() {
        try {
            return Files.readString(path(ALLOWED)).trim();
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    /** The current value of {@code key} in the calling thread's namespace. */
    static String read(String key) {
        Path p = path(key);
        try {
            return Files.readString(p).trim();
        } catch (IOException e) {
            throw new TargetException("cannot read sysctl " + dotted(key) + ": " + e.getMessage(), e);
        }
    }
}
