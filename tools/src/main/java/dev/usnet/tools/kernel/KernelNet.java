package dev.usnet.tools.kernel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.usnet.tools.cli.UsageException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The machine's own networking, for what a topology sets up outside usnet: kernel namespaces
 * ({@code ip netns}) and the kernel ends of TAP devices. The default runs iproute2's {@code ip}; tests pass a
 * recording fake.
 */
public interface KernelNet {
    /** True when {@code ip netns} already has a namespace of that name. */
    boolean namespaceExists(String name);

    /** {@code ip netns add NAME} and {@code ip -n NAME link set lo up}. */
    void addNamespace(String name);

    /** {@code ip netns del NAME}: the namespace goes with every interface in it. */
    void deleteNamespace(String name);

    /** {@code ip [-n NAMESPACE] ARGS...}; {@code namespace} null for usnet's own. Throws on failure. */
    void ip(String namespace, String... args);

    /**
     * A kernel network interface as {@code ip -d link show} describes it.
     *
     * @param kind       {@code tap} or {@code tun} for tun devices, else the link kind ({@code veth}, {@code dummy},
     *                   {@code bridge}, ...), else the link type ({@code ether}, {@code loopback})
     * @param alias      the interface alias ({@code ip link set ... alias}), null when it has none
     * @param persistent a tun device made persistent (TUNSETPERSIST, {@code ip tuntap add}): it outlives its fds
     */
    record Link(String name, String kind, String alias, boolean persistent) {}

    /**
     * The interface {@code name} in kernel namespace {@code namespace} (null: usnet's own), empty when there is
     * none. Stand-ins that create nothing in a kernel see none.
     */
    default Optional<Link> link(String namespace, String name) {
        return Optional.empty();
    }

    /** iproute2's {@code ip}, failures as {@link UsageException}s quoting the command and its message. */
    static KernelNet iproute2() {
        return new KernelNet() {
            @Override
            public boolean namespaceExists(String name) {
                return Files.exists(Path.of("/run/netns", name)) || Files.exists(Path.of("/var/run/netns", name));
            }

            @Override
            public void addNamespace(String name) {
                run(List.of("ip", "netns", "add", name));
                // The mark goes on at once, in the command that has to run anyway; a kill in between leaves an
                // unmarked namespace that usnet cleanup will not take for its own.
                ip(name, "link", "set", "lo", "up", "alias", UsnetMark.ofThisProcess().format());
            }

            @Override
            public Optional<Link> link(String namespace, String name) {
                List<String> cmd = new ArrayList<>(List.of("ip"));
                if (namespace != null) {
                    cmd.addAll(List.of("-n", namespace));
                }
                cmd.addAll(List.of("-d", "-j", "link", "show", "dev", name));
                dev.usnet.tap.HostCommand.Result r = dev.usnet.tap.HostCommand.run(10, cmd.toArray(new String[0]));
                if (!r.ok()) {
                    if (r.output().contains("does not exist")) {
                        return Optional.empty();
                    }
                    throw new UsageException(String.join(" ", cmd) + ": " + r.output().trim());
                }
                try {
                    JsonNode l = new ObjectMapper().readTree(r.output()).path(0);
                    JsonNode info = l.path("linkinfo");
                    String kind = info.path("info_kind").asText("");
                    if (kind.equals("tun")) {
                        kind = info.path("info_data").path("type").asText("tun");
                    } else if (kind.isEmpty()) {
                        kind = l.path("link_type").asText("link");
                    }
                    return Optional.of(new Link(name, kind, l.hasNonNull("ifalias") ? l.get("ifalias").asText() : null,
                            info.path("info_data").path("persist").asBoolean(false)));
                } catch (IOException e) {
                    throw new UsageException(String.join(" ", cmd) + ": unreadable answer: " + e.getMessage(), e);
                }
            }

            @Override
            public void deleteNamespace(String name) {
                run(List.of("ip", "netns", "del", name));
            }

            @Override
            public void ip(String namespace, String... args) {
                List<String> cmd = new ArrayList<>(List.of("ip"));
                if (namespace != null) {
                    cmd.add("-n");
                    cmd.add(namespace);
                }
                cmd.addAll(List.of(args));
                run(cmd);
            }

            private void run(List<String> cmd) {
                String line = String.join(" ", cmd);
                dev.usnet.tap.HostCommand.Result r = dev.usnet.tap.HostCommand.run(10, cmd.toArray(new String[0]));
                String out = r.output().trim();
                if (!r.ok()) {
                    throw new UsageException(line + ": " + (out.isEmpty() ? "exit status " + r.exit() : out));
                }
            }
        };
    }
}
