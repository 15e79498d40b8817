package dev.usnet.tools.ctl;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.knob.Knobs;
import dev.usnet.core.stack.NetStack;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code sysctl -a | KEY... | -w KEY=VALUE...}: every knob of a namespace (docs/topology.md), with when a change
 * takes effect: {@code live} (the next packet or timer reads it), {@code new-sockets} (read when a socket is
 * created, connects or listens: existing connections keep what they started with, as in Linux), or {@code build}
 * (fixed when the namespace is built: refused here).
 */
final class SysctlVerbs {
    private SysctlVerbs() {}

    /** When a change of {@code key} takes effect: live, new-sockets or build (the knob's declaration says). */
    static String applies(String key) {
        return Knobs.applies(key).word();
    }

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("sysctl -a | sysctl KEY... | sysctl -w KEY=VALUE...");
        if (!a.more()) {
            throw new CtlException("sysctl: give -a, a KEY, or -w KEY=VALUE");
        }
        if (a.accept("-a") || a.accept("--all")) {
            a.end();
            return all(c);
        }
        if (a.accept("-w") || a.accept("--write")) {
            List<String[]> kv = new ArrayList<>();
            while (a.more()) {
                String w = a.next("KEY=VALUE");
                int eq = w.indexOf('=');
                if (eq <= 0) {
                    throw new CtlException("sysctl -w: '" + w + "' is not KEY=VALUE");
                }
                kv.add(new String[] {w.substring(0, eq).trim(), w.substring(eq + 1).trim()});
            }
            if (kv.isEmpty()) {
                throw new CtlException("sysctl -w: missing KEY=VALUE");
            }
            return write(c, kv);
        }
        List<String> keys = new ArrayList<>();
        while (a.more()) {
            String k = a.next("KEY");
            if (k.contains("=")) {
                throw new CtlException("sysctl " + k + ": to set a knob, use sysctl -w " + k);
            }
            keys.add(k);
        }
        NetStack s = c.stack();
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            List<Map<String, Object>> out = new ArrayList<>();
            for (String k : keys) {
                checkDevice(s, k);
                out.add(entry(k, s.knobs().get(k)));
            }
            return out;
        });
        return Reply.of(l, text(l));
    }

    private static Map<String, Object> entry(String key, String value) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key", key);
        m.put("value", value);
        m.put("applies", applies(key));
        return m;
    }

    private static String text(List<Map<String, Object>> l) {
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> m : l) {
            sb.append(m.get("key")).append(" = ").append(m.get("value"));
            switch ((String) m.get("applies")) {
                case "new-sockets" -> sb.append("    [new sockets]");
                case "build" -> sb.append("    [fixed at build]");
                default -> { }
            }
            sb.append('\n');
        }
        return sb.toString().stripTrailing();
    }

    private static Reply all(ControlPlane.Call c) {
        NetStack s = c.stack();
        List<Map<String, Object>> l = c.cp().onLoop(s, () -> {
            List<String> devs = new ArrayList<>(List.of("all", "default"));
            List<String> real = new ArrayList<>();
            for (Device d : s.devices()) {
                devs.add(d.name());
                if (!(d instanceof Loopback)) {
                    real.add(d.name());
                }
            }
            List<Map<String, Object>> out = new ArrayList<>();
            for (String name : Knobs.known()) {
                if (name.contains("<dev>") && Knobs.isDeviceSpec(name.replace("<dev>", "x"))) {
                    // A per-device spec (link emulation): shown whole, for the real devices only, as tc shows qdiscs.
                    if (name.endsWith("<dev>")) {
                        for (String d : real) {
                            String k = name.replace("<dev>", d);
                            out.add(entry(k, s.knobs().get(k)));
                        }
                    }
                    continue;
                }
                if (name.contains("<dev>")) {
                    for (String d : devs) {
                        String k = name.replace("<dev>", d);
                        out.add(entry(k, s.knobs().get(k)));
                    }
                } else {
                    out.add(entry(name, s.knobs().get(name)));
                }
            }
            out.sort((x, y) -> ((String) x.get("key")).compareTo((String) y.get("key")));
            return out;
        });
        return Reply.of(l, text(l));
    }

    /** A per-device knob must name a device of the namespace (or all/default), as /proc/sys/net/ipv4/conf/ lists them. */
    private static void checkDevice(NetStack s, String key) {
        String dev = Knobs.deviceOf(key);
        if (!Knobs.isDeviceSpec(key) && ("all".equals(dev) || "default".equals(dev))) {
            return;
        }
        if (dev != null && s.device(dev) == null) {
            throw new CtlException(key + ": no device '" + dev + "' in namespace " + s.name() + " (devices: "
                    + String.join(", ", s.devices().stream().map(Device::name).toList()) + ")");
        }
    }

    private static Reply write(ControlPlane.Call c, List<String[]> kv) {
        NetStack s = c.stack();
        return c.cp().change(s, () -> {
            // Every pair is judged first, on a scratch copy, so one bad pair changes nothing.
            Knobs scratch = new Knobs();
            for (String[] p : kv) {
                checkDevice(s, p[0]);
                if (applies(p[0]).equals("build")) {
                    throw new CtlException(p[0] + " is fixed when the namespace is built (Linux's CONFIG_HZ: timers already"
                            + " running count in its jiffies); set it in the topology file's knobs: or with usnet run --set");
                }
                scratch.set(p[0], p[1]);
            }
            List<Map<String, Object>> out = new ArrayList<>();
            for (String[] p : kv) {
                s.knobs().set(p[0], p[1]);
                out.add(entry(p[0], s.knobs().get(p[0])));
            }
            return Reply.of(out, text(out));
        });
    }
}
