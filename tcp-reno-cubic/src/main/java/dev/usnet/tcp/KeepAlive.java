package dev.usnet.tcp;

import dev.usnet.core.stats.Mib;

/**
 * SO_KEEPALIVE with TCP_KEEPIDLE / TCP_KEEPINTVL / TCP_KEEPCNT (tcp_keepalive_timer): after the idle time, probes
 * at the interval; a connection whose probes all go unanswered is reset (ETIMEDOUT). -1 takes the namespace's
 * net.ipv4.tcp_keepalive_*.
 */
final class KeepAlive {
    private final TcpSock sk;
    boolean on;
    private int idleS = -1;
    private int intvlS = -1;
    private int cnt = -1;
    /** Probes sent without an answer (icsk_probes_out); any segment received resets it. */
    int probesOut;

    KeepAlive(TcpSock sk) {
        this.sk = sk;
    }

    void set(boolean enable, int idle, int intvl, int count) {
        on = enable;
        idleS = idle;
        intvlS = intvl;
        cnt = count;
        if (enable && sk.state == TcpState.ESTABLISHED) {
            sk.timers.keepalive.arm(idleNanos());
        } else if (!enable) {
            sk.timers.keepalive.cancel();
        }
    }

    /** The connection is established: the first probe is due after the idle time. */
    void established() {
        if (on) {
            sk.timers.keepalive.arm(idleNanos());
        }
    }

    private long idleNanos() {
        long s = idleS >= 0 ? idleS : sk.stack.knobs().get(TcpSysctl.KEEPALIVE_TIME);
        return s * 1_000_000_000L;
    }

    void timerFired() {
        if (!on || sk.state == TcpState.CLOSED) {
            return;
        }
        if (sk.state != TcpState.ESTABLISHED && sk.state != TcpState.CLOSE_WAIT && sk.state != TcpState.FIN_WAIT2) {
            return;
        }
        long now = sk.stack.now();
        long idle = now - sk.lastRcvNanos;
        long keepIdle = idleNanos();
        long intvl = (intvlS >= 0 ? intvlS : sk.stack.knobs().get(TcpSysctl.KEEPALIVE_INTVL)) * 1_000_000_000L;
        int count = cnt >= 0 ? cnt : (int) sk.stack.knobs().get(TcpSysctl.KEEPALIVE_PROBES);
        SockTimer t = sk.timers.keepalive;
        if (sk.sb.packetsOut() > 0 || sk.sendBuf.size() > 0) {
            // Data in flight: the retransmission timer is in charge.
            t.arm(keepIdle);
            return;
        }
        if (idle >= keepIdle) {
            if (probesOut >= count) {
                sk.out.sendActiveReset();
                sk.finish(TcpError.ETIMEDOUT);
                return;
            }
            sk.stack.mib().inc(Mib.TcpExtTCPKeepAlive);
            sk.out.sendProbe();
            probesOut++;
            t.arm(intvl);
        } else {
            t.arm(keepIdle - idle);
        }
    }
}
