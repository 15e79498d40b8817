package dev.usnet.tools.run;

import dev.usnet.tools.results.Results;
import dev.usnet.tools.topology.file.CaptureCheck;
import dev.usnet.tools.topology.file.Expectation;
import dev.usnet.tools.topology.file.TopologySpec;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Judges a run's {@code expect:} lines once it has ended and its captures are closed, and keeps every verdict in
 * its results ({@code expectations} in results.json, docs/results.md): the line, the text, the value the run had,
 * whether it held, and for a capture check that failed what differed. The value of a capture check comes from the
 * capture file here; every other expectation's from the results, as {@link Expectation#actual} reads it.
 */
public final class ExpectationVerdicts {
    private ExpectationVerdicts() {}

    /** {@code r} with a verdict per expectation of {@code spec}; {@code r} itself when the file has none. */
    public static Results judge(TopologySpec spec, Results r, Path outDir) {
        if (spec.expectations().isEmpty()) {
            return r;
        }
        List<Map<String, Object>> verdicts = new ArrayList<>();
        for (Expectation x : spec.expectations()) {
            BigDecimal value;
            String detail = null;
            if (x.capture() != null) {
                TopologySpec.Capture c = CaptureCheck.find(spec, x.selector(), x.where(), null);
                if (c == null || outDir == null) {
                    value = null;
                    detail = "the run made no capture " + x.selector();
                } else {
                    CaptureCheck.Outcome o = x.capture().judge(spec, outDir.resolve(c.file()));
                    value = o.value();
                    detail = o.detail();
                }
            } else {
                value = x.actual(r);
            }
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("line", x.where().line());
            v.put("expect", x.text());
            v.put("value", value);
            v.put("held", x.holds(value));
            if (detail != null) {
                v.put("detail", detail);
            }
            verdicts.add(v);
        }
        return r.withExpectations(verdicts);
    }
}
