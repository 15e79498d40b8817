package dev.usnet.ns.pid;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The pid namespaces a usnet namespace's processes run in: {@code depth} nested levels below the initial pid namespace,
 * each made by its init (like nested {@code unshare --pid --fork}, or a pod's pause process), the processes themselves
 * children of the innermost init. With model none there is no chain: processes are children of the initial init and
 * have one pid. {@link #shutdown} ends them all, as deleting a container does.
 */
public final class PidNsChain {
    private final PidAllocator pids;
    private final String name;
    private final PidModel model;
    private final List<Task> inits;
    /** Model none: the processes started here, which have no init of their own to take them down. */
    private final Set<Task> started = Collections.synchronizedSet(new LinkedHashSet<>());

    private PidNsChain(PidAllocator pids, String name, PidModel model, List<Task> inits) {
        this.pids = pids;
        this.name = name;
        this.model = model;
        this.inits = inits;
    }

    /**
     * The chain of usnet namespace {@code name}: levels {@code name/1} .. {@code name/depth} with pid_max {@code pidMax}
     * each, their inits forked from the initial init down; none for model none.
     */
    public static PidNsChain create(PidAllocator pids, String name, PidModel model, int depth, int pidMax)
            throws PidAllocException {
        List<Task> inits = new ArrayList<>();
        if (model != PidModel.NONE) {
            if (depth < 1) {
                throw new IllegalArgumentException(PidNsKnobs.DEPTH.key() + " must be at least 1, got " + depth);
            }
            Task t = pids.initTask();
            try {
                for (int level = 1; level <= depth; level++) {
                    t = t.cloneNewPidNs(name + "/init", name + "/" + level, model, pidMax);
                    inits.add(t);
                }
            } catch (PidAllocException e) {
                if (!inits.isEmpty()) {
                    inits.getFirst().exit(1);
                }
                throw e;
            }
        }
        return new PidNsChain(pids, name, model, List.copyOf(inits));
    }

    public PidModel model() {
        return model;
    }

    /** Levels below the initial namespace (0 for model none). */
    public int depth() {
        return inits.size();
    }

    /** The initial pid namespace and the chain's levels, outermost first. */
    public List<PidNamespace> levels() {
        List<PidNamespace> l = new ArrayList<>();
        l.add(pids.initNs());
        inits.forEach(t -> l.add(t.pidNs()));
        return l;
    }

    /** The namespace the processes run in: the innermost level, or the initial one for model none. */
    public PidNamespace innermost() {
        return inits.isEmpty() ? pids.initNs() : inits.getLast().pidNs();
    }

    /** The init of each level, outermost first (empty for model none). */
    public List<Task> inits() {
        return inits;
    }

    /** A process of this namespace: a child of the innermost init (the initial init for model none). */
    public Task spawn(String comm) throws PidAllocException {
        Task t = (inits.isEmpty() ? pids.initTask() : inits.getLast()).fork(comm);
        if (inits.isEmpty()) {
            started.add(t);
        }
        return t;
    }

    /** The allocator the chain's pids come from. */
    public PidAllocator allocator() {
        return pids;
    }

    /** Ends every process of the namespace: the outermost init exits (taking all below with it); model none kills each. */
    public void shutdown() {
        if (!inits.isEmpty()) {
            inits.getFirst().exit(0);
            return;
        }
        List<Task> l;
        synchronized (started) {
            l = new ArrayList<>(started);
            started.clear();
        }
        for (Task t : l) {
            for (Task c : t.children()) {
                c.exit(128 + 9);
                if (c.state() == Task.State.ZOMBIE) {
                    t.reap(c);
                }
            }
            t.exit(128 + 9);
        }
    }

    @Override
    public String toString() {
        return "pid namespaces of " + name + ": " + model.knobValue() + ", depth " + depth();
    }
}
