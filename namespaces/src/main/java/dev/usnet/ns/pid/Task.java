package dev.usnet.ns.pid;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A process as the pid-namespace model needs it (the task_struct's pid, parent, children, exit state): fork, clone into
 * a new pid namespace, exit, and the parent's wait that reaps it. An init (its namespace's child reaper) reaps its
 * children as they exit, takes over the children of processes that exit before them, and, when it exits, takes every
 * process of its namespace with it (zap_pid_ns_processes) and closes the namespace to new ones.
 */
public final class Task {
    /** RUNNING, then ZOMBIE (exited, not yet waited for), then DEAD (reaped: its pid is free again). */
    public enum State { RUNNING, ZOMBIE, DEAD }

    private final PidAllocator pids;
    private final String comm;
    private final Pid pid;
    private Task parent;
    /** Made by the first child: most processes (a spawn app's children) never have one. Under the allocator's lock. */
    private Set<Task> children;
    private volatile State state = State.RUNNING;
    private int exitCode;

    Task(PidAllocator pids, String comm, Pid pid, Task parent) {
        this.pids = pids;
        this.comm = comm;
        this.pid = pid;
        this.parent = parent;
    }

    public String comm() {
        return comm;
    }

    public Pid pid() {
        return pid;
    }

    public State state() {
        return state;
    }

    public int exitCode() {
        return exitCode;
    }

    /** task_active_pid_ns: the namespace it was created in. */
    public PidNamespace pidNs() {
        return pid.ns();
    }

    /** The parent now (an init after its first parent exited); null for the initial init. */
    public Task parent() {
        synchronized (pids.lock()) {
            return parent;
        }
    }

    public List<Task> children() {
        synchronized (pids.lock()) {
            return children == null ? new ArrayList<>() : new ArrayList<>(children);
        }
    }

    /** Adds a child (under the allocator's lock). */
    void adopt(Task c) {
        if (children == null) {
            children = new LinkedHashSet<>();
        }
        children.add(c);
        c.parent = this;
    }

    private List<Task> childList() {
        return children == null || children.isEmpty() ? List.of() : new ArrayList<>(children);
    }

    /** getpid(): its number in its own namespace. */
    public int getpid() {
        return pid.vnr();
    }

    /** task_pid_nr_ns: its number as {@code ns} sees it, 0 when not visible there. */
    public int pidIn(PidNamespace ns) {
        return pid.nr(ns);
    }

    /** Its numbers at every level it has one, from the initial namespace down to its own. */
    public List<Upid> pids() {
        return pid.numbers();
    }

    /** find_task_by_vpid: the process this one knows as {@code nr} (in its own namespace), or null. */
    public Task findByVpid(int nr) {
        return pids.findTask(pid.ns(), nr);
    }

    /** True when this process is its namespace's init. */
    public boolean isChildReaper() {
        return pid.ns().childReaper == this;
    }

    /** fork(): a child in this process's pid namespace. */
    public Task fork(String childComm) throws PidAllocException {
        return pids.fork(this, childComm, pid.ns());
    }

    /**
     * clone(CLONE_NEWPID): a child that is pid 1 of a new pid namespace {@code nsName} below this process's own, whose
     * processes get pids by {@code model} below {@code pidMax}.
     */
    public Task cloneNewPidNs(String childComm, String nsName, PidModel model, int pidMax) throws PidAllocException {
        PidNamespace ns = pids.createNamespace(pid.ns(), nsName, model, pidMax);
        return pids.fork(this, childComm, ns);
    }

    /**
     * exit(code): it becomes a zombie, its children go to its namespace's init, and a parent that reaps automatically
     * (an init) reaps it at once. An init's exit first kills every other process of its namespace, nested ones too.
     */
    public void exit(int code) {
        synchronized (pids.lock()) {
            if (state != State.RUNNING) {
                return;
            }
            exitCode = code;
            PidNamespace ns = pid.ns();
            if (ns.childReaper == this) {
                ns.adding = false;
                for (Task c : childList()) {
                    c.killTree();
                }
            } else {
                Task reaper = ns.childReaper;
                for (Task c : childList()) {
                    children.remove(c);
                    reaper.adopt(c);
                    if (c.state == State.ZOMBIE) {
                        c.release();
                    }
                }
            }
            state = State.ZOMBIE;
            if (parent == null || parent.isChildReaper()) {
                release();
            }
        }
    }

    /** wait4 for {@code child}: reaps it (its pid is free again); it must be an exited child of this process. */
    public void reap(Task child) {
        synchronized (pids.lock()) {
            if (child.parent != this) {
                throw new IllegalStateException(child + " is not a child of " + this + " (ECHILD)");
            }
            if (child.state != State.ZOMBIE) {
                throw new IllegalStateException(child + " has not exited: nothing to reap");
            }
            child.release();
        }
    }

    /** SIGKILL to this process and all below it, each reaped: what an exiting init does to its namespace. */
    private void killTree() {
        for (Task c : childList()) {
            c.killTree();
        }
        if (pid.ns().childReaper == this) {
            pid.ns().adding = false;
        }
        exitCode = 128 + 9;
        state = State.ZOMBIE;
        release();
    }

    /** release_task: DEAD, out of its parent's children, its numbers freed. */
    private void release() {
        state = State.DEAD;
        if (parent != null && parent.children != null) {
            parent.children.remove(this);
        }
        pids.free(pid);
    }

    @Override
    public String toString() {
        return comm + " " + pid.numbers();
    }
}
