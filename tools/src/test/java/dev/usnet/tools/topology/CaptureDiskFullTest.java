package dev.usnet.tools.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.usnet.core.pcap.PcapReader;
import dev.usnet.core.pcap.PcapRecord;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The disk filling while a run writes its captures: one capture's file system (a 192 KiB tmpfs this test mounts
 * and unmounts) fills up; that capture stops with a message naming its file and ENOSPC, keeps what it wrote, and
 * the run and the other capture go on to the end. Root (mount); required in CI, skipped elsewhere.
 */
class CaptureDiskFullTest {
    private static final String TOPOLOGY = """
            version: 1
            name: disk-full
            namespaces:
              df-a:
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/24]
                    peer: {namespace: df-b, name: eth0, addresses: [198.18.0.2/24]}
                apps:
                  - kind: udp-send
                    to: 198.18.0.2
                    port: 5001
                    rate: 1000
                    size: 1000
                captures:
                  - device: eth0
                    direction: out
                    file: full/a.pcap
              df-b:
                apps:
                  - kind: udp-sink
                    port: 5001
                captures:
                  - device: eth0
                    direction: in
                    file: b.pcap
            """;

    private Path mount;

    @BeforeEach
    void mountSmallTmpfs(@TempDir Path tmp) throws Exception {
        boolean root = "0".equals(new String(new ProcessBuilder("id", "-u").start().getInputStream().readAllBytes()).trim());
        assumeTrue(root || "true".equals(System.getenv("CI")), "mounting a tmpfs needs root");
        mount = Files.createDirectories(tmp.resolve("out/full"));
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=192k,mode=0700", "usnet-disk-full",
                mount.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "mount tmpfs: " + out);
    }

    @AfterEach
    void unmount() throws Exception {
        if (mount != null) {
            Process p = new ProcessBuilder("umount", mount.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "umount " + mount + ": " + out);
        }
    }

    @Test
    void aCaptureOnAFullDiskStopsSayingSoWhileTheRunAndTheOtherCaptureGoOn() throws IOException {
        Path out = mount.getParent();
        Path topo = Files.writeString(out.getParent().resolve("disk-full.yaml"), TOPOLOGY);
        // The daemon's warnings go to the process's stderr.
        java.io.PrintStream stderr = System.err;
        java.io.ByteArrayOutputStream said = new java.io.ByteArrayOutputStream();
        RunCommandTest.Result r;
        try {
            System.setErr(new java.io.PrintStream(said, true, java.nio.charset.StandardCharsets.UTF_8));
            r = RunCommandTest.run("run", "--clock", "virtual", "--duration", "2", "--out", out.toString(),
                    topo.toString());
        } finally {
            System.setErr(stderr);
        }
        String err = said.toString(java.nio.charset.StandardCharsets.UTF_8) + r.err();
        Path full = mount.resolve("a.pcap");
        assertEquals(0, r.code(), r.out() + err);
        assertTrue(err.contains("usnet: capture stopped: " + full + ": No space left on device (ENOSPC)"), err);
        assertEquals(1, err.lines().filter(l -> l.contains("capture stopped")).count(), "said once: " + err);
        // The other capture has every frame of the 2 s at 1000 datagrams per second.
        List<PcapRecord> b = PcapReader.readAll(out.resolve("b.pcap"));
        assertTrue(b.size() >= 1990, b.size() + " frames in the capture that had room");
        // The full one keeps what reached its file before the disk filled, whole records up to a torn last one.
        List<PcapRecord> a = PcapReader.readComplete(full);
        long datagrams = a.stream().filter(rec -> rec.data().length == 1042).count();
        assertTrue(datagrams > 100 && a.size() < b.size(), datagrams + " datagrams in the capture that filled up");
    }
}
