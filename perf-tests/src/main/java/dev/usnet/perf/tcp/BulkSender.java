package dev.usnet.perf.tcp;

import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpSock;
import io.netty.buffer.ByteBuf;

/**
 * An iperf3-like bulk sender: writes from one preallocated buffer as long as the send buffer takes data, and
 * again on every {@code writable} callback, until {@link #stop}. Runs on the sending namespace's thread.
 */
final class BulkSender implements TcpSock.Callbacks {
    private final ByteBuf src;
    private boolean stopped;
    volatile boolean connected;
    volatile boolean closed;
    volatile TcpError closedWith;
    long written;

    /** {@code src} is written from index 0 to its capacity, over and over; it is not released here. */
    BulkSender(ByteBuf src) {
        this.src = src;
    }

    @Override
    public void connected(TcpSock s) {
        connected = true;
        pump(s);
    }

    @Override
    public void writable(TcpSock s) {
        pump(s);
    }

    @Override
    public void readable(TcpSock s) {
        // The peer sends nothing; drain whatever arrives anyway.
        while (s.skip(Integer.MAX_VALUE) > 0) {
            // discard
        }
    }

    @Override
    public void closed(TcpSock s, TcpError error) {
        closedWith = error;
        closed = true;
    }

    void pump(TcpSock s) {
        int cap = src.capacity();
        while (!stopped) {
            int n = s.write(src, 0, cap);
            if (n <= 0) {
                return;
            }
            written += n;
        }
    }

    /** No more writes (the caller then aborts or closes the socket). */
    void stop() {
        stopped = true;
    }
}
