package dev.usnet.tools.packetdrill.usnet;

import dev.usnet.tools.packetdrill.Target;
import dev.usnet.tools.packetdrill.TargetKind;

/** {@code --target usnet}: a usnet namespace in virtual time. */
public final class UsnetTargetKind implements TargetKind {
    @Override
    public String name() {
        return "usnet";
    }

    @Override
    public Target create() {
        return new UsnetTarget();
    }
}
