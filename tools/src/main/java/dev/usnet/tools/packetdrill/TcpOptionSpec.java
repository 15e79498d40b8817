package dev.usnet.tools.packetdrill;

import java.util.List;

/** A TCP option as a script writes it in {@code <...>}. */
sealed interface TcpOptionSpec {
    int KIND_EOL = 0;
    int KIND_NOP = 1;
    int KIND_MSS = 2;
    int KIND_WSCALE = 3;
    int KIND_SACK_PERMITTED = 4;
    int KIND_SACK = 5;
    int KIND_TIMESTAMP = 8;

    int kind();

    record Eol() implements TcpOptionSpec {
        public int kind() {
            return KIND_EOL;
        }

        @Override
        public String toString() {
            return "eol";
        }
    }

    record Nop() implements TcpOptionSpec {
        public int kind() {
            return KIND_NOP;
        }

        @Override
        public String toString() {
            return "nop";
        }
    }

    record Mss(int value) implements TcpOptionSpec {
        public int kind() {
            return KIND_MSS;
        }

        @Override
        public String toString() {
            return "mss " + value;
        }
    }

    record WindowScale(int shift) implements TcpOptionSpec {
        public int kind() {
            return KIND_WSCALE;
        }

        @Override
        public String toString() {
            return "wscale " + shift;
        }
    }

    record SackPermitted() implements TcpOptionSpec {
        public int kind() {
            return KIND_SACK_PERMITTED;
        }

        @Override
        public String toString() {
            return "sackOK";
        }
    }

    /** SACK blocks as {left, right} pairs (unsigned 32-bit in a long). */
    record Sack(List<long[]> blocks) implements TcpOptionSpec {
        public int kind() {
            return KIND_SACK;
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder("sack");
            for (long[] blk : blocks) {
                b.append(' ').append(blk[0]).append(':').append(blk[1]);
            }
            return b.toString();
        }
    }

    record Timestamp(long val, long ecr) implements TcpOptionSpec {
        public int kind() {
            return KIND_TIMESTAMP;
        }

        @Override
        public String toString() {
            return "TS val " + val + " ecr " + ecr;
        }
    }

    /** An option the script language has no name for (only ever decoded from a sniffed packet). */
    record Unknown(int kind, int length) implements TcpOptionSpec {
        @Override
        public String toString() {
            return "kind " + kind + " len " + length;
        }
    }
}
