package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.pcap.PcapTap;
import dev.usnet.core.stack.NetStack;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** {@code capture start|stop|list}: a pcap of a device begun and ended while the daemon runs, as tcpdump -w would. */
final class CaptureVerbs {
    private CaptureVerbs() {}

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("capture start NS/DEV FILE [in|out|inout] [[count] N] | capture stop [FILE] | capture list");
        String sub = a.more() ? a.next("subcommand") : "list";
        return switch (sub) {
            case "start" -> start(c, a);
            case "stop" -> stop(c, a);
            case "list", "show" -> {
                a.end();
                yield list(c);
            }
            default -> throw a.unexpected(sub);
        };
    }

    private static Reply start(ControlPlane.Call c, Args a) {
        String where = a.next("NS/DEV");
        String file = a.next("FILE");
        PcapTap.Direction dir = PcapTap.Direction.INOUT;
        long count = Long.MAX_VALUE;
        while (a.more()) {
            String w = a.next("option");
            switch (w) {
                case "in", "out", "inout" -> dir = PcapTap.Direction.valueOf(w.toUpperCase(Locale.ROOT));
                case "count" -> count = Args.integer(a.next("count"), "count", 1, Integer.MAX_VALUE);
                default -> {
                    if (!w.chars().allMatch(Character::isDigit)) {
                        throw a.unexpected(w);
                    }
                    count = Args.integer(w, "count", 1, Integer.MAX_VALUE);
                }
            }
        }
        int slash = where.indexOf('/');
        NetStack s;
        String dev;
        if (slash < 0) {
            s = c.stack();
            dev = where;
        } else {
            s = c.cp().stack(where.substring(0, slash));
            dev = where.substring(slash + 1);
        }
        Path f = c.cp().captures().resolve(file);
        long epoch = c.cp().host().clock().equals("real") ? System.currentTimeMillis() * 1_000_000L - System.nanoTime() : 0;
        PcapTap.Direction fDir = dir;
        long fCount = count;
        return c.cp().change(s, () -> {
            Device d = ControlPlane.device(s, dev);
            c.cp().captures().start(f, s.name() + "/" + dev, d, fDir, fCount, epoch);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("file", f.toString());
            m.put("dev", s.name() + "/" + dev);
            m.put("direction", fDir.name().toLowerCase(Locale.ROOT));
            return Reply.of(m, "capturing " + s.name() + "/" + dev + " (" + m.get("direction") + ") to " + f);
        });
    }

    private static Reply stop(ControlPlane.Call c, Args a) {
        String file = a.more() ? a.next("FILE") : null;
        a.end();
        Map<Path, Long> done = c.cp().captures().stop(file == null ? null : c.cp().captures().resolve(file));
        List<Map<String, Object>> l = new ArrayList<>();
        StringBuilder sb = new StringBuilder();
        done.forEach((f, n) -> {
            l.add(Map.of("file", f.toString(), "frames", n));
            sb.append("stopped ").append(f).append(": ").append(n).append(" frames\n");
        });
        return Reply.of(l, done.isEmpty() ? "no capture was running" : sb.toString().stripTrailing());
    }

    private static Reply list(ControlPlane.Call c) {
        List<Map<String, Object>> l = new ArrayList<>();
        StringBuilder sb = new StringBuilder();
        for (RuntimeCaptures.Running r : c.cp().captures().list()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("file", r.file().toString());
            m.put("dev", r.where());
            m.put("direction", r.direction().name().toLowerCase(Locale.ROOT));
            m.put("frames", r.writer().frames());
            l.add(m);
            sb.append(r.where()).append(" -> ").append(r.file()).append(" (").append(m.get("direction")).append(", ")
                    .append(m.get("frames")).append(" frames)\n");
        }
        return Reply.of(l, l.isEmpty() ? "no capture started with capture start is running" : sb.toString().stripTrailing());
    }
}
