package dev.usnet.tcp;

import static dev.usnet.tcp.TcpSkbCb.SACKED;
import static dev.usnet.tcp.TcpSkbCb.SEG_FIN;
import static dev.usnet.tcp.TcpSkbCb.SEG_SYN;

import dev.usnet.core.buf.Packet;
import dev.usnet.core.stats.Mib;
import dev.usnet.core.wire.IcmpPacket;
import dev.usnet.core.wire.Icmpv6Packet;
import dev.usnet.core.wire.Ipv6Packet;

/**
 * What ICMP errors do to one connection (tcp_v4_err, tcp_req_err, tcp_v4_mtu_reduced), and the errors they leave
 * behind (sk_err, sk_err_soft).
 *
 * <ul>
 * <li>An error must quote a sequence number in snd_una..snd_nxt (a SYN-RECV child's: its ISS exactly), else it
 * is counted (TcpExtOutOfWindowIcmps) and ignored: a blind attacker cannot guess one.
 * <li>While opening (SYN-SENT, or SYN-RECV after a simultaneous open) any destination unreachable, time
 * exceeded or parameter problem fails the connection at once with the errno of {@link TcpError} (counted
 * TcpAttemptFails). A SYN-RECV child of a listener is dropped silently (TcpExtListenDrops) on network or host
 * unreachable, time exceeded or parameter problem, and left alone on anything else: accept() never reports
 * network errors.
 * <li>Once established an error is soft (RFC 1122 4.2.3.9): it is remembered and becomes the errno if the
 * connection later times out ({@link #timeoutError}), and SO_ERROR reads it ({@link #takeSoError}). With
 * IP_RECVERR ({@link #setRecvErr}, off by default, as inet->recverr) it is a pending hard error instead.
 * <li>Fragmentation needed lowers the path MTU (never raises it; floor net.ipv4.route.min_pmtu), shrinks the MSS,
 * and resends at once what no longer fits (tcp_simple_retransmit): each queued segment larger than the new MSS is
 * re-cut into segments of the new MSS (as tcp_retransmit_skb resizes one with tcp_set_skb_tso_segs) and marked
 * lost, and the connection enters Loss without touching cwnd.
 * </ul>
 *
 * A network or host unreachable about the head of a series of timeouts undoes one backoff step (RFC 6069,
 * tcp_ld_RTO_revert): the path is down, not congested, so backing off further would only delay the retry that
 * finds it repaired.
 *
 * Over IPv6 (tcp_v6_err, {@link #icmpv6Error}) the same, with ICMPv6's errnos (icmpv6_err_convert): while
 * opening every error fails the connection, whether ICMPv6 calls it fatal or not; a SYN-RECV child is dropped on
 * the fatal ones (administratively prohibited, port unreachable, policy failure, reject route, parameter problem);
 * packet too big below 1280 is ignored, and one that does not shrink the MSS changes nothing
 * (tcp_v6_mtu_reduced); a no-route unreachable undoes one backoff step.
 *
 * Differs: a redirect changes nothing (usnet's routes are per namespace, not per socket).
 */
final class TcpErr {
    private final TcpSock sk;
    /** sk_err_soft: the last ICMP error of an established connection, or null. */
    private TcpError soft;
    /** sk_err: a hard error not yet read by SO_ERROR, or null. */
    private TcpError pending;
    /** IP_RECVERR (inet->recverr): errors of an established connection are reported at once. */
    private boolean recvErr;
    /** icsk_pmtu_cookie: the path MTU the MSS was last computed for (0: not yet looked up). */
    private int pmtuCookie;

    TcpErr(TcpSock sk) {
        this.sk = sk;
    }

    /** The path MTU the connection sizes its segments for: the route's, or lower after fragmentation needed. */
    int pathMtu() {
        if (pmtuCookie == 0) {
            pmtuCookie = sk.af.pathMtu(sk);
        }
        return pmtuCookie;
    }

    /** The errno of a connection that timed out: the last soft ICMP error, or ETIMEDOUT (tcp_write_err). */
    TcpError timeoutError() {
        return soft != null ? soft : TcpError.ETIMEDOUT;
    }

