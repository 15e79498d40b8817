package dev.usnet.tools.kernel;

import dev.usnet.core.device.Device;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.time.RealTimeScheduler;
import dev.usnet.tap.TapDevice;
import dev.usnet.tap.Tun;
import dev.usnet.tap.TunException;
import dev.usnet.tools.cli.UsageException;
import io.netty.channel.IoEventLoop;
import io.netty.channel.epoll.Epoll;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * TAP devices from tap-bridge for topology files. The kernel interface is created in a private namespace and
 * moved into its kernel namespace, so deleting that namespace destroys it and usnet sees "device gone" (a TAP
 * born inside the namespace would keep it alive through its fd). The device runs on its usnet namespace's
 * event loop, so frames cross no thread.
 */
public final class TapBridgeTaps implements TapProvider {
    @Override
    public void requireAvailable() {
        if (!Epoll.isAvailable()) {
            throw new UsageException("TAP devices need Netty's native epoll transport, which is unavailable here: "
                    + Epoll.unavailabilityCause());
        }
        if (!Files.exists(Path.of("/dev/net/tun"))) {
            throw new UsageException("TAP devices need /dev/net/tun (modprobe tun, or run where it exists)");
        }
    }

    @Override
    public Device openTap(TapRequest req, NetStack stack) {
        Tun.Options o = (req.kernelNamespace() == null ? Tun.Options.current(req.ifname())
                : Tun.Options.movedInto(req.kernelNamespace(), req.ifname())).withVnetHdr(req.vnetHdr());
        if (!(stack.scheduler() instanceof RealTimeScheduler rts) || !(rts.executor() instanceof IoEventLoop loop)) {
            throw new IllegalStateException("TAP " + req.ifname() + " needs its namespace on an epoll event loop");
        }
        try {
            Tun tun = Tun.open(o);
            return new TapDevice(req.usnetName(), req.mac(), tun, loop);
        } catch (TunException e) {
            throw new UsageException("tap " + req.ifname() + ": " + e.getMessage(), e);
        }
    }
}
