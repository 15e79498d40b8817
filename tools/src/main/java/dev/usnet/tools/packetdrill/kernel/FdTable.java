package dev.usnet.tools.packetdrill.kernel;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The script's file descriptors and the kernel's. A script expects Linux's numbering in a fresh process: 0-2 are
 * stdin/out/err, so its first socket is fd 3, the next 4, and a closed number is reused lowest first. The JVM already
 * holds dozens of fds, so the kernel's numbers differ; every call maps the script's number to the kernel's here, and
 * every new fd (socket, accept, epoll_create) gets the lowest free script number. Thread-safe.
 */
final class FdTable {
    /** What a script fd no longer (or never) mapped stands for: the kernel answers EBADF, as for a bad fd. */
    static final int NO_FD = -1;
    private static final int FIRST = 3;

    private final TreeMap<Integer, Integer> scriptToKernel = new TreeMap<>();

    /** Gives {@code kernelFd} the lowest free script fd and returns that. */
    synchronized int add(int kernelFd) {
        int n = FIRST;
        for (int used : scriptToKernel.keySet()) {
            if (used != n) {
                break;
            }
            n++;
        }
        scriptToKernel.put(n, kernelFd);
        return n;
    }

    /** The kernel fd for script fd {@code scriptFd}, or {@link #NO_FD}. */
    synchronized int kernelFd(long scriptFd) {
        if (scriptFd < 0 || scriptFd > Integer.MAX_VALUE) {
            return NO_FD;
        }
        Integer k = scriptToKernel.get((int) scriptFd);
        return k == null ? NO_FD : k;
    }

    /** The script fd of kernel fd {@code kernelFd}, or -1. */
    synchronized int scriptFd(int kernelFd) {
        for (var e : scriptToKernel.entrySet()) {
            if (e.getValue() == kernelFd) {
                return e.getKey();
            }
        }
        return -1;
    }

    /** Forgets script fd {@code scriptFd} (after close: Linux frees the number even when close reports an error). */
    synchronized void remove(long scriptFd) {
        scriptToKernel.remove((int) scriptFd);
    }

    /** Every kernel fd still mapped, and empties the table. */
    synchronized List<Integer> drain() {
        List<Integer> all = new ArrayList<>(scriptToKernel.values());
        scriptToKernel.clear();
        return all;
    }
}
