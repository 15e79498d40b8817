package dev.usnet.tools.ctl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/** A connection to a daemon's control socket: requests out, reply lines in (docs/ctl.md). Blocking; one thread. */
public final class CtlClient implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SocketChannel ch;
    private final BufferedReader in;
    private final OutputStream out;
    private int nextId = 1;

    private CtlClient(SocketChannel ch) {
        this.ch = ch;
        this.in = new BufferedReader(new InputStreamReader(Channels.newInputStream(ch), StandardCharsets.UTF_8));
        this.out = Channels.newOutputStream(ch);
    }

    public static CtlClient connect(Path socket) throws IOException {
        SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            c.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            c.close();
            throw e;
        }
        return new CtlClient(c);
    }

    /** Sends one request ({@code ns} may be null) and returns its reply object. */
    public JsonNode request(String ns, List<String> args) throws IOException {
        send(ns, args);
        JsonNode r = read();
        if (r == null) {
            throw new IOException("the daemon closed the connection without answering");
        }
        return r;
    }

    /** Sends one request without waiting for its reply. */
    public void send(String ns, List<String> args) throws IOException {
        ObjectNode o = JSON.createObjectNode();
        o.put("usnet_ctl", ControlPlane.PROTOCOL);
        o.put("id", nextId++);
        if (ns != null) {
            o.put("ns", ns);
        }
        ArrayNode a = o.putArray("args");
        args.forEach(a::add);
        sendRaw(JSON.writeValueAsString(o));
    }

    /** Sends {@code line} as it is (for tests of malformed requests). */
    public void sendRaw(String line) throws IOException {
        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** The next line from the daemon as JSON, or null at the end of the stream. */
    public JsonNode read() throws IOException {
        String line = in.readLine();
        return line == null ? null : JSON.readTree(line);
    }

    /**
     * Sends a request whose answer is a stream of bytes ({@code capture start NS/DEV -}): reads its reply line and,
     * when it is ok, copies every byte that follows into {@code sink}, flushing as they come, until the daemon
     * hangs up or {@code sink} fails (its reader went away: tcpdump -c exited). Returns the reply line. Not to be
     * mixed with {@link #read()} on one connection.
     */
    public JsonNode requestBytes(String ns, List<String> args, OutputStream sink) throws IOException {
        send(ns, args);
        // Read the reply line a byte at a time: a buffered reader would swallow (and decode) the bytes after it.
        java.io.InputStream raw = Channels.newInputStream(ch);
        java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
        int b;
        while ((b = raw.read()) != -1 && b != '\n') {
            line.write(b);
        }
        if (line.size() == 0) {
            throw new IOException("the daemon closed the connection without answering");
        }
        JsonNode r = JSON.readTree(line.toString(StandardCharsets.UTF_8));
        if (!r.path("ok").asBoolean()) {
            return r;
        }
        byte[] buf = new byte[1 << 16];
        int n;
        while ((n = raw.read(buf)) > 0) {
            try {
                sink.write(buf, 0, n);
                sink.flush();
            } catch (IOException sinkGone) {
                return r;
            }
        }
        return r;
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
