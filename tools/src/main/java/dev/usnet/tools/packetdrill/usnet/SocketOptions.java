package dev.usnet.tools.packetdrill.usnet;

import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.*;

import dev.usnet.core.knob.Knobs;
import dev.usnet.tcp.TcpSysctl;
import dev.usnet.tcp.cc.CongestionControls;
import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.SyscallResult;
import dev.usnet.tools.packetdrill.TargetException;
import dev.usnet.tools.packetdrill.Value;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * setsockopt and getsockopt for the options usnet's TCP has. An option usnet does not model fails the script with
 * a {@link TargetException} naming it — it is never accepted and ignored — except SO_REUSEADDR / SO_REUSEPORT, which
 * only change which bind() calls succeed, and the target's bind checks them.
 */
final class SocketOptions {
    /** net.core.rmem_max / wmem_max: the most SO_RCVBUF / SO_SNDBUF take (the FORCE variants are not bounded). */
    static final class Limits {
        long rmemMax = 4_194_304;
        long wmemMax = 4_194_304;

        int clampRcvbuf(int v) {
            return (int) Math.min(v, rmemMax);
        }

        int clampSndbuf(int v) {
            return (int) Math.min(v, wmemMax);
        }
    }

    /** SOCK_MIN_RCVBUF / SOCK_MIN_SNDBUF on x86_64: 2 * (2048 + sizeof(struct sk_buff)). */
    private static final int SOCK_MIN_BUF = 2 * (2048 + 256);

    private final Knobs knobs;
    final Limits limits = new Limits();

    SocketOptions(Knobs knobs) {
        this.knobs = knobs;
    }

    private static String optionName(int level, int name) {
        String n = null;
        if (level == SOL_SOCKET) {
            n = switch (name) {
                case SO_REUSEADDR -> "SO_REUSEADDR";
                case SO_TYPE -> "SO_TYPE";
                case SO_ERROR -> "SO_ERROR";
                case SO_SNDBUF -> "SO_SNDBUF";
                case SO_RCVBUF -> "SO_RCVBUF";
                case SO_KEEPALIVE -> "SO_KEEPALIVE";
                case SO_LINGER -> "SO_LINGER";
                case SO_REUSEPORT -> "SO_REUSEPORT";
                case SO_RCVLOWAT -> "SO_RCVLOWAT";
                case SO_SNDBUFFORCE -> "SO_SNDBUFFORCE";
                case SO_RCVBUFFORCE -> "SO_RCVBUFFORCE";
                case 20 -> "SO_RCVTIMEO";
                case 21 -> "SO_SNDTIMEO";
                case 47 -> "SO_MAX_PACING_RATE";
                case 60 -> "SO_ZEROCOPY";
                default -> null;
            };
            return "SOL_SOCKET " + (n != null ? n : "option " + name);
        }
        if (level == IPPROTO_TCP) {
            n = switch (name) {
                case TCP_NODELAY -> "TCP_NODELAY";
                case TCP_MAXSEG -> "TCP_MAXSEG";
                case TCP_CORK -> "TCP_CORK";
                case TCP_KEEPIDLE -> "TCP_KEEPIDLE";
                case TCP_KEEPINTVL -> "TCP_KEEPINTVL";
                case TCP_KEEPCNT -> "TCP_KEEPCNT";
                case TCP_SYNCNT -> "TCP_SYNCNT";
                case TCP_LINGER2 -> "TCP_LINGER2";
                case TCP_DEFER_ACCEPT -> "TCP_DEFER_ACCEPT";
                case TCP_WINDOW_CLAMP -> "TCP_WINDOW_CLAMP";
                case TCP_INFO -> "TCP_INFO";
                case TCP_QUICKACK -> "TCP_QUICKACK";
                case TCP_CONGESTION -> "TCP_CONGESTION";
                case TCP_USER_TIMEOUT -> "TCP_USER_TIMEOUT";
                case TCP_FASTOPEN -> "TCP_FASTOPEN";
                case TCP_NOTSENT_LOWAT -> "TCP_NOTSENT_LOWAT";
                case TCP_FASTOPEN_CONNECT -> "TCP_FASTOPEN_CONNECT";
                case 14 -> "TCP_MD5SIG";
                case 16 -> "TCP_THIN_LINEAR_TIMEOUTS";
                case 19 -> "TCP_REPAIR";
                case 24 -> "TCP_TIMESTAMP";
                case 31 -> "TCP_ULP";
                case 36 -> "TCP_INQ";
                case 37 -> "TCP_TX_DELAY";
                default -> null;
            };
            return "IPPROTO_TCP " + (n != null ? n : "option " + name);
        }
        return "level " + level + " option " + name;
    }

