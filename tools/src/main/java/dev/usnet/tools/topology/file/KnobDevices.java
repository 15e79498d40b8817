package dev.usnet.tools.topology.file;

import dev.usnet.core.knob.Knobs;

/**
 * The device a per-device knob's name carries: the file's checks and a parameter override use it to refuse a knob
 * naming a device its namespace does not have. The families are the ones stack-core's tables declare, so a new
 * one is checked here without a change.
 */
public final class KnobDevices {
    private KnobDevices() {}

    /**
     * The device a per-device knob names ({@code eth0} in {@code net.ipv4.conf.eth0.proxy_arp} or
     * {@code usnet.netem.eth0.delay}; {@code all} and {@code default} as written), or null when the key is of no
     * declared per-device family or names no device.
     */
    public static String of(String key) {
        return Knobs.deviceOf(key);
    }
}
