package dev.usnet.tools.packetdrill.usnet;

import java.util.TreeMap;

/**
 * The file descriptors of the script's process. A new descriptor is the lowest number not in use, from 3 on
 * (0-2 are stdin, stdout and stderr), as Linux allocates them: a script's first socket is 3, and a number freed by
 * close() is the next one handed out.
 */
final class FdTable {
    private static final int FIRST = 3;
    private final TreeMap<Integer, OpenFile> files = new TreeMap<>();

    int allocate(OpenFile f) {
        int fd = FIRST;
        for (int used : files.keySet()) {
            if (used != fd) {
                break;
            }
            fd++;
        }
        files.put(fd, f);
        return fd;
    }

    /** The file behind {@code fd}, or null (EBADF). */
    OpenFile get(long fd) {
        return fd < 0 || fd > Integer.MAX_VALUE ? null : files.get((int) fd);
    }

    OpenFile remove(int fd) {
        return files.remove(fd);
    }

    /** Every open descriptor, lowest first. */
    java.util.Collection<java.util.Map.Entry<Integer, OpenFile>> entries() {
        return java.util.List.copyOf(files.entrySet());
    }
}
