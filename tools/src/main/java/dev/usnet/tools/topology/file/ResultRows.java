package dev.usnet.tools.topology.file;

import java.util.List;
import java.util.Map;

/**
 * The tables of a run's results that an expectation is judged against, one ordered map per row. The results
 * implement it, so the file format reads a run's values without depending on the code that writes them.
 */
public interface ResultRows {
    /** One row per app: {@code name}, {@code outcome} and its counters. */
    List<Map<String, Object>> apps();

    /** One row per namespace: {@code name}, {@code drops}, {@code mib}. */
    List<Map<String, Object>> namespaces();

    /** One row per device: {@code name} and its counters. */
    List<Map<String, Object>> devices();

    /** One row per forwarding path: {@code ns}, {@code name} and its counters. */
    List<Map<String, Object>> paths();

    /** One verdict per expectation: {@code line}, {@code expect}, {@code value}, {@code detail}. */
    List<Map<String, Object>> expectations();
}
