package dev.usnet.tools.packetdrill;

/** What an event does: a packet in or out, a system call, a shell command, a code block. */
sealed interface Action permits PacketSpec, SyscallSpec, Action.Command, Action.Code {

    /** A backtick command, text between the backticks. */
    record Command(String text) implements Action {
    }

    /** A {@code %{ }%} block, text between the delimiters; {@code line} is the line of {@code %{}. */
    record Code(String text, int line) implements Action {
    }
}
