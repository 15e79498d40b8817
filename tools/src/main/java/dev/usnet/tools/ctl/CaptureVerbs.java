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
        Args a = c.args("capture start NS/DEV FILE|- [in|out|inout] [[count] N] | capture stop [FILE] | capture list");
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

    /** What {@code capture start} asks for: a device, a file ({@code -}: the client's standard output), options. */
    private record Start(NetStack stack, String dev, String file, PcapTap.Direction direction, long count) {
        String where() {
            return stack.name() + "/" + dev;
        }

        String directionName() {
            return direction.name().toLowerCase(Locale.ROOT);
        }
    }

    private static Start parseStart(ControlPlane.Call c, Args a) {
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
        if (slash < 0) {
            return new Start(c.stack(), where, file, dir, count);
        }
        return new Start(c.cp().stack(where.substring(0, slash)), where.substring(slash + 1), file, dir, count);
    }

    /** Added to a device's clock to make pcap timestamps: wall-clock epoch in real time, 0 in virtual time. */
    private static long epochOffset(ControlPlane.Call c) {
        return c.cp().host().clock().equals("real") ? System.currentTimeMillis() * 1_000_000L - System.nanoTime() : 0;
    }

    private static Reply start(ControlPlane.Call c, Args a) {
        Start st = parseStart(c, a);
        if (st.file().equals("-")) {
            throw new CtlException("capture start " + st.where() + " -: the pcap goes to the client's standard output, which"
                    + " only usnet ctl can do (usnet ctl capture start " + st.where() + " - | tcpdump -r - -n)");
        }
        Path f = c.cp().captures().resolve(st.file());
        long epoch = epochOffset(c);
        return c.cp().change(st.stack(), () -> {
            Device d = ControlPlane.device(st.stack(), st.dev());
            c.cp().captures().start(f, st.where(), d, st.direction(), st.count(), epoch);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("file", f.toString());
            m.put("dev", st.where());
            m.put("direction", st.directionName());
            return Reply.of(m, "capturing " + st.where() + " (" + m.get("direction") + ") to " + f);
        });
    }

    /**
     * {@code capture start NS/DEV - [in|out|inout] [count N]} from a client that reads the pcap from its
     * connection: the stream is made and its file header written into {@code sink} (held back by the caller until
     * this reply is out), then frames follow until the count is reached, the device goes, or the client hangs up.
     */
    static Reply startStream(ControlPlane.Call c, CaptureStream.Sink sink, java.util.function.Consumer<CaptureStream> started) {
        Args a = c.args("capture start NS/DEV - [in|out|inout] [[count] N]");
        a.next("subcommand");
        Start st = parseStart(c, a);
        long epoch = epochOffset(c);
        return c.cp().change(st.stack(), () -> {
            Device d = ControlPlane.device(st.stack(), st.dev());
            CaptureStream cs;
            try {
                cs = new CaptureStream(st.where(), d, st.direction(), st.count(), epoch, sink);
            } catch (java.io.IOException e) {
                throw new CtlException("cannot start the stream: " + e.getMessage());
            }
            c.cp().captures().startStream(cs);
            started.accept(cs);
            cs.attach();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("file", "-");
            m.put("dev", st.where());
            m.put("direction", st.directionName());
            m.put("streaming", true);
            return Reply.of(m, "capturing " + st.where() + " (" + st.directionName() + ") to standard output"
                    + (st.count() == Long.MAX_VALUE ? "" : ", " + st.count() + " frames"));
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
        if (file == null) {
            for (CaptureStream cs : c.cp().captures().streams()) {
                l.add(Map.of("file", "-", "dev", cs.where(), "frames", cs.frames(), "dropped", cs.dropped()));
                sb.append("stopped ").append(cs.where()).append(" -> client: ").append(cs.frames()).append(" frames\n");
                cs.end();
            }
        }
        return Reply.of(l, l.isEmpty() ? "no capture was running" : sb.toString().stripTrailing());
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
        for (CaptureStream cs : c.cp().captures().streams()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("file", "-");
            m.put("dev", cs.where());
            m.put("direction", cs.direction().name().toLowerCase(Locale.ROOT));
            m.put("frames", cs.frames());
            m.put("dropped", cs.dropped());
            l.add(m);
            sb.append(cs.where()).append(" -> a client's standard output (").append(m.get("direction")).append(", ")
                    .append(m.get("frames")).append(" frames, ").append(m.get("dropped")).append(" dropped: the client"
                            + " did not keep up)\n");
        }
        return Reply.of(l, l.isEmpty() ? "no capture started with capture start is running" : sb.toString().stripTrailing());
    }
}
