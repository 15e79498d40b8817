package dev.usnet.tools.app;

import dev.usnet.ns.pid.Task;
import dev.usnet.ns.pid.Upid;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** How results.json writes the values apps put in it: numbers with three decimals, a process's pids. */
public final class ResultValues {
    private ResultValues() {}

    /** Three decimals, always: the same number is always the same text. */
    public static BigDecimal fixed(double v) {
        return Double.isFinite(v) ? BigDecimal.valueOf(v).setScale(3, RoundingMode.HALF_EVEN) : BigDecimal.ZERO.setScale(3);
    }

    /** A process's numbers, one object per level from the initial pid namespace down; empty when it never ran. */
    public static List<Map<String, Object>> pids(Task t) {
        return t == null ? List.of() : pids(t.pids());
    }

    /** Pid numbers, one object per level (level, pid namespace, pid). */
    public static List<Map<String, Object>> pids(List<Upid> numbers) {
        List<Map<String, Object>> l = new ArrayList<>();
        for (Upid u : numbers) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("level", u.ns().level());
            m.put("ns", u.ns().name());
            m.put("pid", u.nr());
            l.add(m);
        }
        return l;
    }
}
