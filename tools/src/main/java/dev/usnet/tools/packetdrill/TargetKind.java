package dev.usnet.tools.packetdrill;

/**
 * A kind of {@link Target} that {@code usnet packetdrill --target NAME} can run scripts against. Kinds register
 * themselves (a line in {@code META-INF/services/dev.usnet.tools.packetdrill.TargetKind}) rather than being named
 * here, so the runner and the script language sit below the targets that use them; a new target is one class and
 * one line.
 */
public interface TargetKind {
    /** The {@code --target} name: {@code usnet}, {@code kernel}. */
    String name();

    /** A new, unopened target; each script gets its own. */
    Target create();
}
