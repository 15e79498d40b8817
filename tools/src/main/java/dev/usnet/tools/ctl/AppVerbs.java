package dev.usnet.tools.ctl;

import dev.usnet.tools.app.App;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.app.Apps;
import dev.usnet.tools.topology.file.TopologyException;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.file.TopologySpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code app start KIND KEY VALUE ...} and {@code app stop NAME}: apps started and stopped while the daemon runs,
 * given with a topology file's app keys as words; {@code apps} lists them after the file's, named the same way.
 */
final class AppVerbs {
    private AppVerbs() {}

    /** The ICMP identifiers of pings started here: apart from a file's (which count up from 0x5500). */
    private static final int LIVE_PING_ID = 0x6600;

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("app start KIND KEY VALUE ... | app stop NAME");
        String sub = a.next("'start' or 'stop'");
        if (c.cp().host().clock().equals("virtual") && (sub.equals("start") || sub.equals("stop"))) {
            // A request arrives at whatever virtual instant the clock has reached when it is served, so an app it
            // started would make the run differ from one with the same file and seed.
            throw new CtlException("app " + sub + ": apps start and stop from the topology file in virtual time, so that"
                    + " a run is the same for the same file and seed");
        }
        return switch (sub) {
            case "start" -> start(c, a);
            case "stop" -> stop(c, a);
            default -> throw a.unexpected(sub);
        };
    }

    private static Reply start(ControlPlane.Call c, Args a) {
        List<String> words = new ArrayList<>();
        while (a.more()) {
            words.add(a.next("KIND KEY VALUE ..."));
        }
        TopologySpec.App spec;
        try {
            spec = TopologyFile.readAppWords(words);
        } catch (TopologyException e) {
            // The reader names keys by where a file has them; here they are words of the request.
            List<String> errors = e.errors().stream().map(m -> m.replaceFirst("^app start:\\d+: namespaces\\.app\\.apps\\[0\\]\\.?", ""))
                    .toList();
            throw new CtlException(String.join(" ", "app", "start", String.join(" ", words)).strip() + ": "
                    + String.join("; ", errors));
        }
        String ns = c.stack().name();
        LiveApps live = c.cp().liveApps();
        return c.cp().exclusive(() -> {
            App app;
            try {
                app = Apps.createLive(c.cp().topology(), ns, spec, LIVE_PING_ID + live.size());
                live.add(app);
                Apps.startLive(c.cp().topology(), app);
            } catch (UsageException | IllegalArgumentException e) {
                throw new CtlException("app start " + String.join(" ", words) + ": " + e.getMessage(), e);
            }
            String name = nameOf(c, app);
            return Reply.of(Map.of("name", name), "started " + name + ": " + app.label());
        });
    }

    private static Reply stop(ControlPlane.Call c, Args a) {
        String name = a.next("NAME (as usnet ctl apps names it)");
        a.end();
        LiveApps live = c.cp().liveApps();
        return c.cp().exclusive(() -> {
            List<Map<String, Object>> all = AppsVerbs.listAll(c);
            List<App> apps = AppsVerbs.all(c);
            for (int i = 0; i < all.size(); i++) {
                if (!all.get(i).get("name").equals(name)) {
                    continue;
                }
                App app = apps.get(i);
                if (!live.contains(app)) {
                    throw new CtlException("app " + name + " is the topology file's: it stops with the daemon (app stop"
                            + " stops apps started with app start)");
                }
                if (!Apps.isRunning(app)) {
                    throw new CtlException("app " + name + " has already stopped");
                }
                Apps.stopLive(c.cp().topology(), app);
                return Reply.of(Map.of("name", name, "outcome", app.outcome().ok() ? "ok" : "failed"),
                        "stopped " + name + ": " + String.join(" ", app.summaryLines()));
            }
            List<String> names = all.stream().map(m -> (String) m.get("name")).toList();
            throw new CtlException("no app '" + name + "' (apps: " + (names.isEmpty() ? "none" : String.join(", ", names)) + ")");
        });
    }

    private static String nameOf(ControlPlane.Call c, App app) {
        List<App> apps = AppsVerbs.all(c);
        List<Map<String, Object>> all = AppsVerbs.listAll(c);
        for (int i = apps.size() - 1; i >= 0; i--) {
            if (apps.get(i) == app) {
                return (String) all.get(i).get("name");
            }
        }
        return app.label();
    }
}
