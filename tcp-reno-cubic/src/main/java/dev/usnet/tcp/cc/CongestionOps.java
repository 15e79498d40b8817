package dev.usnet.tcp.cc;

/**
 * A congestion-control algorithm (struct tcp_congestion_ops). One instance per connection holds the
 * algorithm's private state (what Linux keeps in icsk_ca_priv). All calls happen on the connection's
 * namespace thread.
 */
public interface CongestionOps {
    /** The name used by {@code net.ipv4.tcp_congestion_control} and {@code ss}: "reno", "cubic". */
    String name();

    /** Called once when the connection is established (or when the algorithm is switched). */
    default void init(CcSock sk) {}

    /** The slow-start threshold to use after a loss; the caller stores it in snd_ssthresh. */
    long ssthresh(CcSock sk);

    /** Grows cwnd for {@code acked} newly acknowledged segments; {@code ack} is the new snd_una. */
    void congAvoid(CcSock sk, long ack, long acked);

    /** The congestion state is about to change to {@code newState}. */
    default void setState(CcSock sk, CaState newState) {}

    /** Something happened that may matter to the algorithm. */
    default void cwndEvent(CcSock sk, CaEvent ev) {}

    /** {@code pkts} segments were acknowledged by one ACK; {@code rttUs} is the RTT sample, or -1 if none. */
    default void pktsAcked(CcSock sk, long pkts, long rttUs) {}

    /** The cwnd to restore when a reduction turns out to have been spurious. */
    default long undoCwnd(CcSock sk) {
        return Math.max(sk.sndCwnd, sk.priorCwnd);
    }
}