    private static TargetException unsupported(Syscall c, int level, int name, String why) {
        return new TargetException("line " + c.line() + ": " + c.name() + " " + optionName(level, name)
                + " is not supported by the usnet target: " + why);
    }

    /** An int option's value: {@code [1]}, {@code 1}. */
    private static int intValue(Syscall c, Value v, int level, int name) {
        if (v instanceof Value.Array a && a.elements().size() == 1) {
            v = a.elements().get(0);
        }
        if (v instanceof Value.Int i) {
            return (int) i.value();
        }
        throw new TargetException("line " + c.line() + ": " + c.name() + " " + optionName(level, name)
                + " needs an integer value such as [1], got " + v);
    }

    SyscallResult set(SocketFile s, Syscall c) {
        int level = (int) c.intArg(1);
        int name = (int) c.intArg(2);
        Value v = c.arg(3);
        if (level == SOL_SOCKET) {
            switch (name) {
                case SO_REUSEADDR -> s.reuseAddr = intValue(c, v, level, name) != 0;
                case SO_REUSEPORT -> s.reusePort = intValue(c, v, level, name) != 0;
                case SO_KEEPALIVE -> {
                    s.keepAlive = intValue(c, v, level, name) != 0;
                    applyKeepAlive(s);
                }
                case SO_RCVBUF, SO_RCVBUFFORCE -> {
                    int n = Math.max(0, intValue(c, v, level, name));
                    s.rcvbufRequest = name == SO_RCVBUF ? limits.clampRcvbuf(n) : n;
                    if (s.sock != null) {
                        s.sock.setReceiveBufferSize(s.rcvbufRequest);
                    }
                }
                case SO_SNDBUF, SO_SNDBUFFORCE -> {
                    int n = Math.max(0, intValue(c, v, level, name));
                    s.sndbufRequest = name == SO_SNDBUF ? limits.clampSndbuf(n) : n;
                    if (s.sock != null) {
                        s.sock.setSendBufferSize(s.sndbufRequest);
                    }
                }
                case SO_LINGER -> setLinger(s, c, v);
                case SO_RCVLOWAT -> {
                    if (intValue(c, v, level, name) > 1) {
                        throw unsupported(c, level, name, "usnet wakes readers for any data (a low-water mark of 1)");
                    }
                }
                default -> throw unsupported(c, level, name, "usnet's TCP has no such socket option");
            }
            return SyscallResult.ok(0);
        }
        if (level != IPPROTO_TCP) {
            throw unsupported(c, level, name, "only SOL_SOCKET and IPPROTO_TCP options are modelled");
        }
        switch (name) {
            case TCP_NODELAY -> {
                s.noDelay = intValue(c, v, level, name) != 0;
                if (s.sock != null) {
                    s.sock.setNoDelay(s.noDelay);
                }
            }
            case TCP_CORK, TCP_QUICKACK -> {
                boolean on = intValue(c, v, level, name) != 0;
                if (s.sock == null) {
                    throw unsupported(c, level, name, "the usnet target takes it on a connected or accepted socket only");
                }
                if (name == TCP_CORK) {
                    s.sock.setCork(on);
                } else {
                    s.sock.setQuickAck(on);
                }
            }
            case TCP_KEEPIDLE, TCP_KEEPINTVL -> {
                int n = intValue(c, v, level, name);
                if (n < 1 || n > 32767) {
                    return SyscallResult.error(EINVAL);
                }
                if (name == TCP_KEEPIDLE) {
                    s.keepIdleS = n;
                } else {
                    s.keepIntvlS = n;
                }
                applyKeepAlive(s);
            }
            case TCP_KEEPCNT -> {
                int n = intValue(c, v, level, name);
                if (n < 1 || n > 127) {
                    return SyscallResult.error(EINVAL);
                }
                s.keepCnt = n;
                applyKeepAlive(s);
            }
            case TCP_MAXSEG -> {
                return setMaxSeg(s, c, intValue(c, v, level, name));
            }
            case TCP_SYNCNT, TCP_USER_TIMEOUT -> {
                return setTimeoutOption(s, c, level, name, intValue(c, v, level, name));
            }
            case TCP_CONGESTION -> {
                if (!(v instanceof Value.Str str)) {
                    throw new TargetException("line " + c.line() + ": setsockopt TCP_CONGESTION needs a name such as "
                            + "\"cubic\", got " + v);
                }
                String cc = str.value();
                if (!CongestionControls.available().contains(cc)) {
                    throw unsupported(c, level, name, "congestion control '" + cc + "' is not in usnet (available: "
                            + String.join(" ", CongestionControls.available()) + ")");
                }
                s.congestion = cc;
                if (s.sock != null) {
                    s.sock.setCongestionControl(cc);
                }
            }
            default -> throw unsupported(c, level, name, "usnet's TCP has no such option (or it is read-only)");
        }
        return SyscallResult.ok(0);
    }

