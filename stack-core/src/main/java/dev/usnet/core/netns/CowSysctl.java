package dev.usnet.core.netns;

import dev.usnet.core.buf.CowPolicy;
import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.Knob.Applies;
import dev.usnet.core.knob.SysctlTable;
import dev.usnet.core.knob.ValueKnob;
import java.util.List;

/** The copy-on-write knob: what forwarding does to a shared packet before it edits headers. */
public final class CowSysctl implements SysctlTable {
    public static final ValueKnob<CowPolicy> FORWARD_COW = ValueKnob.define("usnet.forward.cow",
            CowPolicy.HEAD_COPY.knobValue(), CowPolicy::parse, CowPolicy::knobValue, Applies.LIVE,
            "before editing a shared packet's headers forwarding copies: head-copy (today's Linux), full-copy "
                    + "(Linux 2.6.20), always-copy (every packet), skip-ttl (none, TTL left alone: the OpenVZ hack)");

    private static final List<Knob> KNOBS = List.of(FORWARD_COW);

    /** For {@link java.util.ServiceLoader}; the knob itself is the static field. */
    public CowSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return KNOBS;
    }
}
