package dev.usnet.core.knob;

/**
 * One device's IPv4 settings ({@code net.ipv4.conf.<dev>.*}) and ARP parameters
 * ({@code net.ipv4.neigh.<dev>.*}), as plain fields so the packet path reads them without lookups.
 */
public final class DevConf {
    // net.ipv4.conf.<dev>.*
    public volatile int forwarding;
    public volatile int proxyArp;
    public volatile int sendRedirects = 1;
    public volatile int acceptRedirects = 1;
    public volatile int rpFilter;
    public volatile int arpIgnore;
    public volatile int arpAnnounce;
    public volatile int arpAccept;
    // net.ipv4.neigh.<dev>.*
    public volatile int mcastSolicit = 3;
    public volatile int ucastSolicit = 3;
    public volatile int appSolicit;
    public volatile long retransTimeMs = 1000;
    public volatile long baseReachableTimeMs = 30_000;
    public volatile long delayFirstProbeTimeS = 5;
    public volatile long gcStaleTimeS = 60;
    public volatile int unresQlenBytes = 212_992;
    /** In USER_HZ (1/100 s), as Linux exposes it: 80 = up to 0.8 s random delay for proxied replies. */
    public volatile int proxyDelay = 80;
    public volatile int proxyQlen = 64;
    /**
     * usnet.netem.<dev>.*: the device's link emulation, null for none. Never copied from {@code default}:
     * like a qdisc, it belongs to one device.
     */
    public volatile dev.usnet.core.netem.NetemParams netem;

    public DevConf copy() {
        DevConf c = new DevConf();
        c.forwarding = forwarding;
        c.proxyArp = proxyArp;
        c.sendRedirects = sendRedirects;
        c.acceptRedirects = acceptRedirects;
        c.rpFilter = rpFilter;
        c.arpIgnore = arpIgnore;
        c.arpAnnounce = arpAnnounce;
        c.arpAccept = arpAccept;
        c.mcastSolicit = mcastSolicit;
        c.ucastSolicit = ucastSolicit;
        c.appSolicit = appSolicit;
        c.retransTimeMs = retransTimeMs;
        c.baseReachableTimeMs = baseReachableTimeMs;
        c.delayFirstProbeTimeS = delayFirstProbeTimeS;
        c.gcStaleTimeS = gcStaleTimeS;
        c.unresQlenBytes = unresQlenBytes;
        c.proxyDelay = proxyDelay;
        c.proxyQlen = proxyQlen;
        return c;
    }
}
