package dev.usnet.tap.netns;

import dev.usnet.tap.sys.Libc;
import dev.usnet.tap.sys.SysException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The kernel's network namespaces as {@code ip netns} keeps them ({@code /var/run/netns/NAME}, a bind mount of the
 * namespace's nsfs inode), and entering one with setns(2). setns moves only the calling OS thread, so code that
 * enters runs on a platform thread of its own ({@link #onOwnThread}) that serves nothing else.
 */
public final class Netns {
    /** Where {@code ip netns add} puts its names. */
    public static final String RUN_DIR = "/var/run/netns";

    private Netns() {}

    /** A task that may throw the checked exception {@code E}. */
    @FunctionalInterface
    public interface Task<T, E extends Exception> {
        T call() throws E;
    }

    /**
     * An fd referring to namespace {@code name} (O_RDONLY | O_CLOEXEC on /var/run/netns/NAME); the caller closes it.
     * The fd keeps the namespace alive even after {@code ip netns del} removed its name.
     */
    public static int open(String name) throws SysException {
        if (name == null || name.isEmpty() || name.contains("/") || name.equals(".") || name.equals("..")) {
            throw new SysException("open netns", 0, "bad network namespace name '" + name + "'");
        }
        int fd = Libc.open(RUN_DIR + "/" + name, Libc.O_RDONLY | Libc.O_CLOEXEC);
        if (fd < 0) {
            throw SysException.of("open netns", name, Libc.errno());
        }
        return fd;
    }

    /** An fd referring to the calling thread's current network namespace (/proc/thread-self/ns/net). */
    public static int openCurrent() throws SysException {
        int fd = Libc.open("/proc/thread-self/ns/net", Libc.O_RDONLY | Libc.O_CLOEXEC);
        if (fd < 0) {
            throw SysException.of("open /proc/thread-self/ns/net", "this thread", Libc.errno());
        }
        return fd;
    }

    /** setns(fd, CLONE_NEWNET): the calling thread (only it) now lives in that namespace; {@code name} is for messages. */
    public static void enter(int fd, String name) throws SysException {
        if (Libc.setns(fd, Libc.CLONE_NEWNET) < 0) {
            throw SysException.of("setns", name, Libc.errno());
        }
    }

    /** Enters the namespace named {@code name} (open, setns, close). */
    public static void enter(String name) throws SysException {
        int fd = open(name);
        try {
            enter(fd, name);
        } finally {
            Libc.close(fd);
        }
    }

    /**
     * Runs {@code task} on a new platform thread and waits for it (also through an interrupt, which is kept): a
     * thread that changed its namespaces must not serve anything else afterwards, and this one ends with the task.
     * Exceptions of the task reach the caller as they were.
     */
    public static <T, E extends Exception> T onOwnThread(String threadName, Task<T, E> task) throws E {
        AtomicReference<Object> result = new AtomicReference<>();
        Thread t = Thread.ofPlatform().name(threadName).daemon(true).unstarted(() -> {
            try {
                result.set(new Object[] {task.call()});
            } catch (Throwable e) {
                result.set(e);
            }
        });
        t.start();
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Object r = result.get();
        if (r instanceof Object[] box) {
            @SuppressWarnings("unchecked")
            T v = (T) box[0];
            return v;
        }
        if (r instanceof RuntimeException e) {
            throw e;
        }
        if (r instanceof Error e) {
            throw e;
        }
        // Only E can be left: the task declares no other checked exception.
        @SuppressWarnings("unchecked")
        E e = (E) r;
        throw e;
    }

    /**
     * Runs {@code task} on a short-lived platform thread that first entered namespace {@code name}. What the task
     * opens there (a socket, a pcap handle, a TAP fd) stays bound to that namespace and may be used from any thread
     * afterwards. A failure to enter comes as a {@link SysException}, which {@code E} must admit.
     */
    public static <T, E extends Exception> T callIn(String name, Task<T, E> task) throws E, SysException {
        // [result, failure to enter]: entering fails with SysException, which E need not admit.
        Object[] r = onOwnThread("usnet-netns-" + name, () -> {
            try {
                enter(name);
            } catch (SysException e) {
                return new Object[] {null, e};
            }
            return new Object[] {task.call(), null};
        });
        if (r[1] != null) {
            throw (SysException) r[1];
        }
        @SuppressWarnings("unchecked")
        T v = (T) r[0];
        return v;
    }
}
