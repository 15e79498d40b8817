package dev.usnet.ns.pid;

import java.util.List;

/**
 * A pid in the flat model of the 2007 patches: a global number (the initial namespace's) and a virtual number in the
 * process's own namespace, each a field read by dereference, whatever the nesting. Namespaces between the two do not
 * number the process and do not see it (nr gives 0 there): what the model saves is exactly that work.
 */
public final class FlatPid extends Pid {
    private final int global;
    private final int virtualNr;
    private final PidNamespace ns;

    /** {@code virtualNr} is ignored when {@code ns} is the initial namespace (the global number is the only one). */
    FlatPid(int global, int virtualNr, PidNamespace ns) {
        this.global = global;
        this.virtualNr = ns.level() == 0 ? global : virtualNr;
        this.ns = ns;
    }

    @Override
    public PidNamespace ns() {
        return ns;
    }

    @Override
    public int nr(PidNamespace n) {
        if (n == ns) {
            return virtualNr;
        }
        return n.level() == 0 ? global : 0;
    }

    @Override
    public int vnr() {
        return virtualNr;
    }

    @Override
    public int globalNr() {
        return global;
    }

    @Override
    public List<Upid> numbers() {
        PidNamespace root = ns;
        while (root.parent() != null) {
            root = root.parent();
        }
        return ns.level() == 0 ? List.of(new Upid(global, ns)) : List.of(new Upid(global, root), new Upid(virtualNr, ns));
    }
}