    /**
     * TCP_MAXSEG: 0 or 88 (TCP_MIN_MSS) up to 32767 (MAX_TCP_WINDOW), else EINVAL. It shapes the handshake, so only
     * a socket not yet connected takes it; usnet does not re-size a live connection's segments.
     */
    private static SyscallResult setMaxSeg(SocketFile s, Syscall c, int mss) {
        if (mss != 0 && (mss < 88 || mss > 32767)) {
            return SyscallResult.error(EINVAL);
        }
        if (s.sock != null || s.listener != null) {
            throw unsupported(c, IPPROTO_TCP, TCP_MAXSEG, "usnet applies TCP_MAXSEG to an active open only (set it "
                    + "before connect())");
        }
        s.userMss = mss;
        return SyscallResult.ok(0);
    }

    /** TCP_SYNCNT (1..127) and TCP_USER_TIMEOUT (ms, not negative): EINVAL outside, as do_tcp_setsockopt. */
    private static SyscallResult setTimeoutOption(SocketFile s, Syscall c, int level, int name, int n) {
        if (name == TCP_SYNCNT) {
            if (n < 1 || n > 127) {
                return SyscallResult.error(EINVAL);
            }
            s.synCnt = n;
        } else {
            if (n < 0) {
                return SyscallResult.error(EINVAL);
            }
            s.userTimeoutMs = n;
        }
        if (s.sock != null) {
            s.applyTimeoutOptions(s.sock);
        }
        return SyscallResult.ok(0);
    }

    private static void applyKeepAlive(SocketFile s) {
        if (s.sock != null) {
            s.sock.setKeepAlive(s.keepAlive, s.keepIdleS, s.keepIntvlS, s.keepCnt);
        }
    }

    private static void setLinger(SocketFile s, Syscall c, Value v) {
        if (v instanceof Value.Array a && a.elements().size() == 1) {
            v = a.elements().get(0);
        }
        if (!(v instanceof Value.Struct st)) {
            throw new TargetException("line " + c.line() + ": setsockopt SO_LINGER needs {l_onoff=..., l_linger=...}, got " + v);
        }
        long onoff = structInt(c, st, "l_onoff");
        long linger = structInt(c, st, "l_linger");
        if (onoff != 0 && linger != 0) {
            throw unsupported(c, SOL_SOCKET, SO_LINGER, "a close() that waits up to l_linger seconds for unsent data is "
                    + "not modelled (only l_linger=0, the abortive close)");
        }
        s.lingerOn = onoff != 0;
        s.lingerSeconds = (int) linger;
    }

    private static long structInt(Syscall c, Value.Struct st, String field) {
        Value f = st.fields().get(field);
        if (f instanceof Value.Int i) {
            return i.value();
        }
        throw new TargetException("line " + c.line() + ": " + c.name() + " needs an integer " + field + ", got " + f);
    }

