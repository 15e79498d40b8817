package dev.usnet.tools.packetdrill;

import java.util.Map;

/**
 * What a system call returned: {@code ret} as the C function returns it (-1 on error), {@code errno} (a Linux
 * errno number, 0 when {@code ret >= 0}), and the out-parameters it wrote, by argument index, in the same shape
 * the script writes them: getsockopt's value {@code [1]} or {@code "cubic"} and length {@code [4]}, poll's
 * {@code [{fd=3, events=..., revents=...}]}, epoll_wait's events, {@code TCP_INFO} is not an out-param (asserts
 * read {@link Target#tcpInfo}). The runner compares every out-parameter the script spells out (not {@code ...}).
 */
public record SyscallResult(long ret, int errno, Map<Integer, Value> outArgs) {

    public static SyscallResult ok(long ret) {
        return new SyscallResult(ret, 0, Map.of());
    }

    public static SyscallResult error(int errno) {
        return new SyscallResult(-1, errno, Map.of());
    }
}
