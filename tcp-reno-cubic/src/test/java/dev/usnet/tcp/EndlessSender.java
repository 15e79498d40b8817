package dev.usnet.tcp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/** A bulk sender for test scenarios: keeps the socket's send buffer full for as long as the connection lives. */
final class EndlessSender implements TcpSock.Callbacks {
    private final ByteBuf chunk;

    /** Writes of {@code chunkBytes} each (an unpooled buffer written again and again, never released: nothing to leak). */
    EndlessSender(int chunkBytes) {
        chunk = Unpooled.wrappedBuffer(new byte[chunkBytes]);
    }

    @Override
    public void connected(TcpSock s) {
        fill(s);
    }

    @Override
    public void writable(TcpSock s) {
        fill(s);
    }

    private void fill(TcpSock s) {
        while (s.write(chunk, 0, chunk.capacity()) > 0) {
            // until the send buffer is full
        }
    }
}
