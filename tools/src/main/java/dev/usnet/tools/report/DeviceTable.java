package dev.usnet.tools.report;

import dev.usnet.core.device.Device;
import dev.usnet.core.device.Loopback;
import dev.usnet.core.stack.NetStack;
import dev.usnet.core.stats.DeviceStats;
import java.util.ArrayList;
import java.util.List;

/**
 * Every device's receive and transmit counters, the numbers {@code ip -s link} shows (bytes, packets, errors,
 * dropped each way), one aligned row per device named {@code namespace/device}, so twenty devices read as a
 * table. A loopback appears only when it carried traffic.
 *
 * <pre>
 * devices:
 *   device     rx bytes  rx packets  rx errors  rx dropped  tx bytes  tx packets  tx errors  tx dropped
 *   ctr1/eth0      9800         100          0           0      9800         100          0           0
 * </pre>
 */
public final class DeviceTable {
    private DeviceTable() {}

    /** The counters of every device of {@code stacks} as they are now, in namespace then device order. */
    public static List<String> lines(List<NetStack> stacks) {
        Columns t = new Columns(1, "device", "rx bytes", "rx packets", "rx errors", "rx dropped", "tx bytes", "tx packets",
                "tx errors", "tx dropped");
        int rows = 0;
        for (NetStack s : stacks) {
            for (Device d : s.devices()) {
                DeviceStats st = d.stats();
                if (d instanceof Loopback && st.rxPackets == 0 && st.txPackets == 0 && st.rxDropped == 0
                        && st.txDropped == 0) {
                    continue;
                }
                t.row(s.name() + "/" + d.name(), st.rxBytes, st.rxPackets, st.rxErrors, st.rxDropped, st.txBytes,
                        st.txPackets, st.txErrors, st.txDropped);
                rows++;
            }
        }
        if (rows == 0) {
            return List.of("devices: none");
        }
        List<String> out = new ArrayList<>();
        out.add("devices:");
        out.addAll(t.lines("  "));
        return out;
    }
}
