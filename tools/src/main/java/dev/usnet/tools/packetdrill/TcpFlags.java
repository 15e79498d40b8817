package dev.usnet.tools.packetdrill;

/** TCP header flag bits and the letters packetdrill writes them with ({@code .} is ACK, {@code W} is CWR). */
final class TcpFlags {
    static final int FIN = 0x01;
    static final int SYN = 0x02;
    static final int RST = 0x04;
    static final int PSH = 0x08;
    static final int ACK = 0x10;
    static final int URG = 0x20;
    static final int ECE = 0x40;
    static final int CWR = 0x80;

    private TcpFlags() {
    }

    /** The bits of a script's flag letters ({@code "P."} → PSH|ACK, {@code "-"} → none). */
    static int fromLetters(String letters) {
        int f = 0;
        for (char c : letters.toCharArray()) {
            f |= switch (c) {
                case 'F' -> FIN;
                case 'S' -> SYN;
                case 'R' -> RST;
                case 'P' -> PSH;
                case '.' -> ACK;
                case 'U' -> URG;
                case 'E' -> ECE;
                case 'W' -> CWR;
                default -> 0;
            };
        }
        return f;
    }

    /** Letters in packetdrill's order: {@code S.}, {@code P.}, {@code F.}, {@code R.}; {@code -} for none. */
    static String toLetters(int f) {
        StringBuilder b = new StringBuilder();
        if ((f & FIN) != 0) {
            b.append('F');
        }
        if ((f & SYN) != 0) {
            b.append('S');
        }
        if ((f & RST) != 0) {
            b.append('R');
        }
        if ((f & PSH) != 0) {
            b.append('P');
        }
        if ((f & URG) != 0) {
            b.append('U');
        }
        if ((f & ECE) != 0) {
            b.append('E');
        }
        if ((f & CWR) != 0) {
            b.append('W');
        }
        if ((f & ACK) != 0) {
            b.append('.');
        }
        return b.isEmpty() ? "-" : b.toString();
    }
}
