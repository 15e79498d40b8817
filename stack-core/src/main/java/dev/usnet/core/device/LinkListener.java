package dev.usnet.core.device;

/** Told when a device of the namespace changes state (RTM_NEWLINK); must not block. */
public interface LinkListener {
    /** {@code dev} was set up or down, or its carrier changed (a veth whose peer went down). */
    default void linkChanged(Device dev) {}
}