    /** getsockopt: the value in the shape the script wrote it ({@code [n]}, a string, a struct) and its length. */
    SyscallResult get(SocketFile s, Syscall c) {
        int level = (int) c.intArg(1);
        int name = (int) c.intArg(2);
        Value asked = c.arg(3);
        if (level == IPPROTO_TCP && name == TCP_CONGESTION) {
            String cc = s.sock != null ? s.sock.congestionControl()
                    : s.congestion != null ? s.congestion : knobs.get(TcpSysctl.CONGESTION_CONTROL);
            return withOut(c, new Value.Str(cc), 16);
        }
        if (level == IPPROTO_TCP && name == TCP_INFO) {
            // The fields are read with Target.tcpInfo; here only the length the kernel copies out.
            return withOut(c, null, (int) Math.min(TCP_INFO_SIZE, lengthAsked(c, TCP_INFO_SIZE)));
        }
        if (level == SOL_SOCKET && name == SO_LINGER) {
            LinkedHashMap<String, Value> f = new LinkedHashMap<>();
            f.put("l_onoff", Value.of(s.lingerOn ? 1 : 0));
            f.put("l_linger", Value.of(s.lingerSeconds));
            return withOut(c, new Value.Struct(f), 8);
        }
        long n;
        if (level == SOL_SOCKET) {
            n = switch (name) {
                case SO_REUSEADDR -> s.reuseAddr ? 1 : 0;
                case SO_REUSEPORT -> s.reusePort ? 1 : 0;
                case SO_TYPE -> SOCK_STREAM;
                case SO_ERROR -> s.takeError();
                case SO_KEEPALIVE -> s.keepAlive ? 1 : 0;
                case SO_RCVBUF -> s.sock != null ? s.sock.receiveBufferBytes()
                        : s.rcvbufRequest >= 0 ? Math.max(SOCK_MIN_BUF, 2L * s.rcvbufRequest)
                        : knobs.get(TcpSysctl.RMEM).def();
                case SO_SNDBUF -> s.sock != null ? s.sock.sendBufferBytes()
                        : s.sndbufRequest >= 0 ? Math.max(SOCK_MIN_BUF, 2L * s.sndbufRequest)
                        : knobs.get(TcpSysctl.WMEM).def();
                case SO_RCVLOWAT -> 1;
                default -> throw unsupported(c, level, name, "usnet's TCP has no such socket option");
            };
        } else if (level == IPPROTO_TCP) {
            n = switch (name) {
                case TCP_NODELAY -> s.noDelay ? 1 : 0;
                case TCP_KEEPIDLE -> s.keepIdleS >= 0 ? s.keepIdleS : knobs.get(TcpSysctl.KEEPALIVE_TIME);
                case TCP_KEEPINTVL -> s.keepIntvlS >= 0 ? s.keepIntvlS : knobs.get(TcpSysctl.KEEPALIVE_INTVL);
                case TCP_SYNCNT -> s.synCnt > 0 ? s.synCnt : knobs.get(TcpSysctl.SYN_RETRIES);
                case TCP_USER_TIMEOUT -> s.userTimeoutMs;
                case TCP_KEEPCNT -> s.keepCnt >= 0 ? s.keepCnt : knobs.get(TcpSysctl.KEEPALIVE_PROBES);
                // mss_cache once connected; before, TCP_MAXSEG's value or TCP_MSS_DEFAULT.
                case TCP_MAXSEG -> s.sock != null ? s.sock.info().sndMss() : s.userMss > 0 ? s.userMss : 536;
                default -> throw unsupported(c, level, name, "usnet's TCP has no such option");
            };
        } else {
            throw unsupported(c, level, name, "only SOL_SOCKET and IPPROTO_TCP options are modelled");
        }
        return withOut(c, new Value.Array(List.of(Value.of(n))), 4);
    }

    private static long lengthAsked(Syscall c, long dflt) {
        Value l = c.arg(4);
        if (l instanceof Value.Array a && a.elements().size() == 1 && a.elements().get(0) instanceof Value.Int i) {
            return i.value();
        }
        return dflt;
    }

    private static SyscallResult withOut(Syscall c, Value value, int length) {
        Map<Integer, Value> out = new java.util.HashMap<>();
        if (value != null) {
            out.put(3, value);
        }
        out.put(4, new Value.Array(List.of(Value.of(length))));
        return new SyscallResult(0, 0, Map.copyOf(out));
    }
}
