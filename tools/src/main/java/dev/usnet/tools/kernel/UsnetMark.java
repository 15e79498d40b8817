package dev.usnet.tools.kernel;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What usnet writes on the kernel objects it creates, as the interface alias ({@code ip link set ... alias}): on
 * {@code lo} of each kernel namespace it creates and on each TAP's kernel end. It names the process (pid and start
 * time, so a reused pid is not taken for the owner), so {@code usnet cleanup} can tell a leftover of a usnet run that
 * is gone from something of a run still going, and both from what usnet did not create (no mark). It lives and
 * goes with the object it marks.
 */
public record UsnetMark(long pid, Instant started) {
    private static final Pattern FORM = Pattern.compile("usnet pid (\\d+) started (\\S+)");
    /** /proc start times are in clock ticks and computed from the boot time: allow for the rounding. */
    private static final Duration SAME_START = Duration.ofSeconds(2);

    /** The mark of this process. */
    public static UsnetMark ofThisProcess() {
        ProcessHandle me = ProcessHandle.current();
        return new UsnetMark(me.pid(), me.info().startInstant().orElse(Instant.EPOCH));
    }

    /** The mark in an interface alias, if it is one. */
    public static Optional<UsnetMark> parse(String alias) {
        if (alias == null) {
            return Optional.empty();
        }
        Matcher m = FORM.matcher(alias.trim());
        if (!m.matches()) {
            return Optional.empty();
        }
        try {
            return Optional.of(new UsnetMark(Long.parseLong(m.group(1)), Instant.parse(m.group(2))));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The alias text: {@code usnet pid 1234 started 2026-12-01T20:24:38.120Z}. */
    public String format() {
        return "usnet pid " + pid + " started " + started;
    }

    /** True while the process that wrote the mark runs: its pid exists and started when the mark says. */
    public boolean ownerRunning() {
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .flatMap(p -> p.info().startInstant())
                .map(s -> Duration.between(s, started).abs().compareTo(SAME_START) <= 0)
                .orElse(false);
    }
}
