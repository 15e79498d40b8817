package dev.usnet.tools.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the measuring experiments print and write alike: the machine's load, and their JSON. */
public final class ExperimentReport {
    private ExperimentReport() {}

    /** The 1, 5 and 15 minute load averages, so a reader can judge how noisy the run was ("n/a" off Linux). */
    public static String loadavg() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "n/a";
        }
    }

    /**
     * The end of an experiment's report: the load average after it, then {@code json} written to {@code file} when one
     * was asked for.
     */
    public static void finish(Object json, Path file, PrintWriter out) throws IOException {
        out.println("load average after: " + loadavg());
        if (file != null) {
            writeJson(file, json, out);
        }
        out.flush();
    }

    /** Writes {@code json} indented to {@code file} (making its directory) and says where on {@code out}. */
    public static void writeJson(Path file, Object json, PrintWriter out) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(json) + "\n");
        out.println("wrote " + file.toAbsolutePath());
    }
}
