package dev.usnet.tools.packetdrill;

import java.util.List;
import java.util.Map;

/**
 * Compares an out-parameter a call wrote with what the script spells out. {@code ...} in the script matches
 * anything; struct fields compare where both sides have them (the script's input-only fields such as a pollfd's
 * {@code fd} need not come back); a one-element array and its element are the same thing (an epoll event written
 * {@code {events=..., fd=4}} against a returned array of one); only the elements a call wrote are compared
 * (epoll_wait returning 0 events leaves the script's {@code {events=0, ptr=0}} unchecked).
 */
final class ValueMatcher {
    private ValueMatcher() {
    }

    /** Null when {@code actual} is what the script expects, else what differs. */
    static String mismatch(Value expected, Value actual) {
        if (expected instanceof Value.Ellipsis || actual instanceof Value.Ellipsis) {
            return null;
        }
        if (actual instanceof Value.Array aa && aa.elements().isEmpty() && !(expected instanceof Value.Array)) {
            return null; // the call wrote no element (epoll_wait returned 0): there is nothing to compare
        }
        if (expected instanceof Value.Array ea && !(actual instanceof Value.Array) && ea.elements().size() == 1) {
            return mismatch(ea.elements().get(0), actual);
        }
        if (actual instanceof Value.Array aa && !(expected instanceof Value.Array) && aa.elements().size() == 1) {
            return mismatch(expected, aa.elements().get(0));
        }
        if (expected instanceof Value.Int e && actual instanceof Value.Int a) {
            return e.value() == a.value() ? null : "expected " + e + " but got " + a;
        }
        if (expected instanceof Value.Str e && actual instanceof Value.Str a) {
            return e.value().equals(a.value()) ? null : "expected " + e + " but got " + a;
        }
        if (expected instanceof Value.Array e && actual instanceof Value.Array a) {
            List<Value> el = e.elements();
            List<Value> al = a.elements();
            // A call may fill fewer elements than the script's array has room for (epoll_wait's events): compare
            // those it wrote.
            if (al.size() > el.size()) {
                return "expected " + el.size() + " elements " + e + " but got " + al.size() + " " + a;
            }
            for (int i = 0; i < al.size(); i++) {
                String m = mismatch(el.get(i), al.get(i));
                if (m != null) {
                    return "element " + i + ": " + m;
                }
            }
            return null;
        }
        if (expected instanceof Value.Struct e && actual instanceof Value.Struct a) {
            for (Map.Entry<String, Value> f : e.fields().entrySet()) {
                Value av = a.fields().get(f.getKey());
                if (av != null) {
                    String m = mismatch(f.getValue(), av);
                    if (m != null) {
                        return f.getKey() + ": " + m;
                    }
                }
            }
            return null;
        }
        return "expected " + expected + " but got " + actual;
    }
}
