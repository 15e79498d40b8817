package dev.usnet.tools.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.core.wire.Ipv4Addr;
import dev.usnet.core.wire.MacAddr;
import dev.usnet.tools.cli.UsageException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A conformance fixture's {@code scenario.json}: the device under test (a bridge or a router), its ports and
 * configuration. Loading validates every key and names the file and key path of the first problem.
 *
 * <p>{@code nftables} is the ruleset Linux ran with ({@code router.nftables} or {@code bridge.nftables}, the text
 * {@code nft -f} read; null when the DUT had none). {@code pending} names what usnet lacks to replay the fixture
 * (e.g. {@code "netfilter"}); null when it can be replayed.
 */
public record Scenario(String name, String device, Bridge bridge, Router router, List<Port> ports, double settleS,
                       double trailingAdvanceS, Map<String, String> linuxSysctl, String nftables, String pending) {

    /** Bridge settings. */
    public record Bridge(long mac, double ageingTimeS, boolean stp, boolean multicastSnooping, Integer fdbMaxLearned,
                         Map<String, String> sysctl) {}

    /** Router settings: routes in ip-route syntax, permanent neighbours, namespace sysctls. */
    public record Router(List<String> routes, List<Neighbor> neighbors, Map<String, String> sysctl) {}

    public record Neighbor(String ip, long mac, String dev) {}

    public record Port(String name, long mac, int mtu, List<String> addresses, Map<String, String> sysctl) {}

    /**
     * The DUT's own IPv4 addresses (the comparison rule ignores the IP ID and header checksum of packets from them);
     * IPv6 addresses, written with colons, have neither field and are not listed.
     */
    public Set<Integer> ownIpv4Addresses() {
        Set<Integer> own = new HashSet<>();
        for (Port p : ports) {
            for (String a : p.addresses()) {
                if (a.indexOf(':') >= 0) {
                    continue;
                }
                int slash = a.indexOf('/');
                own.add(Ipv4Addr.parse(slash < 0 ? a : a.substring(0, slash)));
            }
        }
        return own;
    }

    /** Whether any port has an IPv6 address: the DUT then runs IPv6. */
    public boolean hasIpv6() {
        for (Port p : ports) {
            for (String a : p.addresses()) {
                if (a.indexOf(':') >= 0) {
                    return true;
                }
            }
        }
        return false;
    }

    public static Scenario load(Path fixtureDir) {
        Path file = fixtureDir.resolve("scenario.json");
        if (!Files.isRegularFile(file)) {
            throw new UsageException(fixtureDir + ": not a fixture directory (no scenario.json)");
        }
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(file.toFile());
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            // file:line:column as compilers write it; Jackson's message alone names neither (its own location
            // suffix names a stream, not the file).
            var at = e.getLocation();
            String where = at == null || at.getLineNr() < 1 ? "" : ":" + at.getLineNr() + (at.getColumnNr() < 1 ? "" : ":" + at.getColumnNr());
            throw new UsageException(file + where + ": not valid JSON: "
                    + e.getOriginalMessage().lines().findFirst().orElse("").replaceAll("\\s+$", ""));
        } catch (IOException e) {
            throw new UsageException(dev.usnet.tools.cli.IoErrors.describe(file, e));
        }
        return new Parser(file.toString()).parse(root);
    }

    private static final class Parser {
        private final String file;

        Parser(String file) {
            this.file = file;
        }

        private UsageException bad(String key, String what) {
            return new UsageException(file + ": key '" + key + "': " + what);
        }

        private JsonNode req(JsonNode n, String key, String path) {
            JsonNode v = n.get(key);
            if (v == null || v.isNull()) {
                throw bad(path + key, "missing");
            }
            return v;
        }

        private String text(JsonNode n, String key, String path) {
            JsonNode v = req(n, key, path);
            if (!v.isTextual()) {
                throw bad(path + key, "expected a string, got " + v.getNodeType().name().toLowerCase());
            }
            return v.asText();
        }

        private String optionalText(JsonNode n, String key, String path) {
            JsonNode v = n.get(key);
            if (v == null || v.isNull()) {
                return null;
            }
            if (!v.isTextual() || v.asText().isBlank()) {
                throw bad(path + key, "expected a non-empty string, got " + (v.isTextual() ? "an empty one"
                        : v.getNodeType().name().toLowerCase()));
            }
            return v.asText();
        }

        private long mac(JsonNode n, String key, String path) {
            String s = text(n, key, path);
            try {
                return MacAddr.parse(s);
            } catch (IllegalArgumentException e) {
                throw bad(path + key, e.getMessage());
            }
        }

        private double number(JsonNode n, String key, String path, double def) {
            JsonNode v = n.get(key);
            if (v == null || v.isNull()) {
                return def;
            }
            if (!v.isNumber()) {
                throw bad(path + key, "expected a number, got " + v.getNodeType().name().toLowerCase());
            }
            return v.asDouble();
        }

        private Map<String, String> sysctl(JsonNode n, String key, String path) {
            Map<String, String> m = new LinkedHashMap<>();
            JsonNode v = n.get(key);
            if (v == null || v.isNull()) {
                return m;
            }
            if (!v.isObject()) {
                throw bad(path + key, "expected an object of sysctl keys");
            }
            v.fields().forEachRemaining(e -> {
                if (!e.getValue().isValueNode()) {
                    throw bad(path + key + "." + e.getKey(), "expected a number or string");
                }
                m.put(e.getKey(), e.getValue().asText());
            });
            return m;
        }

        private List<String> strings(JsonNode n, String key, String path) {
            List<String> l = new ArrayList<>();
            JsonNode v = n.get(key);
            if (v == null || v.isNull()) {
                return l;
            }
            if (!v.isArray()) {
                throw bad(path + key, "expected a list of strings");
            }
            for (int i = 0; i < v.size(); i++) {
                if (!v.get(i).isTextual()) {
                    throw bad(path + key + "[" + i + "]", "expected a string");
                }
                l.add(v.get(i).asText());
            }
            return l;
        }

        Scenario parse(JsonNode root) {
            if (!root.isObject()) {
                throw bad("", "expected a JSON object at the top");
            }
            String name = root.has("name") ? text(root, "name", "") : Path.of(file).getParent().getFileName().toString();
            String device = text(root, "device", "");
            if (!device.equals("bridge") && !device.equals("router")) {
                throw bad("device", "expected \"bridge\" or \"router\", got \"" + device + "\"");
            }
            JsonNode portsNode = req(root, "ports", "");
            if (!portsNode.isArray() || portsNode.isEmpty()) {
                throw bad("ports", "expected a non-empty list of ports");
            }
            List<Port> ports = new ArrayList<>();
            for (int i = 0; i < portsNode.size(); i++) {
                String p = "ports[" + i + "].";
                JsonNode pn = portsNode.get(i);
                String pname = text(pn, "name", p);
                if (!pname.matches("[A-Za-z0-9_.-]{1,15}")) {
                    throw bad(p + "name", "'" + pname + "' is not a valid interface name (1-15 of A-Z a-z 0-9 _ . -)");
                }
                double mtu = number(pn, "mtu", p, 1500);
                if (mtu < 68 || mtu > 65535 || mtu != Math.floor(mtu)) {
                    throw bad(p + "mtu", "expected an integer 68..65535, got " + mtu);
                }
                ports.add(new Port(pname, mac(pn, "mac", p), (int) mtu, strings(pn, "addresses", p), sysctl(pn, "sysctl", p)));
            }
            Bridge bridge = null;
            Router router = null;
            if (device.equals("bridge")) {
                JsonNode b = req(root, "bridge", "");
                double ageing = number(b, "ageing_time_s", "bridge.", 300);
                if (ageing < 0) {
                    throw bad("bridge.ageing_time_s", "must not be negative");
                }
                if (b.path("stp").asBoolean(false)) {
                    throw bad("bridge.stp", "STP is not implemented; fixtures must run with stp false");
                }
                JsonNode snooping = b.path("multicast_snooping");
                if (!snooping.isMissingNode() && !snooping.isBoolean()) {
                    throw bad("bridge.multicast_snooping", "expected true or false, got " + snooping);
                }
                Integer max = b.has("fdb_max_learned") ? (int) number(b, "fdb_max_learned", "bridge.", 0) : null;
                bridge = new Bridge(mac(b, "mac", "bridge."), ageing, false, snooping.asBoolean(false), max,
                        sysctl(b, "sysctl", "bridge."));
            } else {
                JsonNode r = root.path("router");
                List<Neighbor> neigh = new ArrayList<>();
                JsonNode nn = r.get("neighbors");
                if (nn != null && !nn.isNull()) {
                    if (!nn.isArray()) {
                        throw bad("router.neighbors", "expected a list");
                    }
                    for (int i = 0; i < nn.size(); i++) {
                        String p = "router.neighbors[" + i + "].";
                        neigh.add(new Neighbor(text(nn.get(i), "ip", p), mac(nn.get(i), "mac", p), text(nn.get(i), "dev", p)));
                    }
                }
                router = new Router(strings(r, "routes", "router."), neigh, sysctl(r, "sysctl", "router."));
            }
            double settle = number(root, "settle_s", "", 1.0);
            // The oracle waited out advance_s steps after the last frame before settling; they are in no pcap.
            double trailing = 0;
            JsonNode steps = root.path("steps");
            for (int i = 0; i < steps.size(); i++) {
                JsonNode st = steps.get(i);
                if (st.has("advance_s")) {
                    trailing += number(st, "advance_s", "steps[" + i + "].", 0);
                } else {
                    trailing = 0;
                }
            }
            Map<String, String> linux = sysctl(root.path("linux"), "sysctl", "linux.");
            String section = device.equals("bridge") ? "bridge" : "router";
            String nftables = optionalText(root.path(section), "nftables", section + ".");
            String pending = optionalText(root, "pending", "");
            return new Scenario(name, device, bridge, router, ports, settle, trailing, linux, nftables, pending);
        }
    }
}