    /** SO_ERROR: the pending hard error, else the soft one, cleared by reading; NONE when there is neither. */
    TcpError takeSoError() {
        TcpError e = pending != null ? pending : soft;
        if (pending != null) {
            pending = null;
        } else {
            soft = null;
        }
        return e != null ? e : TcpError.NONE;
    }

    /** The soft error remembered now (sk_err_soft), or NONE; does not clear it. */
    TcpError softError() {
        return soft != null ? soft : TcpError.NONE;
    }

    void setRecvErr(boolean on) {
        recvErr = on;
    }

    /**
     * tcp_v4_err for this connection: an ICMP {@code type}/{@code code} quoting one of its segments whose
     * sequence number is {@code seq}; {@code info} is the next-hop MTU for fragmentation needed.
     */
    void icmpError(int type, int code, int info, long seq) {
        TcpState st = sk.state;
        if (st == TcpState.CLOSED || st == TcpState.TIME_WAIT || st == TcpState.LISTEN) {
            return;
        }
        if (st == TcpState.SYN_RECV && sk.parent != null) {
            requestError(type, code, seq);
            return;
        }
        if (!between(seq, sk.sndUna, sk.sndNxt)) {
            sk.stack.mib().inc(Mib.TcpExtOutOfWindowIcmps);
            return;
        }
        TcpError err;
        switch (type) {
            case IcmpPacket.PARAMETER_PROB -> err = TcpError.EPROTO;
            case IcmpPacket.TIME_EXCEEDED -> err = TcpError.EHOSTUNREACH;
            case IcmpPacket.DEST_UNREACH -> {
                if (code > 15) {
                    return;
                }
                if (code == IcmpPacket.CODE_FRAG_NEEDED) {
                    mtuReduced(info);
                    return;
                }
                err = TcpError.ofUnreachableCode(code);
                if (code == IcmpPacket.CODE_NET_UNREACH || code == IcmpPacket.CODE_HOST_UNREACH) {
                    revertRtoBackoff(seq);
                }
            }
            default -> {
                // Redirects (and anything else) change nothing here.
                return;
            }
        }
        if (st == TcpState.SYN_SENT || st == TcpState.SYN_RECV) {
            // tcp_done_with_error: the connect fails now, not after tcp_syn_retries.
            sk.stack.mib().inc(Mib.TcpAttemptFails);
            sk.finish(err);
            return;
        }
        if (recvErr) {
            pending = err;
            sk.notifyReadable();
        } else {
            soft = err;
        }
    }

    /**
     * tcp_v6_err for this connection: an ICMPv6 {@code type}/{@code code} quoting one of its segments whose
     * sequence number is {@code seq}; {@code info} is the MTU of a packet too big.
     */
    void icmpv6Error(int type, int code, long info, long seq) {
        TcpState st = sk.state;
        if (st == TcpState.CLOSED || st == TcpState.TIME_WAIT || st == TcpState.LISTEN) {
            return;
        }
        TcpError err = icmpv6Errno(type, code);
        if (st == TcpState.SYN_RECV && sk.parent != null) {
            // tcp_req_err with icmpv6_err_convert's verdict.
            if (seq != sk.iss) {
                sk.stack.mib().inc(Mib.TcpExtOutOfWindowIcmps);
            } else if (icmpv6Fatal(type, code)) {
                sk.stack.mib().inc(Mib.TcpExtListenDrops);
                sk.finish(TcpError.NONE);
            }
            return;
        }
        if (!between(seq, sk.sndUna, sk.sndNxt)) {
            sk.stack.mib().inc(Mib.TcpExtOutOfWindowIcmps);
            return;
        }
        if (type == Icmpv6Packet.PKT_TOOBIG) {
            if (info >= Ipv6Packet.MIN_MTU) {
                mtuReduced6((int) Math.min(info, Integer.MAX_VALUE));
            }
            return;
        }
        if (err == null) {
            return;
        }
        if (st == TcpState.SYN_SENT || st == TcpState.SYN_RECV) {
            sk.stack.mib().inc(Mib.TcpAttemptFails);
            sk.finish(err);
            return;
        }
        if (type == Icmpv6Packet.DEST_UNREACH && code == Icmpv6Packet.CODE_NOROUTE) {
            revertRtoBackoff(seq);
        }
        if (recvErr) {
            pending = err;
            sk.notifyReadable();
        } else {
            soft = err;
        }
    }

