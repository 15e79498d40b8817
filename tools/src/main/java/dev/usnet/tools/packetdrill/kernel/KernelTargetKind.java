package dev.usnet.tools.packetdrill.kernel;

import dev.usnet.tools.packetdrill.Target;
import dev.usnet.tools.packetdrill.TargetKind;

/** {@code --target kernel}: a fresh namespace of this machine's kernel, in real time. */
public final class KernelTargetKind implements TargetKind {
    @Override
    public String name() {
        return "kernel";
    }

    @Override
    public Target create() {
        return new KernelTarget();
    }
}
