package dev.usnet.tcp;

/**
 * A connection's counters as tcp_info reports them (tcpi_segs_out, tcpi_bytes_acked, ...): counted where they
 * happen, read by {@link TcpSock#info()}. Segment counts are MSS-sized packets, as Linux counts a TSO segment.
 */
final class TcpStats {
    long segsOut;
    long segsIn;
    long dataSegsOut;
    long dataSegsIn;
    long totalRetrans;
    long rtoCount;
    long bytesAcked;
    long bytesReceived;
    long bytesSent;
    long bytesRetrans;
}
