package dev.usnet.ns.pid;

import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.LongKnob;
import dev.usnet.core.knob.SysctlTable;
import dev.usnet.core.knob.ValueKnob;
import java.util.List;

/**
 * The knobs of the pid-namespace model, declared for every namespace and listed by a {@link SysctlTable} service
 * entry so their names are known before the model is used. All three are read when a namespace first runs a
 * process, so a change applies to namespaces built afterwards.
 */
public final class PidNsKnobs implements SysctlTable {
    /** {@code usnet.pidns.model}: none | flat | multilevel ({@link PidModel}). */
    public static final ValueKnob<PidModel> MODEL = ValueKnob.define("usnet.pidns.model", PidModel.NONE.knobValue(),
            PidModel::parse, PidModel::knobValue, Knob.Applies.BUILD,
            "how a namespace's processes get pids: none, flat (one number and a virtual one), multilevel (Linux's)");
    /** {@code usnet.pidns.depth}: how many pid namespaces deep a namespace's processes run (1: as in a container). */
    public static final LongKnob DEPTH = LongKnob.defineAtBuild("usnet.pidns.depth", 1, 1, PidNamespace.MAX_PID_NS_LEVEL,
            "pid namespaces a namespace's processes run nested in (1: one, as a container)");
    /** {@code kernel.pid_max}: the numbers of the namespace's pid namespaces stay below it (per pid namespace since Linux 6.14). */
    public static final LongKnob PID_MAX = LongKnob.defineAtBuild("kernel.pid_max", PidNamespace.PID_MAX_DEFAULT,
            PidNamespace.PID_MAX_MIN, PidNamespace.PID_MAX_LIMIT, "pids stay below it in each of the namespace's pid namespaces");

    private static final List<Knob> ALL = List.of(MODEL, DEPTH, PID_MAX);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public PidNsKnobs() {}

    @Override
    public List<? extends Knob> knobs() {
        return ALL;
    }
}
