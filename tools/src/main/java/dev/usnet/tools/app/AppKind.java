package dev.usnet.tools.app;

import dev.usnet.tools.topology.file.TopologySpec;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/**
 * One kind of app an {@code apps:} entry can name ({@code kind: ping}, ...): its keys, how an entry of it is read and
 * how the running app is made. {@link AppKinds} lists every kind; the reader, the runs and {@code usnet ctl app start}
 * know the kinds only through it, so a new kind is its own file plus its line there.
 *
 * @param <S> the entry the kind reads
 */
public interface AppKind<S extends TopologySpec.App> {
    /** When an app of a kind starts and stops relative to the others of its run. */
    public enum Order {
        /**
         * Receives only: starts before every sender (nothing it should count is refused for want of a socket) and
         * stops last, after what is still in flight had time to arrive.
         */
        RECEIVER,
        /**
         * A TCP client with its server ({@link TcpApp}): the server listens with the receivers, the client starts
         * with the senders; at the end the client stops first, gracefully, and its server follows it.
         */
        CLIENT_SERVER,
        /** Sends, or runs on its own: starts once receivers and servers are there, stops before the receivers. */
        SENDER
    }

    /** The word after {@code kind:}, and the app's kind everywhere it is shown (results, ctl, metrics). */
    String name();

    /** Every key an entry of this kind may have, {@code kind} included. */
    Set<String> keys();

    /** The entry type {@link #read} returns. */
    Class<S> specType();

    /** Its place in the start and stop order. */
    Order order();

    /**
     * Reads an entry whose {@code kind:} is this one: refuses keys not in {@link #keys()}, reads the others. Null when
     * something is wrong, every problem reported with its line.
     */
    S read(YamlMap m);

    /** Makes the app of {@code spec} in namespace {@code ns}; not started. */
    App create(AppContext c, String ns, S spec);
}
