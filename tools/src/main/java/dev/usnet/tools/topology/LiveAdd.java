package dev.usnet.tools.topology;

import dev.usnet.core.stack.NetStack;
import java.util.List;
import java.util.function.Supplier;

/**
 * What {@code usnet ctl link add NAME type KIND ...} does with a device kind, as iproute2's link_util reads the words
 * after {@code type KIND} into a request and the kernel's newlink makes the device from it: either the kind can be
 * added to a running namespace ({@link Addable}) or it cannot, and says why ({@link Refused}). Every {@link LinkKind}
 * answers, so ctl reaches each kind through its descriptor and never names one.
 */
public sealed interface LiveAdd {
    /**
     * The kind is made live.
     *
     * @param usage   what follows {@code type} in the usage line ({@code veth peer [NS/]NAME}), and in the error for
     *                a {@code link add} without a type
     * @param words   the words of its own that a request takes, so one given with another type is refused naming this
     * @param request a fresh request to read one {@code link add}'s words into
     */
    record Addable(String usage, List<String> words, Supplier<Request> request) implements LiveAdd {
        public Addable {
            words = List.copyOf(words);
        }
    }

    /** The kind is not made live; {@code why} completes "type KIND cannot be added to a running namespace: ". */
    record Refused(String why) implements LiveAdd {}

    /** The words of a request, read left to right; what is missing is refused naming {@code what}. */
    interface Words {
        String next(String what);

        /** Consumes the next word when it is {@code word}. */
        boolean accept(String word);
    }

    /** Which device: its namespace's stack, its name, and the settings every kind takes (null: not given). */
    record Target(NetStack stack, String name, Integer mtu, Long mac) {}

    /** One {@code link add} of a kind: its words are read first, then, all read, the device is made. */
    interface Request {
        /**
         * Takes word {@code w} (and the words it needs from {@code words}) when it is one of the kind's and returns
         * true; false when the kind has no such word. A word the kind refuses outright (a bridge's {@code peer}) is
         * refused here with the reason.
         */
        boolean parse(String w, Words words, LiveLinks live);

        /** Checks what the words said, makes the device in {@code t}'s namespace and says what was done, in one line. */
        String add(LiveLinks live, Target t);
    }
}
