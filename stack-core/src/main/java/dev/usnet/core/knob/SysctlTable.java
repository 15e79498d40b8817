package dev.usnet.core.knob;

import java.util.List;

/**
 * A module's declared knobs, found with {@link java.util.ServiceLoader} (a {@code META-INF/services} entry), so
 * that a knob is known by name — for a topology file's check or {@code --set} — before anything of that module
 * has run. Linux's register_net_sysctl of one subsystem's ctl_table.
 */
public interface SysctlTable {
    /** Every knob the module declares. */
    List<? extends Knob> knobs();

    /** Every per-device knob the module declares ({@code <family><dev>.<name>}). */
    default List<DeviceKnob> deviceKnobs() {
        return List.of();
    }

    /** Every per-device spec the module declares ({@code <family><dev>[.<param>]}). */
    default List<DeviceSpecKnob<?>> deviceSpecKnobs() {
        return List.of();
    }
}
