package dev.usnet.tools.kernel;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.cli.UsageException;

/**
 * Opens live NICs for {@code kind: pcap} (capture and inject through libpcap). The real implementation lives
 * on top of tap-bridge's pcap4j port; this build's {@link #forThisBuild()} has none and says so.
 */
public interface PcapProvider {
    /**
     * @param usnetName the device's name inside its usnet namespace
     * @param iface     the machine's interface to capture on and inject into
     * @param promisc   open the interface in promiscuous mode
     * @param mac       the usnet side's MAC
     */
    record PcapRequest(String usnetName, String iface, boolean promisc, long mac) {}

    /** Throws a {@link UsageException} saying why pcap ports cannot be opened; called before any side effect. */
    void requireAvailable();

    /**
     * Opens {@code req.iface()} and returns the usnet device named {@code req.usnetName()}, not yet registered:
     * the caller registers it in {@code stack}. Captured frames go to {@code stack.netifRx(dev, packet)};
     * transmitted frames are injected. {@link Device#delete()} must close the pcap handle.
     */
    Device openPcap(PcapRequest req, NetStack stack);

    /** The provider of this build: tap-bridge's pcap4j device. */
    static PcapProvider forThisBuild() {
        return new TapBridgePcaps();
    }
}
