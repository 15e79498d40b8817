package dev.usnet.tools.demo;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder until the demo lands in the next commit. */
@Command(name = "demo", description = "Run the built-in demo")
public final class DemoCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        return 0;
    }
}
