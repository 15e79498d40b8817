package dev.usnet.tools.topology;

import java.util.List;

/** A topology file that cannot be built: every problem found, each as {@code file:line: key.path: message}. */
public final class TopologyException extends RuntimeException {
    private final List<String> errors;

    public TopologyException(List<String> errors) {
        super(String.join("\n", errors));
        this.errors = List.copyOf(errors);
    }

    public List<String> errors() {
        return errors;
    }
}
