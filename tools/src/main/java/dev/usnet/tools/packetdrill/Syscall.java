package dev.usnet.tools.packetdrill;

import java.util.List;

/**
 * One system call of a script, arguments evaluated ({@link Value}). {@code name} is the call as written
 * ({@code socket}, {@code setsockopt}, {@code accept}, {@code write}, {@code poll}, {@code epoll_wait}, ...);
 * {@code line} is the script line, for error messages.
 */
public record Syscall(String name, List<Value> args, int line) {

    public Value arg(int i) {
        return i < args.size() ? args.get(i) : Value.ELLIPSIS;
    }

    /** The integer argument i (an fd, a level, a length); fails naming the line when it is not an integer. */
    public long intArg(int i) {
        if (arg(i) instanceof Value.Int v) {
            return v.value();
        }
        throw new TargetException("line " + line + ": " + name + " argument " + (i + 1)
                + " must be an integer, got " + arg(i));
    }
}
