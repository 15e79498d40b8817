package dev.usnet.tools.packetdrill;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.packetdrill.kernel.KernelTarget;
import dev.usnet.tools.packetdrill.usnet.UsnetTarget;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The targets {@code usnet packetdrill --target} offers are the registered {@link TargetKind}s, in their order. */
class TargetKindTest {

    @Test
    void usnetAndKernelAreRegisteredInThatOrder() {
        assertEquals(List.of("usnet", "kernel"), List.copyOf(PacketdrillCommand.TARGETS.keySet()));
    }

    @Test
    void eachNameMakesItsOwnTarget() {
        assertInstanceOf(UsnetTarget.class, PacketdrillCommand.loadTarget("usnet").get());
        assertInstanceOf(KernelTarget.class, PacketdrillCommand.loadTarget("kernel").get());
    }

    @Test
    void anUnknownNameIsAUsageErrorListingTheRegisteredOnes() {
        UsageException e = assertThrows(UsageException.class, () -> PacketdrillCommand.loadTarget("bsd"));
        assertEquals("unknown target 'bsd': use one of usnet, kernel", e.getMessage());
    }
}
