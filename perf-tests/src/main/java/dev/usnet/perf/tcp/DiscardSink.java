package dev.usnet.perf.tcp;

import dev.usnet.perf.DrainSink;
import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpState;
import io.netty.buffer.ByteBuf;

/**
 * tcp-throughput's receiving application: a {@link DrainSink} (skip, or read into one buffer) that closes its side
 * at end of stream and records how the connection ended. Runs on the receiving namespace's thread.
 */
final class DiscardSink extends DrainSink {
    volatile boolean closed;
    volatile TcpError closedWith;

    /** {@code buf} null: skip; otherwise read into it (cleared before every read; not released here). */
    DiscardSink(ByteBuf buf) {
        super(buf);
    }

    @Override
    public void readable(TcpSock s) {
        sock = s;
        if (drain(s) < 0 && s.state() != TcpState.CLOSED) {
            s.close();
        }
    }

    @Override
    public void closed(TcpSock s, TcpError error) {
        closedWith = error;
        closed = true;
    }
}
