package dev.usnet.tools.packetdrill.usnet;

/** What a file descriptor of the script's process refers to: a TCP socket or an epoll instance. */
sealed interface OpenFile permits SocketFile, EpollFile {

    /** The poll/epoll events ready now (POLLIN, POLLOUT, POLLERR, POLLHUP, ...), as the file's poll method gives them. */
    int readyEvents();

    /**
     * Counts every wake-up the file had (data arrived, room to write, connected, closed): edge-triggered epoll
     * reports a file again after such an event even when its ready set did not change, as Linux's wake-ups do.
     */
    long wakeups();
}
