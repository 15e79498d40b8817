package dev.usnet.tools.demo;

import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.TopologyFile;
import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.TopologySpec.App;
import dev.usnet.tools.topology.file.TopologySpec.Ns;
import dev.usnet.tools.topology.file.TopologySpec.TcpStream;
import dev.usnet.tools.topology.file.TopologySpec.UdpSend;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The demo's topology file and what the command line changes in it. The file is {@code examples/demo.yaml},
 * which the build copies into the tools jar next to this class: a resource is found from any working directory
 * and by any way of starting usnet (launcher, tests, {@code java -cp}), and it cannot drift from the classes
 * that read it. {@code --file} runs another copy.
 */
final class DemoSpec {
    /** The bundled copy of examples/demo.yaml, relative to this class. */
    static final String RESOURCE = "demo.yaml";
    /** How errors name the bundled file: where its source lives. */
    static final String BUNDLED_NAME = "examples/demo.yaml";

    private DemoSpec() {}

    /** A topology file's name (for errors) and text. */
    record Source(String name, String text) {}

    /**
     * What the command line sets; null leaves the file's value. This is the one place the demo's options meet
     * the file: {@code --rate} and {@code --size} are every udp-send's {@code rate:} and {@code size:} (rate 0
     * removes the senders), {@code --keep-clones} their {@code keep_clones:}, {@code --tcp-chunk} every stream's
     * {@code write_size:} (0 removes the streams), {@code --seed} the file's {@code seed:}, {@code --set}
     * a knob of every namespace after the file's own (as {@code usnet run --set} without {@code NS:}).
     */
    record Overrides(Integer rate, Integer size, Integer keepClones, Integer tcpChunk, Long seed, Map<String, String> knobs) {
        static final Overrides NONE = new Overrides(null, null, null, null, null, Map.of());
    }

    /** The copy of examples/demo.yaml in the jar. */
    static Source bundled() {
        try (InputStream in = DemoSpec.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the tools jar (built from " + BUNDLED_NAME + ")");
            }
            return new Source(BUNDLED_NAME, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("reading the bundled " + BUNDLED_NAME + ": " + e, e);
        }
    }

    /** A topology file given with {@code --file}. */
    static Source file(Path p) {
        try {
            return new Source(p.toString(), Files.readString(p, StandardCharsets.UTF_8));
        } catch (NoSuchFileException e) {
            throw new UsageException(p + ": no such file");
        } catch (IOException e) {
            throw new UsageException(p + ": cannot read: " + e.getMessage());
        }
    }

    /** The file read and checked ({@link TopologyFile#parse}), with the command line's values applied. */
    static TopologySpec load(Source src, Overrides o) {
        return apply(TopologyFile.parse(src.name(), src.text()), o);
    }

    static TopologySpec apply(TopologySpec spec, Overrides o) {
        List<Ns> out = new ArrayList<>();
        for (Ns n : spec.namespaces()) {
            List<App> apps = new ArrayList<>();
            for (App a : n.apps()) {
                switch (a) {
                    case UdpSend u -> {
                        if (o.rate() == null || o.rate() > 0) {
                            apps.add(new UdpSend(u.to(), u.port(), or(o.rate(), u.rate()), or(o.size(), u.size()), u.where(),
                                    or(o.keepClones(), u.keepClones()), u.maxBurstNanos()));
                        }
                    }
                    case TcpStream t -> {
                        if (o.tcpChunk() == null || o.tcpChunk() > 0) {
                            apps.add(new TcpStream(t.common(), or(o.tcpChunk(), t.writeBytes()), t.intervalNanos()));
                        }
                    }
                    default -> apps.add(a);
                }
            }
            out.add(new Ns(n.name(), n.where(), n.knobs(), n.devices(), n.routes(), n.neighbours(), n.captures(),
                    n.histograms(), List.copyOf(apps), n.nftables()));
        }
        TopologySpec t = new TopologySpec(spec.file(), spec.name(), o.seed() != null ? o.seed() : spec.seed(), spec.output(),
                spec.kernelNamespaces(), List.copyOf(out), spec.expectations());
        List<String> knobs = o.knobs().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList();
        return t.withKnobs(knobs);
    }

    private static int or(Integer given, int file) {
        return given != null ? given : file;
    }

    /**
     * The picture the demo prints: the file's opening comment block (the lines up to the first that is not a
     * comment), each without its {@code "# "}.
     */
    static String picture(String text) {
        StringBuilder b = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            if (!line.startsWith("#")) {
                break;
            }
            b.append(line.startsWith("# ") ? line.substring(2) : line.substring(1)).append('\n');
        }
        return b.toString();
    }
}
