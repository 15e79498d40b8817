package dev.usnet.tools.app;

import dev.usnet.tools.topology.file.TopologySpec;
import java.util.Set;

/**
 * An {@link AppKind} whose name, keys, entry type and order are fixed when it is made, so a kind writes only how
 * it reads an entry and makes its app.
 *
 * @param <S> the entry the kind reads
 */
abstract class DeclaredAppKind<S extends TopologySpec.App> implements AppKind<S> {
    private final String name;
    private final Set<String> keys;
    private final Class<S> specType;
    private final Order order;

    DeclaredAppKind(String name, Set<String> keys, Class<S> specType, Order order) {
        this.name = name;
        this.keys = keys;
        this.specType = specType;
        this.order = order;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final Set<String> keys() {
        return keys;
    }

    @Override
    public final Class<S> specType() {
        return specType;
    }

    @Override
    public final Order order() {
        return order;
    }
}
