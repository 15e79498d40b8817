package dev.usnet.tools.packetdrill.usnet;

import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.EPOLLET;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.EPOLLONESHOT;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLERR;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLHUP;
import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.POLLIN;

import dev.usnet.tools.packetdrill.Value;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An epoll instance: its interest list by descriptor, each with the events asked for and the user data the script
 * gave ({@code epoll_event.data} as the script spelled it: {@code fd=}, {@code u32=}, {@code u64=}, ...), echoed
 * back by epoll_wait. Level-triggered entries report whenever ready; edge-triggered ones (EPOLLET) only after a
 * wake-up since their last report; EPOLLONESHOT disables an entry once reported until EPOLL_CTL_MOD.
 */
final class EpollFile implements OpenFile {
    /** One watched descriptor. */
    static final class Interest {
        final OpenFile file;
        int events;
        LinkedHashMap<String, Value> data;
        long reportedWakeups = -1;
        boolean disabled;

        Interest(OpenFile file, int events, LinkedHashMap<String, Value> data) {
            this.file = file;
            this.events = events;
            this.data = data;
        }

        /** The events to report now, 0 when none (ERR and HUP are always watched, as epoll does). */
        int due() {
            if (disabled) {
                return 0;
            }
            int ready = file.readyEvents() & (events | POLLERR | POLLHUP);
            if (ready == 0) {
                return 0;
            }
            if ((events & EPOLLET) != 0 && reportedWakeups == file.wakeups()) {
                return 0;
            }
            return ready;
        }

        void reported() {
            reportedWakeups = file.wakeups();
            if ((events & EPOLLONESHOT) != 0) {
                disabled = true;
            }
        }
    }

    private final LinkedHashMap<Integer, Interest> interests = new LinkedHashMap<>();
    private long wakeups;

    Interest interest(int fd) {
        return interests.get(fd);
    }

    void add(int fd, Interest i) {
        interests.put(fd, i);
        wakeups++;
    }

    void remove(int fd) {
        interests.remove(fd);
    }

    /** A descriptor was closed: it leaves every interest list (its file had no other descriptor). */
    void forget(int fd, OpenFile f) {
        Interest i = interests.get(fd);
        if (i != null && i.file == f) {
            interests.remove(fd);
        }
    }

    /** The events due now, at most {@code max}, in interest-list order; each counts as reported. */
    List<Map.Entry<Integer, Integer>> collect(int max) {
        List<Map.Entry<Integer, Integer>> out = new ArrayList<>();
        for (var e : interests.entrySet()) {
            if (out.size() >= max) {
                break;
            }
            int due = e.getValue().due();
            if (due != 0) {
                out.add(Map.entry(e.getKey(), due));
                e.getValue().reported();
            }
        }
        return out;
    }

    @Override
    public int readyEvents() {
        for (Interest i : interests.values()) {
            if (i.due() != 0) {
                return POLLIN;
            }
        }
        return 0;
    }

    @Override
    public long wakeups() {
        long w = wakeups;
        for (Interest i : interests.values()) {
            w += i.file.wakeups();
        }
        return w;
    }
}
