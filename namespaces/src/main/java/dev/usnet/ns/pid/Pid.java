package dev.usnet.ns.pid;

import java.util.List;

/**
 * struct pid: the numbers one process has, one per pid namespace it is visible in. How they are kept is the model's
 * ({@link MultilevelPid}, {@link FlatPid}); what a namespace sees is the same question for both.
 */
public abstract sealed class Pid permits MultilevelPid, FlatPid {
    private volatile Task task;

    /** The pid namespace the process was created in (task_active_pid_ns). */
    public abstract PidNamespace ns();

    /** pid_nr_ns: the number in {@code ns}, 0 when the process is not visible there. */
    public abstract int nr(PidNamespace ns);

    /** pid_vnr as the process itself sees it: its number in its own namespace (getpid). */
    public abstract int vnr();

    /** Its number in the initial pid namespace (pid_nr). */
    public abstract int globalNr();

    /** Every number it has, from the initial namespace (level 0) down to its own. */
    public abstract List<Upid> numbers();

    /** The process it names, once attached; null before and after. */
    public final Task task() {
        return task;
    }

    public final void attach(Task t) {
        task = t;
    }

    @Override
    public final String toString() {
        return "pid " + numbers();
    }
}
