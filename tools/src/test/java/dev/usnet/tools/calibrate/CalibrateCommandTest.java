package dev.usnet.tools.calibrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.core.knob.Knobs;
import dev.usnet.core.stack.CpuModelSysctl;
import dev.usnet.tools.Usnet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class CalibrateCommandTest {
    @Test
    void printsEveryMeasuredCostAsASetLineTheKnobsAccept() {
        CommandLine cl = Usnet.commandLine();
        StringWriter out = new StringWriter();
        cl.setOut(new PrintWriter(out));
        assertEquals(0, cl.execute("calibrate", "--packets", "2000"));
        List<String> keys = new ArrayList<>();
        Knobs knobs = new Knobs();
        for (String line : out.toString().split("\n")) {
            if (line.startsWith("--set ")) {
                String kv = line.substring("--set ".length());
                String key = kv.substring(0, kv.indexOf('='));
                knobs.set(key, kv.substring(kv.indexOf('=') + 1));
                keys.add(key);
            }
        }
        assertEquals(List.of("usnet.cpu.l2_rx_ns", "usnet.cpu.bridge_fwd_ns", "usnet.cpu.ip_fwd_ns",
                "usnet.cpu.copy_ps_per_byte", "usnet.cpu.csum_ps_per_byte", "usnet.cpu.ct_lookup_ns",
                "usnet.cpu.ct_new_ns", "usnet.cpu.nat_ns", "usnet.cpu.nft_rule_ns"), keys);
        assertTrue(knobs.get(CpuModelSysctl.L2_RX_NS) > 0, "a frame's receive took measurable time: " + out);
        assertTrue(knobs.get(CpuModelSysctl.CSUM_PS_PER_BYTE) > 0, "checksumming took measurable time: " + out);
    }
}
