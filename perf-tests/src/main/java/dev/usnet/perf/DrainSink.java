package dev.usnet.perf;

import dev.usnet.tcp.TcpSock;
import io.netty.buffer.ByteBuf;

/**
 * A receiving application that takes everything queued on every {@code readable} callback, either with
 * {@link TcpSock#skip} (discard without copying) or with {@link TcpSock#read} into one preallocated buffer (a
 * copy, as iperf3's recv() does). Runs on the receiving namespace's thread.
 */
public class DrainSink implements TcpSock.Callbacks {
    private final ByteBuf buf;
    /** Bytes taken so far. */
    public long bytes;
    /** The connection (set by whoever accepts it). */
    public TcpSock sock;

    /** {@code buf} null: skip; otherwise read into it (cleared before every read; not released here). */
    public DrainSink(ByteBuf buf) {
        this.buf = buf;
    }

    @Override
    public void readable(TcpSock s) {
        drain(s);
    }

    /** Takes everything queued on {@code s}; returns the last skip/read result (-1: end of stream). */
    protected final int drain(TcpSock s) {
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
        return n;
    }
}
