package dev.usnet.core.knob;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Knobs a module declares for itself: found by name, read typed per namespace, checked like the core's. */
class DeclaredKnobsTest {
    static final LongKnob RETRIES = LongKnob.define("usnet.example.retries", 3, 1, 10, "retries of the example");
    static final LongKnob AT_BUILD = LongKnob.defineAtBuild("usnet.example.slots", 8, 1, 64, "read at build");
    static final ValueKnob<List<String>> NAMES = ValueKnob.define("usnet.example.names", "a b",
            v -> {
                if (v.isBlank()) {
                    throw new IllegalArgumentException("expected at least one name");
                }
                return List.of(v.split("\\s+"));
            }, l -> String.join(" ", l), "names of the example");

    @Test
    void aDeclaredKnobIsSetByNameAndReadTypedInItsNamespaceOnly() {
        Knobs a = new Knobs();
        Knobs b = new Knobs();
        assertEquals(3, a.get(RETRIES));
        a.set("usnet.example.retries", "7");
        assertEquals(7, a.get(RETRIES));
        assertEquals(3, b.get(RETRIES), "another namespace keeps the default");
        assertEquals("7", a.get("usnet.example.retries"));
        assertEquals("3", b.get("usnet.example.retries"));
        a.set(RETRIES, 9);
        assertEquals("9", a.explicitValues().get("usnet.example.retries"));
        assertFalse(b.explicitValues().containsKey("usnet.example.retries"));
    }

    @Test
    void valueKnobsAreParsedOnceAndKeptNormalized() {
        Knobs k = new Knobs();
        assertEquals(List.of("a", "b"), k.get(NAMES));
        k.set("usnet.example.names", "  x   y z ");
        assertEquals(List.of("x", "y", "z"), k.get(NAMES));
        assertSame(k.get(NAMES), k.get(NAMES), "the hot path reads the parsed value, not text");
        assertEquals("x y z", k.get("usnet.example.names"));
    }

    @Test
    void badValuesNameTheKnobAndChangeNothing() {
        Knobs k = new Knobs();
        k.set(RETRIES, 5);
        var e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.example.retries", "11"));
        assertEquals("usnet.example.retries: 11 is out of range 1..10", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.example.retries", "many"));
        assertEquals("usnet.example.retries: 'many' is not an integer (expected 1..10)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> k.set(RETRIES, 0));
        e = assertThrows(IllegalArgumentException.class, () -> k.set("usnet.example.names", " "));
        assertEquals("usnet.example.names: expected at least one name", e.getMessage());
        assertEquals(5, k.get(RETRIES));
        assertEquals(List.of("a", "b"), k.get(NAMES));
    }

    @Test
    void declaredKnobsAreKnownForHintsAndListingWithWhenTheyApply() {
        assertTrue(Knobs.known().contains("usnet.example.retries"));
        assertSame(RETRIES, Knobs.declared("usnet.example.retries"));
        assertTrue(RETRIES.live());
        assertEquals(Knob.Applies.LIVE, Knobs.applies("usnet.example.retries"));
        assertEquals(Knob.Applies.BUILD, Knobs.applies("usnet.example.slots"));
        assertEquals(Knob.Applies.BUILD, Knobs.applies("usnet.hz"));
        assertFalse(AT_BUILD.live());
        var e = assertThrows(IllegalArgumentException.class, () -> new Knobs().set("usnet.example.retires", "2"));
        assertEquals("unknown knob 'usnet.example.retires' (did you mean 'usnet.example.retries'?)", e.getMessage());
    }

    @Test
    void declaringAKnobTwiceOrShadowingACoreOneIsRefused() {
        assertThrows(IllegalStateException.class, () -> LongKnob.define("usnet.example.retries", 1, 0, 1, "again"));
        assertThrows(IllegalStateException.class, () -> LongKnob.define("net.ipv4.ip_forward", 0, 0, 1, "shadow"));
    }
}
