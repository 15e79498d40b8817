package dev.usnet.tools.packetdrill;

import java.util.List;

/** A parsed script: its option lines and its events in order. */
record Script(String file, List<ScriptOption> options, List<Event> events) {
}
