package dev.usnet.tools;

/** {@link KernelTapFixture}'s prerequisite checks for tests in other packages. */
public final class KernelTapFixtureAccess {
    private KernelTapFixtureAccess() {}

    /** Root, /dev/net/tun and iproute2: the test is skipped without them, and fails without them when CI=true. */
    public static void requireTapAndNetns() {
        KernelTapFixture.requireTapAndNetns();
    }
}
