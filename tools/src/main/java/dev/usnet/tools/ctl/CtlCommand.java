package dev.usnet.tools.ctl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.usnet.tools.cli.UsageException;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code usnet ctl [--socket PATH] [-n NS] [--json] VERB ...}: asks a running daemon through its control socket. */
@Command(name = "ctl", mixinStandardHelpOptions = true,
        description = {"Show or change a running usnet daemon (usnet run) through its control socket, with iproute2's verbs:",
                "  ns list|add|del, link show|set|add|del, addr show|add|del, route show|get|add|del|replace,",
                "  neigh show|add|del|flush, bridge fdb show|add|del, bridge link show|set, sysctl -a|KEY|-w KEY=V,",
                "  netem show|set|del, stats, capture start|stop|list (FILE, or - for a live pcap on standard output:"
                        + " ... capture start host/hb1 - | tcpdump -r - -n), hist dump, apps, ss [-tin], events, version.",
                "Every verb and its output: docs/ctl.md. Exit 0 when the daemon did it, 1 when it refused (the reason is"
                        + " printed), 2 when the daemon cannot be reached."})
public final class CtlCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--socket", paramLabel = "PATH", description = "the daemon's control socket (default: $USNET_CTL, else the"
            + " one ctl.sock under ./usnet-out/*/)")
    Path socket;

    @Option(names = {"-n", "--netns"}, paramLabel = "NS", description = "the usnet namespace the verb applies to")
    String ns;

    @Option(names = {"-j", "--json"}, description = "print the reply's data as JSON instead of text")
    boolean json;

    @Option(names = "-6", description = "IPv6, as ip -6: addr, route and neigh show and change the IPv6 ones")
    boolean ipv6;

    /** Where a streamed capture's pcap bytes go ({@code capture start NS/DEV -}); standard output but in tests. */
    // Not System.out: a PrintStream hides the broken pipe of a reader that went away, and the copy would go on.
    java.io.OutputStream binaryOut = new java.io.FileOutputStream(java.io.FileDescriptor.out);

    @Parameters(paramLabel = "VERB", arity = "1..*", description = "the verb and its words, e.g. route add 198.18.9.0/24 via 198.18.1.1")
    List<String> words = new ArrayList<>();

    @Override
    public Integer call() throws IOException {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter e = spec.commandLine().getErr();
        List<String> args = new ArrayList<>(words);
        // --json may also come after the verb, as iproute2 users type it last.
        if (args.remove("--json") | args.remove("-j")) {
            json = true;
        }
        if (args.isEmpty()) {
            throw new UsageException("ctl: missing VERB");
        }
        if (ipv6) {
            // The family goes to the daemon as the verb's first word: route -6 show.
            args.add(1, "-6");
        }
        if (args.equals(List.of("help"))) {
            // The verbs are this build's, the same as any daemon of it answers: no daemon needed to list them.
            print(o, new ObjectMapper().createObjectNode().<com.fasterxml.jackson.databind.node.ObjectNode>set("data",
                    new ObjectMapper().valueToTree(java.util.Map.of("verbs", ControlPlane.VERBS)))
                    .put("text", String.join("\n", ControlPlane.HELP)), json);
            return 0;
        }
        Path sock = socket();
        CtlClient c;
        try {
            c = CtlClient.connect(sock);
        } catch (IOException ex) {
            e.println("usnet: cannot reach the daemon at " + sock + ": " + ex.getMessage()
                    + " (is usnet run going? its start prints 'usnet: control socket PATH')");
            return 2;
        }
        try (c) {
            if (ControlPlane.isCaptureStream(args)) {
                return streamCapture(c, args, e);
            }
            JsonNode r = c.request(ns, args);
            if (!r.path("ok").asBoolean()) {
                e.println("usnet: " + r.path("error").asText());
                return 1;
            }
            print(o, r, json);
            if (args.getFirst().equals("events")) {
                JsonNode ev;
                while ((ev = c.read()) != null) {
                    o.println(json ? ev.toString() : EventText.format(ev));
                    o.flush();
                }
            }
            return 0;
        }
    }

    /**
     * {@code capture start NS/DEV -}: the pcap on standard output, a frame at a time, for {@code | tcpdump -r -}
     * or {@code | wireshark -k -i -}; what the daemon says goes to standard error. Ends when the daemon ends the
     * capture (its count reached, the device deleted) or the reader of standard output goes away.
     */
    private int streamCapture(CtlClient c, List<String> args, PrintWriter e) throws IOException {
        JsonNode r;
        try {
            r = c.requestBytes(ns, args, binaryOut);
        } catch (IOException ex) {
            e.println("usnet: capture: " + ex.getMessage());
            e.flush();
            return 1;
        }
        if (!r.path("ok").asBoolean()) {
            e.println("usnet: " + r.path("error").asText());
            e.flush();
            return 1;
        }
        return 0;
    }

    private static void print(PrintWriter o, JsonNode r, boolean json) throws IOException {
        if (json) {
            o.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(r.get("data")));
        } else if (!r.path("text").asText().isEmpty()) {
            o.println(r.path("text").asText());
        }
        o.flush();
    }

    private Path socket() {
        if (socket != null) {
            return socket;
        }
        String env = System.getenv("USNET_CTL");
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        List<Path> found = new ArrayList<>();
        Path out = Path.of("usnet-out");
        if (Files.isDirectory(out)) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(out)) {
                for (Path d : ds) {
                    Path s = d.resolve("ctl.sock");
                    if (Files.exists(s)) {
                        found.add(s);
                    }
                }
            } catch (IOException ex) {
                throw new UsageException("ctl: cannot list " + out + ": " + ex.getMessage());
            }
        }
        if (found.size() == 1) {
            return found.getFirst();
        }
        if (found.isEmpty()) {
            throw new UsageException("ctl: no control socket found: give --socket PATH (usnet run prints it at the start:"
                    + " 'usnet: control socket PATH'), or set USNET_CTL");
        }
        throw new UsageException("ctl: several daemons' sockets under usnet-out/ (" + String.join(", ",
                found.stream().map(Path::toString).toList()) + "): choose one with --socket PATH");
    }
}
