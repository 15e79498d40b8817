package dev.usnet.ns.pid;

/**
 * struct pid_namespace: a level in the tree of pid namespaces, with its own number space (an {@link Idr} from 1 to its
 * pid_max), its init (the child reaper, pid 1 here) and the count of processes numbered in it. Processes created in it
 * get their pids the way its {@link PidModel} says. Changed only under the {@link PidAllocator}'s lock.
 */
public final class PidNamespace {
    /** MAX_PID_NS_LEVEL: the deepest a pid namespace may be. */
    public static final int MAX_PID_NS_LEVEL = 32;
    /** RESERVED_PIDS: after the first wrap, numbers start here again (below it live the early daemons). */
    public static final int RESERVED_PIDS = 300;
    /** PID_MAX_DEFAULT: kernel.pid_max on machines with up to 32 CPUs. */
    public static final int PID_MAX_DEFAULT = 32_768;
    /** PID_MAX_LIMIT on 64-bit machines. */
    public static final int PID_MAX_LIMIT = 4 * 1024 * 1024;
    /** The smallest kernel.pid_max Linux takes (RESERVED_PIDS + 1). */
    public static final int PID_MAX_MIN = RESERVED_PIDS + 1;

    private final String name;
    private final int level;
    private final PidNamespace parent;
    private final PidModel model;
    private final int pidMax;
    final Idr<Pid> idr = new Idr<>();
    /** pid_allocated without the PIDNS_ADDING flag: processes numbered here. */
    volatile int pidAllocated;
    /** PIDNS_ADDING: cleared when the init exits; then fork into this namespace fails with ENOMEM. */
    volatile boolean adding = true;
    /** The init, pid 1 here; null until the first process is created. */
    volatile Task childReaper;

    PidNamespace(String name, PidNamespace parent, PidModel model, int pidMax) {
        if (pidMax < PID_MAX_MIN || pidMax > PID_MAX_LIMIT) {
            throw new IllegalArgumentException("pid_max " + pidMax + " is out of range " + PID_MAX_MIN + ".." + PID_MAX_LIMIT);
        }
        this.name = name;
        this.parent = parent;
        this.level = parent == null ? 0 : parent.level + 1;
        this.model = parent == null ? PidModel.MULTILEVEL : model;
        this.pidMax = pidMax;
    }

    public String name() {
        return name;
    }

    /** 0 for the initial pid namespace, its children 1, ... */
    public int level() {
        return level;
    }

    /** The namespace this one was created in; null for the initial one. */
    public PidNamespace parent() {
        return parent;
    }

    /** How processes created here are numbered. */
    public PidModel model() {
        return model;
    }

    /** kernel.pid_max of this namespace: numbers stay below it. */
    public int pidMax() {
        return pidMax;
    }

    /** Processes numbered here now (pid_allocated). */
    public int pidAllocated() {
        return pidAllocated;
    }

    /** The init (child reaper), or null before the first process. */
    public Task childReaper() {
        return childReaper;
    }

    /** False once the init has exited: nothing new can start here. */
    public boolean isAdding() {
        return adding;
    }

    /** This namespace or one of its ancestors is {@code ns}. */
    public boolean isWithin(PidNamespace ns) {
        for (PidNamespace p = this; p != null; p = p.parent) {
            if (p == ns) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "pidns " + name + " (level " + level + ")";
    }
}
