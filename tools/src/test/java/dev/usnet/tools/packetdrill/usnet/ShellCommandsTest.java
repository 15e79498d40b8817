package dev.usnet.tools.packetdrill.usnet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.usnet.tools.packetdrill.TargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The backtick commands the usnet target understands, with what each did recorded. */
class ShellCommandsTest {
    private final List<String> done = new ArrayList<>();

    private ShellCommands shell(Path dir) {
        return new ShellCommands(new ShellCommands.Effects() {
            @Override
            public void sysctl(String key, String value) {
                done.add(key + "=" + value);
            }

            @Override
            public String readSysctl(String key) {
                return "42";
            }

            @Override
            public void transmitQueueLimit(int packets) {
                done.add("pfifo " + packets);
            }
        }, dir);
    }

    @Test
    void statementsQuotesArithmeticAndRedirectionsAreResolved() {
        String out = shell(null).run("sysctl -q net.ipv4.tcp_rmem=\"4096 $((64*1024)) $(( 6 * (1024 * 1024) ))\" "
                + "net.ipv4.tcp_sack=0 && sysctl -w 'net.ipv4.tcp_dsack=1'; echo 3 >/proc/sys/net/ipv4/tcp_reordering "
                + "2>&1\ntc qdisc replace dev tun0 root pfifo limit 7 > /dev/null", 5);
        assertEquals(List.of("net.ipv4.tcp_rmem=4096 65536 6291456", "net.ipv4.tcp_sack=0", "net.ipv4.tcp_dsack=1",
                "/proc/sys/net/ipv4/tcp_reordering=3", "pfifo 7"), done, done.toString());
        assertEquals("net.ipv4.tcp_dsack = 1\n", out, "only the setting without -q prints");
        assertEquals("net.ipv4.tcp_sack = 42\n", shell(null).run("sysctl net/ipv4/tcp_sack", 6));
    }

    @Test
    void aHelperScriptIsReadFromTheScriptsDirectoryAndItsErrorsNameItsLine(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("defaults.sh"), "#!/bin/sh\n\n# comment\nsysctl -q a.b=1   # trailing\n"
                + "ip tcp_metrics flush all\ncurl http://example.invalid\n");
        TargetException e = assertThrows(TargetException.class, () -> shell(dir).run("./defaults.sh", 3));
        assertEquals(List.of("a.b=1"), done);
        assertTrue(e.getMessage().startsWith("line 3 (defaults.sh line 6): usnet target does not run shell commands: "
                + "'curl http://example.invalid'"), e.getMessage());
        TargetException missing = assertThrows(TargetException.class, () -> shell(dir).run("sh ../nope.sh", 4));
        assertTrue(missing.getMessage().contains("nope.sh"), missing.getMessage());
    }

    @Test
    void otherCommandsAndQdiscsAreRefusedByName() {
        for (String cmd : new String[] {"tc qdisc add dev tun0 root fq", "tc qdisc add dev eth0 root pfifo",
                "ip link set tun0 mtu 1400", "echo 1 > /tmp/x", "sysctl -p", "A=1 sysctl x=$A"}) {
            TargetException e = assertThrows(TargetException.class, () -> shell(null).run(cmd, 9), cmd);
            assertTrue(e.getMessage().startsWith("line 9"), e.getMessage());
        }
        assertTrue(done.isEmpty(), done.toString());
    }

    @Test
    void arithmeticFollowsTheShell() {
        assertEquals(15 * 1024 * 1024, new ShellCommands.Arithmetic("15*1024*1024").evaluate());
        assertEquals(-3, new ShellCommands.Arithmetic("7 / 2 - (10 % 4) * 3 + 0x1 - 1").evaluate());
        assertThrows(IllegalArgumentException.class, () -> new ShellCommands.Arithmetic("1/0").evaluate());
    }
}
