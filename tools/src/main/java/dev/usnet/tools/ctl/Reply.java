package dev.usnet.tools.ctl;

/**
 * What a verb answers: {@code data}, the structured form ({@code --json}: maps, lists, strings and numbers as
 * Jackson writes them), and {@code text}, the same for a person, shaped like iproute2's output.
 */
public record Reply(Object data, String text) {
    public static Reply of(Object data, String text) {
        return new Reply(data, text);
    }

    /** A change that answers with a line saying what it did. */
    public static Reply done(String text) {
        return new Reply(java.util.Map.of("done", text), text);
    }
}