    /** icmpv6_err_convert's errno for an ICMPv6 error, or null for a message that is none. */
    private static TcpError icmpv6Errno(int type, int code) {
        return switch (type) {
            case Icmpv6Packet.DEST_UNREACH -> switch (code) {
                case Icmpv6Packet.CODE_NOROUTE -> TcpError.ENETUNREACH;
                case Icmpv6Packet.CODE_ADM_PROHIBITED, Icmpv6Packet.CODE_POLICY_FAIL, Icmpv6Packet.CODE_REJECT_ROUTE ->
                        TcpError.EACCES;
                case Icmpv6Packet.CODE_PORT_UNREACH -> TcpError.ECONNREFUSED;
                default -> TcpError.EHOSTUNREACH;
            };
            case Icmpv6Packet.PKT_TOOBIG -> TcpError.EMSGSIZE;
            case Icmpv6Packet.PARAMPROB -> TcpError.EPROTO;
            case Icmpv6Packet.TIME_EXCEED -> TcpError.EHOSTUNREACH;
            default -> null;
        };
    }

    /** icmpv6_err_convert's "fatal": the errors that say the peer will never answer. */
    private static boolean icmpv6Fatal(int type, int code) {
        return switch (type) {
            case Icmpv6Packet.DEST_UNREACH -> code == Icmpv6Packet.CODE_ADM_PROHIBITED
                    || code == Icmpv6Packet.CODE_PORT_UNREACH || code == Icmpv6Packet.CODE_POLICY_FAIL
                    || code == Icmpv6Packet.CODE_REJECT_ROUTE;
            case Icmpv6Packet.PARAMPROB -> true;
            default -> false;
        };
    }

    /**
     * tcp_v6_mtu_reduced: a report that would not shrink the MSS changes nothing; otherwise the path MTU is lowered
     * (never below 1280) and what no longer fits is resent at once.
     */
    private void mtuReduced6(int reportedMtu) {
        if (sk.af.mtuToMss(reportedMtu) - (sk.tsOk ? 12 : 0) >= sk.mssCache) {
            return;
        }
        int mtu = sk.af.updatePmtu(sk, reportedMtu);
        if (pathMtu() > mtu) {
            pmtuCookie = mtu;
            sk.computeMss();
            simpleRetransmit();
        }
    }

    /**
     * tcp_ld_RTO_revert: an unreachable quoting snd_una while the RTO is backed off takes one doubling back and
     * re-arms the timer from the head's last transmission, or retransmits now if that time has passed.
     */
    private void revertRtoBackoff(long seq) {
        TcpTimers timers = sk.timers;
        Packet head = sk.sb.head();
        if (seq != sk.sndUna || timers.retransmits == 0 || timers.backoff == 0 || head == null) {
            return;
        }
        timers.backoff--;
        RttEstimator rtt = sk.rtt;
        long base = rtt.srttUs == 0 ? RttEstimator.TCP_TIMEOUT_INIT_NANOS
                : Math.min((rtt.srttUs + Math.max(4 * rtt.rttvarUs, sk.tcp.rtoMinNanos() / 1000)) * 1000,
                        RttEstimator.TCP_RTO_MAX_NANOS);
        rtt.rtoNanos = Math.min(base << Math.min(timers.backoff, 16), RttEstimator.TCP_RTO_MAX_NANOS);
        long remaining = rtt.rtoNanos - (sk.stack.now() - TcpSkbCb.txNanos(head));
        timers.armRto(Math.max(remaining, 0));
    }

