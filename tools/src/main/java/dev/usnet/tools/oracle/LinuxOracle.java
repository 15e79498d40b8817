package dev.usnet.tools.oracle;

import dev.usnet.tools.cli.UsageException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The project's Linux recorder, {@code tools/oracle/usnet_oracle.py}: builds the DUT as Linux in fresh kernel
 * namespaces, injects, captures and writes a fixture. This class finds the script beside the build (the jar or
 * the classes directory sits under {@code tools/target}), picks a Python 3 that can run it, and runs it with
 * its output passed through line by line.
 */
final class LinuxOracle {
    /** The script's own exit codes (see its docstring). */
    static final int RECORDED = 0;
    static final int BAD_INPUT = 2;
    static final int KERNEL_REFUSED = 3;

    private static final String SCRIPT = "oracle/usnet_oracle.py";

    private LinuxOracle() {}

    /** {@code tools/oracle/usnet_oracle.py} of the tree this build came from; {@code usnet.oracle.script} overrides. */
    static Path script() {
        String override = System.getProperty("usnet.oracle.script");
        if (override != null) {
            Path p = Path.of(override);
            if (!Files.isRegularFile(p)) {
                throw new UsageException("usnet.oracle.script=" + override + ": no such file");
            }
            return p;
        }
        Path from;
        try {
            from = Path.of(LinuxOracle.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException | SecurityException | NullPointerException e) {
            throw new UsageException("cannot tell where this build lives, to find " + SCRIPT, e);
        }
        for (Path d = from.toAbsolutePath().getParent(); d != null; d = d.getParent()) {
            for (Path candidate : List.of(d.resolve(SCRIPT), d.resolve("tools").resolve(SCRIPT))) {
                if (Files.isRegularFile(candidate)) {
                    return candidate;
                }
            }
        }
        throw new UsageException("cannot find tools/" + SCRIPT + " above " + from
                + "; run usnet from its source tree (the recorder is a script there)");
    }

    /**
     * A Python 3 for the script: {@code USNET_PYTHON} if set, else the system's {@code /usr/bin/python3} (where
     * Debian's python3-scapy lives) before whatever {@code python3} the PATH has. A scenario script builds its
     * frames with scapy, so recording from one needs a Python that has it.
     */
    static String python(boolean needsScapy) {
        List<String> candidates = new ArrayList<>();
        String env = System.getenv("USNET_PYTHON");
        if (env != null && !env.isBlank()) {
            candidates.add(env);
        } else {
            candidates.add("/usr/bin/python3");
            candidates.add("python3");
        }
        String probe = needsScapy ? "import scapy" : "import sys; sys.exit(sys.version_info < (3, 8))";
        for (String c : candidates) {
            if (runs(c, probe)) {
                return c;
            }
        }
        throw new UsageException(needsScapy
                ? "recording a scenario script needs Python 3 with scapy: apt-get install python3-scapy"
                        + " (or set USNET_PYTHON to a python3 that has it)"
                : "the recorder needs Python 3.8 or newer: apt-get install python3 (or set USNET_PYTHON)");
    }

    private static boolean runs(String python, String code) {
        try {
            Process p = new ProcessBuilder(python, "-c", code).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            p.getOutputStream().close();
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Runs {@code usnet_oracle.py MODE SOURCE OUTDIR}, copying its output to {@code out}; returns its exit code.
     * Should this JVM be stopped meanwhile, the script gets SIGTERM and time to delete its namespaces.
     */
    static int run(String mode, Path source, Path outDir, PrintWriter out) throws IOException, InterruptedException {
        Path script = script();
        String python = python(mode.equals("record"));
        Process p = new ProcessBuilder(python, script.toString(), mode, source.toString(), outDir.toString())
                .redirectErrorStream(true).start();
        p.getOutputStream().close();
        Thread stopChild = new Thread(() -> {
            p.destroy();
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "usnet-oracle-stop");
        Runtime.getRuntime().addShutdownHook(stopChild);
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                out.println(line);
            }
            return p.waitFor();
        } finally {
            if (p.isAlive()) {
                stopChild.run();
            }
            try {
                Runtime.getRuntime().removeShutdownHook(stopChild);
            } catch (IllegalStateException shuttingDown) {
                // the hook is already running and does the same
            }
        }
    }
}
