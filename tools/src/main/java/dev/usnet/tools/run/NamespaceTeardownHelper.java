package dev.usnet.tools.run;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A root shell that, given one line, deletes the kernel namespaces it was started with (last made first) and exits;
 * at EOF it does nothing. Started before {@link Daemon#dropPrivileges} gives up root, so that the namespaces the
 * run made can still be deleted at the stop.
 */
final class NamespaceTeardownHelper {
    private final Process process;

    private NamespaceTeardownHelper(Process process) {
        this.process = process;
    }

    static NamespaceTeardownHelper start(List<String> namespaces) throws java.io.IOException {
        List<String> cmd = new ArrayList<>(List.of("sh", "-c", "read -r go || exit 0; rc=0; for ns in \"$@\"; do"
                + " ip netns del \"$ns\" || rc=1; done; exit $rc", "usnet-teardown"));
        for (int i = namespaces.size() - 1; i >= 0; i--) {
            cmd.add(namespaces.get(i));
        }
        return new NamespaceTeardownHelper(new ProcessBuilder(cmd).redirectErrorStream(true).start());
    }

    long pid() {
        return process.pid();
    }

    /**
     * Asks the helper to delete {@code namespaces} (those it was started with); adds them to {@code deleted}, last
     * made first, when it did, else what went wrong to {@code errors}.
     */
    void deleteNamespaces(List<String> namespaces, List<String> deleted, List<String> errors) {
        try (var in = process.getOutputStream()) {
            in.write('\n');
        } catch (java.io.IOException e) {
            errors.add("asking the teardown helper: " + e.getMessage());
        }
        try {
            String out = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
            if (process.waitFor(15, TimeUnit.SECONDS) && process.exitValue() == 0) {
                for (int i = namespaces.size() - 1; i >= 0; i--) {
                    deleted.add(namespaces.get(i));
                }
            } else {
                errors.add("deleting kernel namespaces " + String.join(", ", namespaces) + ": " + out
                        + " (delete them with: ip netns del NAME)");
            }
        } catch (java.io.IOException | InterruptedException e) {
            errors.add("deleting kernel namespaces: " + e.getMessage());
        }
    }
}
