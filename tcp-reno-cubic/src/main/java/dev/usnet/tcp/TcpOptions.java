package dev.usnet.tcp;

import io.netty.buffer.ByteBuf;

/**
 * TCP options (RFC 9293, 7323, 2018) parsed from a header into reusable fields, and written in the order and
 * alignment Linux uses, so a capture of usnet's handshake reads like the kernel's.
 */
final class TcpOptions {
    static final int EOL = 0;
    static final int NOP = 1;
    static final int MSS = 2;
    static final int WSCALE = 3;
    static final int SACK_PERM = 4;
    static final int SACK = 5;
    static final int TIMESTAMP = 8;

    static final int MAX_SACK_BLOCKS = 4;

    boolean hasMss;
    int mss;
    boolean hasWscale;
    int wscale;
    boolean sackPermitted;
    boolean hasTimestamp;
    long tsVal;
    long tsEcr;
    int sackBlocks;
    final long[] sackStart = new long[MAX_SACK_BLOCKS];
    final long[] sackEnd = new long[MAX_SACK_BLOCKS];

    /** Parses the options of the header at {@code off}; malformed options end parsing like tcp_parse_options. */
    void parse(ByteBuf b, int off, int headerLen, boolean syn) {
        hasMss = false;
        hasWscale = false;
        sackPermitted = false;
        hasTimestamp = false;
        sackBlocks = 0;
        int i = off + 20;
        int end = off + headerLen;
        while (i < end) {
            int kind = b.getUnsignedByte(i);
            if (kind == EOL) {
                return;
            }
            if (kind == NOP) {
                i++;
                continue;
            }
            if (i + 1 >= end) {
                return;
            }
            int len = b.getUnsignedByte(i + 1);
            if (len < 2 || i + len > end) {
                return;
            }
            switch (kind) {
                case MSS -> {
                    if (len == 4 && syn) {
                        int m = b.getUnsignedShort(i + 2);
                        if (m != 0) {
                            hasMss = true;
                            mss = m;
                        }
                    }
                }
                case WSCALE -> {
                    if (len == 3 && syn) {
                        hasWscale = true;
                        // RFC 7323: a shift above 14 is treated as 14.
                        wscale = Math.min(b.getUnsignedByte(i + 2), 14);
                    }
                }
                case SACK_PERM -> {
                    if (len == 2 && syn) {
                        sackPermitted = true;
                    }
                }
                case TIMESTAMP -> {
                    if (len == 10) {
                        hasTimestamp = true;
                        tsVal = b.getUnsignedInt(i + 2);
                        tsEcr = b.getUnsignedInt(i + 6);
                    }
                }
                case SACK -> {
                    if (len >= 10 && (len - 2) % 8 == 0 && !syn) {
                        int n = Math.min((len - 2) / 8, MAX_SACK_BLOCKS);
                        for (int k = 0; k < n; k++) {
                            sackStart[k] = b.getUnsignedInt(i + 2 + 8 * k);
                            sackEnd[k] = b.getUnsignedInt(i + 6 + 8 * k);
                        }
                        sackBlocks = n;
                    }
                }
                default -> { }
            }
            i += len;
        }
    }

    /** Length of SYN options: MSS, SACK-permitted, timestamps, window scale as Linux lays them out. */
    static int synLength(boolean sack, boolean ts, boolean ws) {
        int n = 4;
        if (ts) {
            n += 12; // SACK_PERM (2) + TS (10), or NOP NOP + TS
        } else if (sack) {
            n += 4; // NOP NOP SACK_PERM
        }
        if (ws) {
            n += 4; // NOP WS
        }
        return n;
    }

    /** Writes SYN options at {@code i}; returns the index after them. */
    static int writeSyn(ByteBuf b, int i, int mss, boolean sack, boolean ts, long tsVal, long tsEcr, int ws) {
        b.setByte(i++, MSS);
        b.setByte(i++, 4);
        b.setShort(i, mss);
        i += 2;
        if (ts) {
            if (sack) {
                b.setByte(i++, SACK_PERM);
                b.setByte(i++, 2);
            } else {
                b.setByte(i++, NOP);
                b.setByte(i++, NOP);
            }
            i = writeTimestampBody(b, i, tsVal, tsEcr);
        } else if (sack) {
            b.setByte(i++, NOP);
            b.setByte(i++, NOP);
            b.setByte(i++, SACK_PERM);
            b.setByte(i++, 2);
        }
        if (ws >= 0) {
            b.setByte(i++, NOP);
            b.setByte(i++, WSCALE);
            b.setByte(i++, 3);
            b.setByte(i++, ws);
        }
        return i;
    }

    /** NOP NOP TIMESTAMP: the 12 bytes every segment of a timestamping connection carries. */
    static int writeTimestamp(ByteBuf b, int i, long tsVal, long tsEcr) {
        b.setByte(i++, NOP);
        b.setByte(i++, NOP);
        return writeTimestampBody(b, i, tsVal, tsEcr);
    }

    private static int writeTimestampBody(ByteBuf b, int i, long tsVal, long tsEcr) {
        b.setByte(i++, TIMESTAMP);
        b.setByte(i++, 10);
        b.setInt(i, (int) tsVal);
        b.setInt(i + 4, (int) tsEcr);
        return i + 8;
    }

    /** NOP NOP SACK with {@code n} blocks. */
    static int writeSack(ByteBuf b, int i, long[] start, long[] end, int n) {
        b.setByte(i++, NOP);
        b.setByte(i++, NOP);
        b.setByte(i++, SACK);
        b.setByte(i++, 2 + 8 * n);
        for (int k = 0; k < n; k++) {
            b.setInt(i, (int) start[k]);
            b.setInt(i + 4, (int) end[k]);
            i += 8;
        }
        return i;
    }
}
