package dev.usnet.tools.packetdrill.usnet;

import static dev.usnet.tools.packetdrill.usnet.LinuxAbi.*;

import dev.usnet.tools.packetdrill.Syscall;
import dev.usnet.tools.packetdrill.SyscallResult;
import dev.usnet.tools.packetdrill.TargetException;
import dev.usnet.tools.packetdrill.Value;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * poll, epoll_create, epoll_ctl and epoll_wait of a packetdrill script against usnet ({@link SocketCalls} makes the
 * socket calls): readiness as each open file reports it, a timeout as a wake-up of virtual time.
 */
final class PollCalls {
    private final FdTable fds;
    private final SocketCalls.Clock clock;

    PollCalls(FdTable fds, SocketCalls.Clock clock) {
        this.fds = fds;
        this.clock = clock;
    }

    private long timeoutDeadline(long timeoutMs) {
        if (timeoutMs <= 0) {
            return timeoutMs;
        }
        long at = clock.nowNanos() + timeoutMs * 1_000_000L;
        clock.wakeAt(at);
        return at;
    }

    BlockedCall.Attempt poll(Syscall c) {
        if (!(c.arg(0) instanceof Value.Array a)) {
            throw new TargetException("line " + c.line() + ": poll needs [{fd=..., events=...}, ...], got " + c.arg(0));
        }
        List<Value.Struct> entries = new ArrayList<>();
        for (Value v : a.elements()) {
            if (!(v instanceof Value.Struct st) || !(st.fields().get("fd") instanceof Value.Int)
                    || !(st.fields().get("events") instanceof Value.Int)) {
                throw new TargetException("line " + c.line() + ": a pollfd needs integer fd and events, got " + v);
            }
            entries.add(st);
        }
        long deadline = timeoutDeadline(c.intArg(2));
        return () -> {
            List<Value> out = new ArrayList<>();
            int ready = 0;
            for (Value.Struct st : entries) {
                long fd = ((Value.Int) st.fields().get("fd")).value();
                long events = ((Value.Int) st.fields().get("events")).value();
                int revents;
                if (fd < 0) {
                    revents = 0;
                } else {
                    OpenFile f = fds.get(fd);
                    revents = f == null ? POLLNVAL : f.readyEvents() & (int) (events | POLLERR | POLLHUP);
                }
                if (revents != 0) {
                    ready++;
                }
                LinkedHashMap<String, Value> fields = new LinkedHashMap<>(st.fields());
                fields.put("revents", Value.of(revents));
                out.add(new Value.Struct(fields));
            }
            if (ready == 0 && deadline != 0 && (deadline < 0 || clock.nowNanos() < deadline)) {
                return null;
            }
            return new SyscallResult(ready, 0, Map.of(0, new Value.Array(out)));
        };
    }

    SyscallResult epollCreate(Syscall c) {
        if (c.name().equals("epoll_create") && c.intArg(0) <= 0) {
            return SyscallResult.error(EINVAL);
        }
        return SyscallResult.ok(fds.allocate(new EpollFile()));
    }

    SyscallResult epollCtl(Syscall c) {
        OpenFile ef = fds.get(c.intArg(0));
        long fd = c.intArg(2);
        OpenFile target = fds.get(fd);
        if (ef == null || target == null) {
            return SyscallResult.error(EBADF);
        }
        if (!(ef instanceof EpollFile ep) || target == ef) {
            return SyscallResult.error(EINVAL);
        }
        long op = c.intArg(1);
        EpollFile.Interest existing = ep.interest((int) fd);
        if (op == EPOLL_CTL_DEL) {
            if (existing == null) {
                return SyscallResult.error(ENOENT);
            }
            ep.remove((int) fd);
            return SyscallResult.ok(0);
        }
        Value ev = c.arg(3);
        if (!(ev instanceof Value.Struct st) || !(st.fields().get("events") instanceof Value.Int events)) {
            throw new TargetException("line " + c.line() + ": epoll_ctl needs an event {events=..., fd=...}, got " + ev);
        }
        LinkedHashMap<String, Value> data = new LinkedHashMap<>(st.fields());
        data.remove("events");
        if (op == EPOLL_CTL_ADD) {
            if (existing != null) {
                return SyscallResult.error(EEXIST);
            }
            ep.add((int) fd, new EpollFile.Interest(target, (int) events.value(), data));
            return SyscallResult.ok(0);
        }
        if (op == EPOLL_CTL_MOD) {
            if (existing == null) {
                return SyscallResult.error(ENOENT);
            }
            existing.events = (int) events.value();
            existing.data = data;
            existing.disabled = false;
            existing.reportedWakeups = -1;
            return SyscallResult.ok(0);
        }
        return SyscallResult.error(EINVAL);
    }

    BlockedCall.Attempt epollWait(Syscall c) {
        OpenFile ef = fds.get(c.intArg(0));
        if (ef == null) {
            return SocketCalls.now(SyscallResult.error(EBADF));
        }
        if (!(ef instanceof EpollFile ep)) {
            return SocketCalls.now(SyscallResult.error(EINVAL));
        }
        long max = c.intArg(2);
        if (max <= 0) {
            return SocketCalls.now(SyscallResult.error(EINVAL));
        }
        long deadline = timeoutDeadline(c.intArg(3));
        return () -> {
            var due = ep.collect((int) Math.min(max, Integer.MAX_VALUE));
            if (due.isEmpty() && deadline != 0 && (deadline < 0 || clock.nowNanos() < deadline)) {
                return null;
            }
            List<Value> out = new ArrayList<>();
            for (var d : due) {
                LinkedHashMap<String, Value> fields = new LinkedHashMap<>();
                fields.put("events", Value.of(d.getValue()));
                fields.putAll(ep.interest(d.getKey()).data);
                out.add(new Value.Struct(fields));
            }
            return new SyscallResult(due.size(), 0, Map.of(1, new Value.Array(out)));
        };
    }
}
