package dev.usnet.tools.ctl;

import dev.usnet.tools.app.App;
import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.stack.NetStack;
import dev.usnet.ns.NetNamespace;
import dev.usnet.tools.app.Apps;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** {@code ns list|add|del}: usnet namespaces as {@code ip netns} lists, adds and deletes them, live. */
final class NsVerbs {
    private NsVerbs() {}

    /** As the topology file takes namespace names. */
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    static Reply run(ControlPlane.Call c) {
        Args a = c.args("ns list | ns add NAME | ns del NAME");
        String sub = a.more() ? a.next("subcommand") : "list";
        return switch (sub) {
            case "list", "show", "ls" -> {
                a.end();
                yield list(c);
            }
            case "add" -> add(c, a);
            case "del", "delete" -> del(c, a);
            default -> throw a.unexpected(sub);
        };
    }

    private static Reply list(ControlPlane.Call c) {
        List<Map<String, Object>> l = new ArrayList<>();
        StringBuilder sb = new StringBuilder();
        for (NetNamespace n : c.cp().topology().namespaces()) {
            NetStack s = n.stack();
            List<String> devs = new ArrayList<>();
            for (Device d : s.devices()) {
                if (!(d instanceof Loopback)) {
                    devs.add(d.name());
                }
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", n.name());
            m.put("devices", devs);
            m.put("addresses", s.devinet().list().size() - 1);
            m.put("routes", s.routes().size());
            l.add(m);
            sb.append(n.name()).append(": ").append(devs.isEmpty() ? "no devices" : String.join(" ", devs)).append('\n');
        }
        return Reply.of(l, sb.toString().stripTrailing());
    }

    private static Reply add(ControlPlane.Call c, Args a) {
        String name = a.next("NAME");
        a.end();
        if (!NAME.matcher(name).matches() || name.equals(".") || name.equals("..")) {
            throw new CtlException("invalid namespace name '" + name + "' (letters, digits, '_', '.', '-'; at most 64)");
        }
        return c.cp().changeGlobal(() -> {
            for (NetNamespace n : c.cp().topology().namespaces()) {
                if (n.name().equals(name)) {
                    throw new CtlException("namespace " + name + " already exists");
                }
            }
            NetNamespace ns = c.cp().topology().registry().create(name);
            c.cp().events().attach(ns.stack());
            return Reply.done("added namespace " + name + " (lo up; add links with: usnet ctl -n " + name + " link add ...)");
        });
    }

    private static Reply del(ControlPlane.Call c, Args a) {
        String name = a.next("NAME");
        a.end();
        NetStack s = c.cp().stack(name);
        Apps apps = c.cp().host().apps().get();
        if (apps != null) {
            List<String> using = new ArrayList<>();
            for (App app : apps.list()) {
                if (app.namespaces().contains(name)) {
                    using.add(app.label());
                }
            }
            if (!using.isEmpty()) {
                throw new CtlException("namespace " + name + " runs apps (" + String.join("; ", using)
                        + "); apps stop with the daemon, so their namespaces stay until then");
            }
        }
        KernelTaps taps = c.cp().host().kernelTaps();
        return c.cp().exclusive(() -> {
            List<Device> devices = new ArrayList<>();
            Reply r = c.cp().onLoop(s, () -> del(c, s, name, devices));
            // TAPs went with the namespace; the kernel namespaces made for them go here, off the namespace's thread.
            List<String> also = new ArrayList<>();
            for (Device d : devices) {
                String k = taps.owns(d) ? taps.deleted(d) : null;
                if (k != null) {
                    also.add(k);
                }
            }
            return also.isEmpty() ? r : Reply.done(r.text() + " and " + String.join(", ", also));
        });
    }

    private static Reply del(ControlPlane.Call c, NetStack s, String name, List<Device> devices) {
        List<String> peers = new ArrayList<>();
        for (Device d : s.devices()) {
            devices.add(d);
            c.cp().captures().forget(d);
            if (d instanceof dev.usnet.core.device.VethEnd v && v.peer() != null && v.peer().stack() != null
                    && v.peer().stack() != s) {
                peers.add(v.peer().stack().name() + "/" + v.peer().name());
            }
        }
        c.cp().topology().registry().delete(name);
        return Reply.done("deleted namespace " + name + (peers.isEmpty() ? "" : " and its veth peers " + String.join(", ", peers)));
    }
}
