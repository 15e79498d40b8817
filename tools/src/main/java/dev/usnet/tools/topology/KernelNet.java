package dev.usnet.tools.topology;

import dev.usnet.tools.UsageException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
                ip(name, "link", "set", "lo", "up");
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
