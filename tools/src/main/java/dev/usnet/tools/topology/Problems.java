package dev.usnet.tools.topology;

import java.util.ArrayList;
import java.util.List;

/** Collects the problems of one topology file so that a single run reports all of them. */
final class Problems {
    private final List<String> list = new ArrayList<>();

    void add(Where w, String message) {
        list.add(w.error(message));
    }

    void addRaw(String formatted) {
        list.add(formatted);
    }

    boolean isEmpty() {
        return list.isEmpty();
    }

    int size() {
        return list.size();
    }

    List<String> list() {
        return List.copyOf(list);
    }

    /** Throws a {@link TopologyException} carrying everything collected, if anything was. */
    void throwIfAny() {
        if (!list.isEmpty()) {
            throw new TopologyException(list);
        }
    }
}
