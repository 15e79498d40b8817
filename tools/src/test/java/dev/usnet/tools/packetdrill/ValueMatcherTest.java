package dev.usnet.tools.packetdrill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.LinkedHashMap;
import java.util.List;
import org.junit.jupiter.api.Test;

class ValueMatcherTest {

    private static Value.Struct struct(Object... kv) {
        LinkedHashMap<String, Value> f = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            f.put((String) kv[i], (Value) kv[i + 1]);
        }
        return new Value.Struct(f);
    }

    @Test
    void pollRevents() {
        Value script = new Value.Array(List.of(struct("fd", Value.of(3), "events", Value.of(1), "revents",
                Value.of(1))));
        assertNull(ValueMatcher.mismatch(script, new Value.Array(List.of(struct("fd", Value.of(3), "revents",
                Value.of(1))))));
        assertEquals("element 0: revents: expected 1 but got 5", ValueMatcher.mismatch(script, new Value.Array(
                List.of(struct("fd", Value.of(3), "revents", Value.of(5))))));
    }

    @Test
    void epollEventsWrittenAsOneStructAgainstTheArrayReturned() {
        Value script = struct("events", Value.of(4), "fd", Value.of(4));
        assertNull(ValueMatcher.mismatch(script, new Value.Array(List.of(struct("events", Value.of(4), "fd",
                Value.of(4))))));
        assertEquals("events: expected 4 but got 5", ValueMatcher.mismatch(script, new Value.Array(List.of(
                struct("events", Value.of(5), "fd", Value.of(4))))));
        // epoll_wait returned 0: {events=0, ptr=0} has nothing to compare with.
        assertNull(ValueMatcher.mismatch(struct("events", Value.of(0), "ptr", Value.of(0)),
                new Value.Array(List.of())));
    }

    @Test
    void ellipsisStringsAndLengths() {
        assertNull(ValueMatcher.mismatch(Value.ELLIPSIS, Value.of(7)));
        assertNull(ValueMatcher.mismatch(new Value.Str("cubic"), new Value.Str("cubic")));
        assertEquals("expected \"cubic\" but got \"reno\"", ValueMatcher.mismatch(new Value.Str("cubic"),
                new Value.Str("reno")));
        assertEquals("expected 1 elements [4] but got 2 [4, 4]", ValueMatcher.mismatch(new Value.Array(
                List.of(Value.of(4))), new Value.Array(List.of(Value.of(4), Value.of(4)))));
        assertEquals("expected 1 but got \"x\"", ValueMatcher.mismatch(Value.of(1), new Value.Str("x")));
    }
}
