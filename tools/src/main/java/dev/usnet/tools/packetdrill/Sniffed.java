package dev.usnet.tools.packetdrill;

/**
 * An IPv4 packet the stack under test sent on the test device, from the first byte of the IP header (no
 * link-layer header), and the script time (µs) it was sent at.
 */
public record Sniffed(byte[] ipPacket, long micros) {
}
