package dev.usnet.perf.tcp;

import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpSock;
import io.netty.buffer.ByteBuf;

/**
 * The receiving application: on every {@code readable} callback it takes everything queued, either with
 * {@link TcpSock#skip} (discard without copying) or with {@link TcpSock#read} into one preallocated buffer
 * (a copy, as iperf3's recv() does). Closes its side at end of stream. Runs on the receiving namespace's thread.
 */
final class DiscardSink implements TcpSock.Callbacks {
    private final ByteBuf buf;
    long bytes;
    TcpSock sock;
    volatile boolean closed;
    volatile TcpError closedWith;

    /** {@code buf} null: skip; otherwise read into it (cleared before every read; not released here). */
    DiscardSink(ByteBuf buf) {
        this.buf = buf;
    }

    @Override
    public void readable(TcpSock s) {
        sock = s;
        int n;
        if (buf == null) {
            while ((n = s.skip(Integer.MAX_VALUE)) > 0) {
                bytes += n;
            }
        } else {
            while (true) {
                buf.clear();
                n = s.read(buf, buf.capacity());
                if (n <= 0) {
                    break;
                }
                bytes += n;
            }
        }
        if (n < 0 && s.state() != dev.usnet.tcp.TcpState.CLOSED) {
            s.close();
        }
    }

    @Override
    public void closed(TcpSock s, TcpError error) {
        closedWith = error;
        closed = true;
    }
}
