package dev.usnet.tools.packetdrill;

/** An option line of a script ({@code --tolerance_usecs=10000}); {@code value} is null for a bare flag. */
record ScriptOption(String name, String value, int line) {
}
