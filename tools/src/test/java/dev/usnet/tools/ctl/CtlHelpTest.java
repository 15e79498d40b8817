package dev.usnet.tools.ctl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.Usnet;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code usnet ctl help} lists the verbs without a daemon to ask. */
class CtlHelpTest {
    @Test
    void helpNeedsNoRunningDaemon(@TempDir Path tmp) {
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        String sock = tmp.resolve("no-daemon.sock").toString();
        int code = Usnet.execute(new String[] {"ctl", "--socket", sock, "help"}, new PrintWriter(so, true),
                new PrintWriter(se, true));
        assertEquals(0, code, so + "" + se);
        assertEquals(String.join("\n", ControlPlane.HELP) + "\n", so.toString());
        assertTrue(so.toString().contains("route"), so.toString());
        StringWriter sj = new StringWriter();
        code = Usnet.execute(new String[] {"ctl", "--socket", sock, "--json", "help"}, new PrintWriter(sj, true),
                new PrintWriter(se, true));
        assertEquals(0, code);
        assertTrue(sj.toString().contains("\"verbs\"") && sj.toString().contains("\"capture\""), sj.toString());
        // Any other verb still needs the daemon.
        code = Usnet.execute(new String[] {"ctl", "--socket", sock, "stats"}, new PrintWriter(new StringWriter(), true),
                new PrintWriter(se, true));
        assertEquals(2, code);
    }
}
