package dev.usnet.ns.pid;

import java.util.function.ObjIntConsumer;

/**
 * kernel/pid.c for one tree of pid namespaces: the initial namespace with its init (pid 1), alloc_pid walking the levels
 * from the new process's namespace up to the initial one, free_pid, and lookups by number that take no lock
 * (find_pid_ns). Allocation, freeing and changes to the process tree happen under one lock, as under pidmap_lock and
 * tasklist_lock; lookups read what is published.
 */
public final class PidAllocator {
    private final Object lock = new Object();
    private final PidNamespace init;
    private final Task initTask;

    /** An initial pid namespace with kernel.pid_max {@code pidMax} and its init, pid 1, named "init". */
    public PidAllocator(int pidMax) {
        this.init = new PidNamespace("init", null, PidModel.MULTILEVEL, pidMax);
        try {
            this.initTask = fork(null, "init", init);
        } catch (PidAllocException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The initial pid namespace (init_pid_ns). */
    public PidNamespace initNs() {
        return init;
    }

    /** Pid 1 of the initial namespace: every process without another parent hangs below it. */
    public Task initTask() {
        return initTask;
    }

    Object lock() {
        return lock;
    }

    /** The number the next allocation in {@code ns} tries (pid_min of alloc_pid: 1, or RESERVED_PIDS after a wrap). */
    private static int allocNr(PidNamespace ns) {
        int min = ns.idr.cursor() > PidNamespace.RESERVED_PIDS ? PidNamespace.RESERVED_PIDS : 1;
        return ns.idr.allocCyclic(min, ns.pidMax());
    }

    private static PidAllocException noPid(PidNamespace ns) {
        return new PidAllocException("EAGAIN", "fork failed: EAGAIN — pid namespace " + ns.name() + " (level " + ns.level()
                + ") has no free pid below its pid_max " + ns.pidMax() + " (" + ns.pidAllocated + " in use; raise kernel.pid_max)");
    }

    /**
     * alloc_pid: a number in {@code ns} and, as its model says, in the namespaces above it (multilevel: every level up to
     * the initial one, deepest first; flat: only the initial one). Each is reserved first and filled in only when all
     * succeeded, so a lookup never finds half a pid; on failure the ones already reserved are freed.
     */
    Pid alloc(PidNamespace ns) throws PidAllocException {
        synchronized (lock) {
            if (!ns.adding) {
                throw new PidAllocException("ENOMEM", "fork failed: ENOMEM — the init of pid namespace " + ns.name()
                        + " has exited; it takes no new processes");
            }
            if (ns.model() == PidModel.FLAT && ns.level() > 0) {
                int v = allocNr(ns);
                if (v < 0) {
                    throw noPid(ns);
                }
                int g = allocNr(init);
                if (g < 0) {
                    ns.idr.remove(v);
                    throw noPid(init);
                }
                FlatPid pid = new FlatPid(g, v, ns);
                publish(ns, v, pid);
                publish(init, g, pid);
                return pid;
            }
            int level = ns.level();
            int[] nrs = new int[level + 1];
            PidNamespace[] nss = new PidNamespace[level + 1];
            PidNamespace tmp = ns;
            for (int i = level; i >= 0; i--) {
                int nr = allocNr(tmp);
                if (nr < 0) {
                    for (int k = i + 1; k <= level; k++) {
                        nss[k].idr.remove(nrs[k]);
                    }
                    throw noPid(tmp);
                }
                nrs[i] = nr;
                nss[i] = tmp;
                tmp = tmp.parent();
            }
            MultilevelPid pid = new MultilevelPid(nrs, nss);
            for (int i = 0; i <= level; i++) {
                publish(nss[i], nrs[i], pid);
            }
            return pid;
        }
    }

    private static void publish(PidNamespace ns, int nr, Pid pid) {
        ns.idr.replace(nr, pid);
        ns.pidAllocated++;
    }

    /** free_pid: every number of {@code pid} goes back to its namespace. */
    void free(Pid pid) {
        synchronized (lock) {
            switch (pid) {
                case MultilevelPid m -> {
                    for (int l = 0; l <= m.level(); l++) {
                        unpublish(m.nsAt(l), m.nrAt(l));
                    }
                }
                case FlatPid f -> {
                    unpublish(init, f.globalNr());
                    if (f.ns() != init) {
                        unpublish(f.ns(), f.vnr());
                    }
                }
            }
        }
    }

    private static void unpublish(PidNamespace ns, int nr) {
        if (ns.idr.remove(nr) != null) {
            ns.pidAllocated--;
        }
    }

    /** find_pid_ns: the pid numbered {@code nr} in {@code ns}, or null. No lock. */
    public Pid find(PidNamespace ns, int nr) {
        return ns.idr.find(nr);
    }

    /** find_task_by_pid_ns: the process numbered {@code nr} in {@code ns}, or null. No lock. */
    public Task findTask(PidNamespace ns, int nr) {
        Pid p = ns.idr.find(nr);
        return p == null ? null : p.task();
    }

    /**
     * What {@code ps} in {@code ns} lists: every process numbered there, in number order (next_tgid's walk of the
     * namespace's ids), with its number there. Returns how many. No lock.
     */
    public int forEachVisible(PidNamespace ns, ObjIntConsumer<Task> each) {
        int n = 0;
        for (int nr = ns.idr.nextFilled(1); nr >= 0; nr = ns.idr.nextFilled(nr + 1)) {
            Pid p = ns.idr.find(nr);
            Task t = p == null ? null : p.task();
            if (t != null) {
                each.accept(t, nr);
                n++;
            }
        }
        return n;
    }

    /**
     * create_pid_namespace: a namespace below {@code parent}, numbering its processes by {@code model}, with its own
     * pid_max. ENOSPC beyond MAX_PID_NS_LEVEL.
     */
    PidNamespace createNamespace(PidNamespace parent, String name, PidModel model, int pidMax) throws PidAllocException {
        if (parent.level() + 1 > PidNamespace.MAX_PID_NS_LEVEL) {
            throw new PidAllocException("ENOSPC", "clone(CLONE_NEWPID) failed: ENOSPC — pid namespace " + name + " would be"
                    + " at level " + (parent.level() + 1) + ", deeper than MAX_PID_NS_LEVEL " + PidNamespace.MAX_PID_NS_LEVEL);
        }
        if (model == PidModel.NONE) {
            throw new IllegalArgumentException("a pid namespace of model none: processes of model none stay in " + parent.name());
        }
        return new PidNamespace(name, parent, model, pidMax);
    }

    /** copy_process for pids: a process in {@code ns}, child of {@code parent}; the first one in a namespace is its init. */
    Task fork(Task parent, String comm, PidNamespace ns) throws PidAllocException {
        Pid pid = alloc(ns);
        synchronized (lock) {
            if (parent != null && parent.state() != Task.State.RUNNING) {
                free(pid);
                throw new IllegalStateException(parent + " has exited and cannot fork");
            }
            Task t = new Task(this, comm, pid, parent);
            pid.attach(t);
            if (ns.childReaper == null) {
                ns.childReaper = t;
            }
            if (parent != null) {
                parent.adopt(t);
            }
            return t;
        }
    }
}
