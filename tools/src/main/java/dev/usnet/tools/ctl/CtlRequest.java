package dev.usnet.tools.ctl;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;

/**
 * One request line of the control protocol (docs/ctl.md, version {@link ControlPlane#PROTOCOL}): a JSON object with
 * {@code usnet_ctl}, {@code args} (the verb and its words, all strings), and optionally {@code ns} and {@code id}.
 * {@link #parse} takes the line apart or refuses it saying what is wrong, before anything runs.
 */
record CtlRequest(JsonNode id, String ns, List<String> args) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A line that is not a request; {@code id} is the request's own when it could be read (null otherwise). */
    static final class Refused extends Exception {
        private final transient JsonNode id;

        Refused(JsonNode id, String message) {
            super(message, null, false, false);
            this.id = id;
        }

        JsonNode id() {
            return id;
        }
    }

    /** The request in {@code line} (already trimmed, not empty). */
    static CtlRequest parse(String line) throws Refused {
        JsonNode req;
        try {
            req = JSON.readTree(line);
        } catch (JsonProcessingException e) {
            throw new Refused(null, "not a JSON request line: " + e.getOriginalMessage());
        }
        if (req == null || !req.isObject()) {
            throw new Refused(null, "a request is a JSON object (docs/ctl.md)");
        }
        JsonNode id = req.get("id");
        JsonNode v = req.get("usnet_ctl");
        if (v == null || !v.canConvertToInt()) {
            throw new Refused(id, "not a usnet ctl request: missing \"usnet_ctl\": " + ControlPlane.PROTOCOL);
        }
        if (v.asInt() != ControlPlane.PROTOCOL) {
            throw new Refused(id, "protocol version " + v.asText() + " is not served: this daemon speaks "
                    + ControlPlane.PROTOCOL);
        }
        JsonNode a = req.get("args");
        if (a == null || !a.isArray() || a.isEmpty()) {
            throw new Refused(id, "missing \"args\": the verb and its words, e.g. [\"link\", \"show\"]");
        }
        List<String> args = new ArrayList<>();
        for (JsonNode w : a) {
            if (!w.isTextual()) {
                throw new Refused(id, "\"args\" must hold strings, not " + w);
            }
            args.add(w.asText());
        }
        JsonNode ns = req.get("ns");
        if (ns != null && !ns.isNull() && !ns.isTextual()) {
            throw new Refused(id, "\"ns\" must be a namespace name, not " + ns);
        }
        return new CtlRequest(id, ns == null || ns.isNull() ? null : ns.asText(), List.copyOf(args));
    }
}
