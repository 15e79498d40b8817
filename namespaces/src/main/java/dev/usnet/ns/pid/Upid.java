package dev.usnet.ns.pid;

/** struct upid: a process's number {@code nr} as seen in pid namespace {@code ns}. */
public record Upid(int nr, PidNamespace ns) {
    @Override
    public String toString() {
        return nr + "@" + ns.name();
    }
}
