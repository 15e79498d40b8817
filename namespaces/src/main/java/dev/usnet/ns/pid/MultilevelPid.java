package dev.usnet.ns.pid;

import java.util.ArrayList;
import java.util.List;

/**
 * Linux's struct pid since 2.6.24: {@code numbers[level + 1]}, a number in each pid namespace from the initial one
 * (index 0) to the process's own (index level). A namespace's view is {@code numbers[ns->level]}, checked to be that
 * namespace (pid_nr_ns), so every ancestor namespace sees the process under a number of its own.
 */
public final class MultilevelPid extends Pid {
    private final int[] nrs;
    private final PidNamespace[] nss;

    MultilevelPid(int[] nrs, PidNamespace[] nss) {
        this.nrs = nrs;
        this.nss = nss;
    }

    int level() {
        return nrs.length - 1;
    }

    int nrAt(int level) {
        return nrs[level];
    }

    PidNamespace nsAt(int level) {
        return nss[level];
    }

    @Override
    public PidNamespace ns() {
        return nss[nss.length - 1];
    }

    @Override
    public int nr(PidNamespace ns) {
        int l = ns.level();
        return l < nrs.length && nss[l] == ns ? nrs[l] : 0;
    }

    @Override
    public int vnr() {
        return nrs[nrs.length - 1];
    }

    @Override
    public int globalNr() {
        return nrs[0];
    }

    @Override
    public List<Upid> numbers() {
        List<Upid> l = new ArrayList<>(nrs.length);
        for (int i = 0; i < nrs.length; i++) {
            l.add(new Upid(nrs[i], nss[i]));
        }
        return l;
    }
}
