package dev.usnet.tools.ctl;

import dev.usnet.tools.app.App;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.topology.build.Topology;
import java.util.ArrayList;
import java.util.List;

/**
 * The apps started with {@code usnet ctl app start}, in the order they started: the control plane's, not the
 * topology file's. Those still running are stopped when the control plane closes (the daemon's stop, while its
 * namespaces still exist).
 */
final class LiveApps {
    private final List<App> apps = new ArrayList<>();

    synchronized void add(App a) {
        apps.add(a);
    }

    synchronized int size() {
        return apps.size();
    }

    synchronized boolean contains(App a) {
        return apps.contains(a);
    }

    synchronized List<App> list() {
        return List.copyOf(apps);
    }

    /** Stops every one still running; what goes wrong is left for the caller to report. */
    void stopAll(Topology t, List<String> errors) {
        for (App a : list()) {
            if (Apps.isRunning(a)) {
                try {
                    Apps.stopLive(t, a);
                } catch (RuntimeException e) {
                    errors.add("stopping " + a.label() + ": " + e.getMessage());
                }
            }
        }
    }
}
