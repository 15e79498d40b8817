package dev.usnet.tools.topology.file;

import java.util.List;

/**
 * A topology file that cannot be built: every error found, each as {@code file:line: key.path: message},
 * and the warnings found alongside them ({@code file:line: key.path: warning: message}).
 */
public final class TopologyException extends RuntimeException {
    private final List<String> errors;
    private final List<String> warnings;

    public TopologyException(List<String> errors) {
        this(errors, List.of());
    }

    public TopologyException(List<String> errors, List<String> warnings) {
        super(String.join("\n", errors));
        this.errors = List.copyOf(errors);
        this.warnings = List.copyOf(warnings);
    }

    public List<String> errors() {
        return errors;
    }

    public List<String> warnings() {
        return warnings;
    }
}
