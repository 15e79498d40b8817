package dev.usnet.tools.kernel;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.tap.PcapDevice;
import dev.usnet.tap.TunException;
import dev.usnet.tools.cli.UsageException;

/** Live NICs through tap-bridge's pcap4j device, opened in the namespace usnet runs in. */
public final class TapBridgePcaps implements PcapProvider {
    @Override
    public void requireAvailable() {
        try {
            Class.forName("org.pcap4j.core.Pcaps");
            org.pcap4j.core.Pcaps.libVersion();
        } catch (Throwable e) {
            throw new UsageException("pcap devices need libpcap (apt-get install libpcap0.8): " + e.getMessage());
        }
    }

    @Override
    public Device openPcap(PcapRequest req, NetStack stack) {
        try {
            return PcapDevice.create(req.usnetName(), null, req.iface(), req.mac());
        } catch (TunException | RuntimeException e) {
            throw new UsageException("pcap " + req.iface() + ": " + e.getMessage(), e);
        }
    }
}
