package dev.usnet.core.route;

import dev.usnet.core.device.Device;

/**
 * What a route of any family gives a connection that holds it (the family-neutral part of a dst_entry): the
 * device its packets leave by. A transport that runs over several families (TCP) keeps its route as this and
 * lets the family's own code, which knows whether it holds a {@link Route} or a {@link Route6}, read the rest.
 */
public interface Dst {
    /** The device packets along this route leave by (the loopback for a local destination). */
    Device dev();
}
