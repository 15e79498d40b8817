package dev.usnet.ns.pid;

import dev.usnet.core.knob.Knobs;

/** The knobs of the pid-namespace model, declared in {@link Knobs} when the namespaces module is first used. */
public final class PidNsKnobs {
    /** {@code usnet.pidns.model}: none | flat | multilevel ({@link PidModel}). */
    public static final String MODEL = "usnet.pidns.model";
    /** {@code usnet.pidns.depth}: how many pid namespaces deep a namespace's processes run (1: as in a container). */
    public static final String DEPTH = "usnet.pidns.depth";
    /** {@code kernel.pid_max}: the numbers of the namespace's pid namespaces stay below it (per pid namespace since Linux 6.14). */
    public static final String PID_MAX = "kernel.pid_max";

    static {
        Knobs.defineString(MODEL, PidModel.NONE.knobValue(), v -> PidModel.parse(v).knobValue());
        Knobs.defineLong(DEPTH, 1, 1, PidNamespace.MAX_PID_NS_LEVEL);
        Knobs.defineLong(PID_MAX, PidNamespace.PID_MAX_DEFAULT, PidNamespace.PID_MAX_MIN, PidNamespace.PID_MAX_LIMIT);
    }

    private PidNsKnobs() {}

    /** Declares the knobs (once); code that validates knobs before any namespace exists calls it. */
    public static void define() {
        // The static initializer does the work.
    }
}