    /**
     * tcp_req_err: an error about a listener's SYN-ACK. Only one quoting the SYN-ACK's own sequence number counts;
     * network or host unreachable, time exceeded and parameter problem drop the half-open connection silently.
     */
    private void requestError(int type, int code, long seq) {
        if (seq != sk.iss) {
            sk.stack.mib().inc(Mib.TcpExtOutOfWindowIcmps);
            return;
        }
        boolean abort = type == IcmpPacket.PARAMETER_PROB || type == IcmpPacket.TIME_EXCEEDED
                || type == IcmpPacket.DEST_UNREACH
                        && (code == IcmpPacket.CODE_NET_UNREACH || code == IcmpPacket.CODE_HOST_UNREACH);
        if (abort) {
            sk.stack.mib().inc(Mib.TcpExtListenDrops);
            sk.finish(TcpError.NONE);
        }
    }

    /** tcp_v4_mtu_reduced: a router could not forward a segment of ours without fragmenting it. */
    private void mtuReduced(int reportedMtu) {
        int mtu = sk.af.updatePmtu(sk, reportedMtu);
        if (reportedMtu < mtu) {
            // Below the floor: the path MTU was clamped and DF goes; remembered in case the connection cannot
            // recover (tcp_v4_mtu_reduced's EMSGSIZE).
            soft = TcpError.EMSGSIZE;
        }
        if (pathMtu() > mtu) {
            pmtuCookie = mtu;
            sk.computeMss();
            simpleRetransmit();
        }
    }

    /**
     * tcp_simple_retransmit: what the smaller MSS no longer carries is lost for sure. Each queued segment larger
     * than the MSS (a GSO segment's size counts, not its length) is re-cut to the new MSS and marked lost; then
     * Loss without a cwnd reduction (the amount of data in flight did not change, only its unit) and the
     * retransmission of what cwnd allows.
     */
    private void simpleRetransmit() {
        Scoreboard sb = sk.sb;
        int mss = sk.mssCache;
        for (int k = 0; k < sb.size(); k++) {
            Packet s = sb.get(k);
            int bits = TcpSkbCb.sacked(s);
            if ((bits & SACKED) != 0 || segLen(s, bits) <= mss) {
                continue;
            }
            resize(s, bits, mss);
            // Not yet marked: lost now; a retransmission already marked: lost again (tcp_mark_skb_lost).
            sb.markLostAgain(s);
        }
        if (sb.lostOut() == 0) {
            return;
        }
        if (!sk.recovery.sack()) {
            sb.limitRenoSacked();
        }
        sk.recovery.enterLossForMtu();
        sk.retransmit.xmitQueue();
    }

    /** tcp_skb_seglen: the size of the segments a queued segment goes out as. */
    private static int segLen(Packet s, int bits) {
        if (TcpSkbCb.pcount(s) > 1 && s.isGso()) {
            return s.gsoSize();
        }
        return payload(s, bits);
    }

    private static int payload(Packet s, int bits) {
        int flags = (bits & (SEG_SYN | SEG_FIN)) != 0 ? 1 : 0;
        return (int) Seq.sub(TcpSkbCb.endSeq(s), TcpSkbCb.seq(s)) - flags;
    }

    /**
     * tcp_set_skb_tso_segs and tcp_adjust_pcount: the queued segment goes out as segments of {@code mss} from
     * now on, and the scoreboard counts it as that many packets.
     */
    private void resize(Packet s, int bits, int mss) {
        int len = payload(s, bits);
        int old = TcpSkbCb.pcount(s);
        int now = Math.max(1, (len + mss - 1) / mss);
        if (now > 1) {
            s.setGso(sk.af.gsoType(), mss);
        } else {
            s.setGso(Packet.GSO_NONE, 0);
        }
        TcpSkbCb.setPcount(s, now);
        sk.sb.pcountChanged(s, now - old);
    }

    /** between(seq, low, high) of Linux: low <= seq <= high in sequence space (unsigned distances from low). */
    private static boolean between(long seq, long low, long high) {
        return (seq - low & 0xffff_ffffL) <= (high - low & 0xffff_ffffL);
    }
}
