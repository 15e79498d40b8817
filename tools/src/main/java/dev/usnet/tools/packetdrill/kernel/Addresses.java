package dev.usnet.tools.packetdrill.kernel;

/** IPv4 addresses as {@link dev.usnet.tools.packetdrill.ScriptOptions} holds them (198.18.0.1 is 0xC6120001). */
final class Addresses {
    private Addresses() {}

    /** The four bytes in network order. */
    static byte[] bytes(int ip) {
        return new byte[] {(byte) (ip >>> 24), (byte) (ip >>> 16), (byte) (ip >>> 8), (byte) ip};
    }

    static String dotted(int ip) {
        return (ip >>> 24 & 255) + "." + (ip >>> 16 & 255) + "." + (ip >>> 8 & 255) + "." + (ip & 255);
    }
}
