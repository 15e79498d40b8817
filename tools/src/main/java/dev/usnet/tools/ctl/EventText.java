package dev.usnet.tools.ctl;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;

/** An event line for a person: {@code 12.345 host link hb1 DOWN carrier=false}, like {@code ip monitor} prints. */
final class EventText {
    private EventText() {}

    static String format(JsonNode ev) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%10.3f", ev.path("time_s").asDouble()));
        if (ev.has("ns")) {
            sb.append(' ').append(ev.get("ns").asText());
        }
        sb.append(' ').append(ev.path("type").asText());
        Iterator<Map.Entry<String, JsonNode>> it = ev.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> f = it.next();
            String k = f.getKey();
            if (k.equals("time_s") || k.equals("ns") || k.equals("type") || k.equals("wall") || f.getValue().isNull()) {
                continue;
            }
            sb.append(' ');
            if (!k.equals("action")) {
                sb.append(k).append('=');
            }
            sb.append(f.getValue().isTextual() ? f.getValue().asText() : f.getValue().toString());
        }
        return sb.toString();
    }
}
