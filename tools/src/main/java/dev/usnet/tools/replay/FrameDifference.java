package dev.usnet.tools.replay;

import java.util.HashSet;
import java.util.Set;

/**
 * Where two frames differ under the conformance rule: the first byte that counts (the IP ID and header
 * checksum of the DUT's own packets do not), for reports that must say what differs, not only that it does.
 */
public final class FrameDifference {
    private final Set<Integer> own = new HashSet<>();

    public FrameDifference(Scenario sc) {
        own.addAll(sc.ownIpv4Addresses());
    }

    /** The offset of the first byte that differs by the rule (or the shorter length), -1 when equal by it. */
    public int firstDifferentByte(byte[] expected, byte[] actual) {
        byte[] e = FixtureComparator.normalise(expected, own);
        byte[] a = FixtureComparator.normalise(actual, own);
        int n = Math.min(e.length, a.length);
        for (int i = 0; i < n; i++) {
            if (e[i] != a[i]) {
                return i;
            }
        }
        return e.length == a.length ? -1 : n;
    }
}
