package dev.usnet.tools.packetdrill;

/** One line (or multi-line statement) of a script: when, and what. {@code line} is where it starts. */
record Event(int line, EventTime time, Action action) {
}
