package dev.usnet.tools.packetdrill;

import java.util.List;

/**
 * A packet line: {@code <} (the script sends, {@code inbound} to the stack) or {@code >} (the stack must send).
 * Exactly one of {@code tcp} and {@code icmp} is set. {@code ecn} is the IP ECN field as written ({@code noecn},
 * {@code ect0}, {@code ect1}, {@code ce}, {@code ect01}) or null.
 */
record PacketSpec(boolean inbound, String ecn, Tcp tcp, Icmp icmp) implements Action {

    /**
     * A TCP segment. {@code flags} are the letters as written ({@code S}, {@code P.}, {@code F.}, {@code .},
     * {@code -}: none); sequence numbers are unsigned 32-bit in a long; {@code ack}/{@code window}/{@code urg} null
     * when not written; {@code options} null when no {@code <...>} is written, {@code anyOptions} for {@code <...>}.
     */
    record Tcp(String flags, long seq, long endSeq, int payloadLength, Long ack, Integer window, Integer urg,
               List<TcpOptionSpec> options, boolean anyOptions) {

        boolean has(char flag) {
            return flags.indexOf(flag) >= 0;
        }

        String describe() {
            StringBuilder b = new StringBuilder(flags).append(' ').append(seq).append(':').append(endSeq)
                    .append('(').append(payloadLength).append(')');
            if (ack != null) {
                b.append(" ack ").append(ack);
            }
            if (window != null) {
                b.append(" win ").append(window);
            }
            if (urg != null) {
                b.append(" urg ").append(urg);
            }
            if (anyOptions) {
                b.append(" <...>");
            } else if (options != null) {
                b.append(" <");
                for (int i = 0; i < options.size(); i++) {
                    b.append(i > 0 ? "," : "").append(options.get(i));
                }
                b.append('>');
            }
            return b.toString();
        }
    }

    /**
     * An ICMP message. {@code type}/{@code code} as ICMPv4 numbers (-1 for a name only ICMPv6 has; the runner
     * takes the numbers of the version it runs over from {@link IcmpNames}); {@code mtu} for frag_needed
     * (packet_too_big) or null; {@code echoed}
     * is the quoted TCP segment's {@code seq:end(len)} ({@code [1:1461(1460)]}), null when not written.
     */
    record Icmp(String typeName, String codeName, int type, int code, Integer mtu, long[] echoed) {

        String describe() {
            StringBuilder b = new StringBuilder("icmp ").append(typeName);
            if (codeName != null) {
                b.append(' ').append(codeName);
            }
            if (mtu != null) {
                b.append(" mtu ").append(mtu);
            }
            if (echoed != null) {
                b.append(" [").append(echoed[0]).append(':').append(echoed[1]).append('(').append(echoed[2])
                        .append(")]");
            }
            return b.toString();
        }
    }

    String describe() {
        String ip = ecn == null ? "" : "[" + ecn + "] ";
        return (inbound ? "< " : "> ") + ip + (tcp != null ? tcp.describe() : icmp.describe());
    }
}
