package dev.usnet.tcp;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.buf.TxCompletion;
import dev.usnet.core.stats.Mib;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * TCP small queues (Linux 3.6+, tcp_output.c): a connection stops sending new data while more than a limit of its
 * bytes wait below TCP (qdisc and NIC), and resumes when the device completes their transmission.
 *
 * <p>Every segment clone TCP hands to IP is charged to the connection ({@link Packet#setOwner}, skb_set_owner_w in
 * tcp_transmit_skb) for its frame length; {@link #completed} (tcp_wfree) takes the charge back when the frame
 * leaves an emulated NIC onto its wire, is orphaned by a veth (dev_forward_skb → skb_orphan) or is freed. The sum
 * is sk_wmem_alloc's share of TCP data. {@link #throttled} is tcp_write_xmit's check, with 3.13–4.x's limit:
 * {@code min(max(2 × this segment, pacing rate / 1024), tcp_limit_output_bytes)} — two segments or about 1 ms at
 * the pacing rate (sk_pacing_rate = 2 × cwnd × mss / srtt, tcp_update_pacing_rate before the ss/ca ratios of "tcp: refine
 * pacing rate determination"),
 * never more than the sysctl (131072 in 3.6–4.1, 262144 from 4.2).
 *
 * <p>A completion can come from another namespace's thread (real time) and from inside this connection's own
 * transmit path (a veth orphans in its xmit); it never sends. When the connection was throttled it schedules
 * {@link #resume} once on the connection's namespace scheduler (the TSQ tasklet, tcp_tsq_handler), which runs
 * tcp_write_xmit again.
 *
 * <p>Differs: Linux charges skb->truesize (payload plus sk_buff overhead, ~2.3 KB for a 1448-byte segment) and
 * from 4.2 pure ACKs too; usnet charges the frame's length and only what {@code TcpOutput.transmit} sends (data,
 * SYN, FIN, retransmissions). Retransmissions are not held back (3.x–4.x check TSQ only for new data). The check is
 * per socket, not per skb fclone (Linux 3.19+ also skips a retransmit whose original is still in the queue).
 */
final class TcpSmallQueues implements TxCompletion {
    private static final int IDLE = 0;
    private static final int THROTTLED = 1;
    private static final int QUEUED = 2;

    private final TcpSock sk;
    private final boolean enabled;
    private final AtomicLong queuedBelow = new AtomicLong();
    // TSQ_THROTTLED and TSQ_QUEUED of tp->tsq_flags, as one state.
    private final AtomicInteger flags = new AtomicInteger(IDLE);
    private final Runnable resumeTask = this::resume;
    private long throttles;

    TcpSmallQueues(TcpSock sk, boolean enabled) {
        this.sk = sk;
        this.enabled = enabled;
    }

    boolean enabled() {
        return enabled;
    }

    /** Bytes of this connection's segments below TCP now (its sk_wmem_alloc share). */
    long queuedBelow() {
        return queuedBelow.get();
    }

    /**
     * Times tcp_write_xmit stopped on the limit; also counted per namespace as {@code UsnetTCPTSQThrottled} (usnet's
     * counter: Linux has no MIB for it).
     */
    long throttles() {
        return throttles;
    }

    /** tcp_transmit_skb's skb_set_owner_w: {@code clone} is charged to this connection until completed. */
    void charge(Packet clone) {
        if (!enabled) {
            return;
        }
        int bytes = clone.length();
        queuedBelow.addAndGet(bytes);
        clone.setOwner(this, bytes);
    }

    /**
     * tcp_write_xmit's TSQ check before a segment of {@code segBytes}: true when more than the limit is queued
     * below, so sending stops until a completion resumes it. Sets THROTTLED first and checks again, as Linux does,
     * so a completion racing with the check is not lost.
     */
    boolean throttled(int segBytes) {
        if (!enabled) {
            return false;
        }
        long limit = limit(segBytes);
        if (queuedBelow.get() <= limit) {
            return false;
        }
        flags.compareAndSet(IDLE, THROTTLED);
        if (queuedBelow.get() <= limit) {
            return false;
        }
        throttles++;
        sk.stack.mib().inc(Mib.UsnetTCPTSQThrottled);
        return true;
    }

    /** min(max(2 × segment, sk_pacing_rate >> 10), tcp_limit_output_bytes). */
    long limit(int segBytes) {
        long sysctl = sk.stack.knobs().get(TcpSysctl.LIMIT_OUTPUT_BYTES);
        long srttUs = sk.rtt.srttUs;
        long pacing = Long.MAX_VALUE;
        if (srttUs > 0) {
            long cwnd = Math.max(sk.cc.sndCwnd, sk.sb.packetsOut());
            // bytes per second: 2 × mss × cwnd / srtt.
            pacing = 2L * sk.mssCache * cwnd * 1_000_000L / srttUs;
        }
        long l = Math.max(2L * segBytes, pacing >> 10);
        return Math.min(l, sysctl);
    }

    /** tcp_wfree: the charge ends; a throttled connection gets its transmit resumed on its own scheduler. */
    @Override
    public void completed(Packet p) {
        queuedBelow.addAndGet(-p.ownerBytes());
        if (flags.compareAndSet(THROTTLED, QUEUED)) {
            sk.stack.scheduler().execute(resumeTask);
        }
    }

    /** tcp_tsq_handler: on the connection's thread, sends what the limit held back. */
    private void resume() {
        flags.set(IDLE);
        sk.out.pushPending();
    }
}
