package dev.usnet.perf;

import dev.usnet.tap.HostCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** iperf3 between two kernel namespaces of a {@link BenchNetns}, run alike by every scenario benchmark. */
public final class Iperf3 {
    private Iperf3() {}

    /**
     * Starts {@code iperf3 -s -B addr -p port} in {@code netns} in the background (under {@code timeout
     * lifeSeconds}, output to {@code out}) and waits up to 10 s until it listens; kills it and throws if it does not.
     */
    public static Process startServer(BenchNetns kns, String netns, Path out, int lifeSeconds, String addr, String port)
            throws IOException, InterruptedException {
        Process srv = kns.start(netns, out, "timeout", Integer.toString(lifeSeconds), "iperf3", "-s", "-B", addr, "-p", port);
        boolean listening = false;
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!kns.tryExec(5, netns, "ss", "-ltnH", "sport = :" + port).output().contains(":" + port)) {
                if (System.nanoTime() > end || !srv.isAlive()) {
                    throw new IllegalStateException("iperf3 server did not listen: " + Files.readString(out));
                }
                Thread.sleep(50);
            }
            listening = true;
            return srv;
        } finally {
            if (!listening) {
                kns.kill(srv);
            }
        }
    }

    /**
     * One client run of {@code seconds} from {@code netns} to {@code addr:port} ({@code json}: with {@code -J}),
     * cut off 25 s after it should have ended.
     */
    public static HostCommand.Result client(BenchNetns kns, String netns, String addr, String port, int seconds, boolean json) {
        List<String> cmd = new ArrayList<>(List.of("timeout", Integer.toString(seconds + 25), "iperf3", "-c", addr, "-p", port,
                "-t", Integer.toString(seconds)));
        if (json) {
            cmd.add("-J");
        }
        cmd.addAll(List.of("--connect-timeout", "3000"));
        return kns.tryExec(seconds + 30, netns, cmd.toArray(new String[0]));
    }

    /** An untimed client run of {@code seconds} (the JIT compiles, TCP settles); throws when it fails. */
    public static void warmUp(BenchNetns kns, String netns, String addr, String port, int seconds) {
        HostCommand.Result w = client(kns, netns, addr, port, seconds, false);
        if (!w.ok()) {
            throw new IllegalStateException("iperf3 warm-up exited " + w.exit() + ": " + BenchSupport.lastLines(w.output(), 3));
        }
    }
}
