package dev.usnet.tools.topology.file;

import dev.usnet.core.knob.Knobs;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The device a per-device knob's name carries: the file's checks and a parameter override use it to refuse a knob
 * naming a device its namespace does not have.
 */
public final class KnobDevices {
    private static final Pattern DEV_KNOB = Pattern.compile("net\\.ipv4\\.(conf|neigh)\\.(.+)\\.[a-z_]+");

    private KnobDevices() {}

    /** The device a per-device knob names ({@code net.ipv4.conf.<dev>.*}, {@code usnet.netem.<dev>...}), or null. */
    public static String of(String key) {
        String netem = Knobs.netemDevice(key);
        if (netem != null) {
            return netem;
        }
        Matcher m = DEV_KNOB.matcher(key);
        return m.matches() ? m.group(2) : null;
    }
}
