package dev.usnet.core.ipv4;

import dev.usnet.core.device.Device;
import dev.usnet.core.route.Route;
import dev.usnet.core.route.RouteType;
import dev.usnet.core.wire.Ipv4Addr;

/** Route builders for tests. */
final class IpRoutes {
    private IpRoutes() {}

    static Route via(String cidr, String gw, Device dev) {
        int slash = cidr.indexOf('/');
        return new Route(Ipv4Addr.parse(cidr.substring(0, slash)), Integer.parseInt(cidr.substring(slash + 1)),
                RouteType.UNICAST, Ipv4Addr.parse(gw), dev, 0, 0, false);
    }
}
