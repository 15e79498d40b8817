package dev.usnet.core.ipv6;

import dev.usnet.core.knob.DeviceKnob;
import dev.usnet.core.knob.DeviceKnob.Combine;
import dev.usnet.core.knob.Knob;
import dev.usnet.core.knob.SysctlTable;
import java.util.List;

/**
 * MLD's per-device knobs beside {@link Ipv6Sysctl}'s report intervals: {@code net.ipv6.conf.<dev>.force_mld_version}
 * and {@code mld_qrv}, with Linux's defaults and ranges.
 */
public final class MldSysctl implements SysctlTable {
    /**
     * 0: MLDv2, falling back to MLDv1 while an MLDv1 querier is heard; 1: MLDv1 only; 2: MLDv2 only (MLDv1 queries
     * ignored). A non-zero {@code all} value wins over the device's, as in Linux (mld_force_mld_version).
     */
    public static final DeviceKnob FORCE_MLD_VERSION = DeviceKnob.define(Ipv6Sysctl.CONF, "force_mld_version", 0, 0,
            2, Combine.DEVICE);
    /** The robustness variable until a query says otherwise: each state change is reported this many times. */
    public static final DeviceKnob MLD_QRV = DeviceKnob.define(Ipv6Sysctl.CONF, "mld_qrv", 2, 1, Integer.MAX_VALUE,
            Combine.DEVICE);

    private static final List<DeviceKnob> DEVICE_KNOBS = List.of(FORCE_MLD_VERSION, MLD_QRV);

    /** For {@link java.util.ServiceLoader}; the knobs themselves are the static fields. */
    public MldSysctl() {}

    @Override
    public List<? extends Knob> knobs() {
        return List.of();
    }

    @Override
    public List<DeviceKnob> deviceKnobs() {
        return DEVICE_KNOBS;
    }
}
