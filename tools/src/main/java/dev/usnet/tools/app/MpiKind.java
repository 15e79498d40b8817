package dev.usnet.tools.app;

import dev.usnet.core.stack.NetStack;
import dev.usnet.tools.cli.UsageException;
import dev.usnet.tools.topology.file.TopologySpec.Mpi;
import dev.usnet.tools.topology.file.YamlMap;
import java.util.Set;

/** {@code kind: mpi}: an MPI job launched from its namespace ({@link MpiApp} reads, checks and runs it). */
public final class MpiKind implements AppKind<Mpi> {
    @Override
    public String name() {
        return "mpi";
    }

    @Override
    public Set<String> keys() {
        return MpiApp.KEYS;
    }

    @Override
    public Class<Mpi> specType() {
        return Mpi.class;
    }

    @Override
    public Order order() {
        return Order.SENDER;
    }

    @Override
    public Mpi read(YamlMap m) {
        return MpiApp.read(m);
    }

    /** A job's hosts are the file's namespaces: it starts only with the file. */
    @Override
    public App create(AppContext c, String ns, Mpi spec) {
        NetStack stack = c.topology().stack(ns);
        if (c.live()) {
            throw new UsageException("mpi apps start only from a topology file");
        }
        return new MpiApp(ns, stack, spec, c.topology());
    }
}
