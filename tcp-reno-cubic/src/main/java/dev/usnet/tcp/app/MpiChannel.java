package dev.usnet.tcp.app;

import dev.usnet.tcp.TcpError;
import dev.usnet.tcp.TcpSock;
import dev.usnet.tcp.TcpTrace;
import io.netty.buffer.ByteBuf;

/**
 * One rank's end of the TCP connection to one peer rank (OpenMPI's TCP BTL keeps one per pair of processes).
 * Writes go from the job's shared zero-filled buffer, as many bytes per write as TCP takes; received bytes are
 * skipped (no copy) and credited to the rank. The socket keeps an events-only {@link TcpTrace}, a few rows per
 * loss, from which the cwnd at every loss is read at the end.
 */
final class MpiChannel implements TcpSock.Callbacks {
    final MpiRank rank;
    final int peer;
    /** Whether this end opened the connection (the lower rank connects to the higher one's port). */
    final boolean connector;
    final TcpTrace losses = new TcpTrace(100_000, false);
    TcpSock sock;
    private long owed;
    private boolean up;
    /** tcpi_total_retrans and timeouts when the job ended (read before the close). */
    long retrans;
    long timeouts;
    private boolean counted;

    MpiChannel(MpiRank rank, int peer, boolean connector) {
        this.rank = rank;
        this.peer = peer;
        this.connector = connector;
    }

    /** The accepted socket for this end (the acceptor side). */
    void attach(TcpSock s) {
        this.sock = s;
        s.setCallbacks(this);
        up();
    }

    private void up() {
        if (!up) {
            up = true;
            rank.job.channelUp();
        }
    }

    void send(long n) {
        owed += n;
        pump();
    }

    private void pump() {
        ByteBuf src = rank.job.source();
        while (owed > 0) {
            int len = (int) Math.min(owed, src.capacity());
            int w = sock.write(src, 0, len);
            if (w > 0) {
                owed -= w;
            }
            if (w < len) {
                return;
            }
        }
        rank.sendComplete();
    }

    /** Notes the socket's retransmissions and timeouts (once), then closes it gracefully. */
    void closeAtEnd() {
        snapshot();
        if (sock != null) {
            sock.close();
        }
    }

    boolean counted() {
        return counted;
    }

    void snapshot() {
        if (!counted && sock != null) {
            counted = true;
            retrans = sock.totalRetrans();
            timeouts = sock.timeouts();
        }
    }

    @Override
    public void connected(TcpSock s) {
        up();
    }

    @Override
    public void readable(TcpSock s) {
        int n;
        long got = 0;
        while ((n = s.skip(Integer.MAX_VALUE)) > 0) {
            got += n;
        }
        if (got > 0) {
            rank.received(peer, got);
        }
    }

    @Override
    public void writable(TcpSock s) {
        if (owed > 0) {
            pump();
        }
    }

    @Override
    public void closed(TcpSock s, TcpError error) {
        snapshot();
        if (error != TcpError.NONE && !rank.job.isFinished()) {
            rank.job.fail("connection rank " + rank.id + " - rank " + peer + " failed: " + error);
        }
    }
}
