package dev.usnet.tools.topology;

/**
 * A test topology shared by the tests of many hosts on one bridge: {@code n} containers on host/br0, each pinging
 * the server on the same bridge, all starting at once; the server's neighbour table holds {@code thresh3} entries
 * (net.ipv4.neigh.default.gc_thresh3, Linux's 1024 by default).
 */
final class PingersOnABridge {
    static final String FILE = """
            version: 1
            params:
              n: {default: 2, doc: containers}
              thresh3: {default: 1024, doc: "the server's gc_thresh3"}
            namespaces:
              host:
                devices:
                  - {name: br0, kind: bridge}
              server:
                knobs:
                  net.ipv4.neigh.default.gc_thresh3: ${thresh3}
                devices:
                  - name: eth0
                    kind: veth
                    addresses: [198.18.0.1/16]
                    peer: {namespace: host, name: hs, master: br0}
              c${i}:
                count: ${n}
                devices:
                  - name: eth0
                    kind: veth
                    addresses: ["198.18.${1 + i/250}.${1 + i%250}/16"]
                    peer: {namespace: host, name: "h${i}", master: br0}
                apps:
                  - {kind: ping, to: 198.18.0.1}
            """;

    private PingersOnABridge() {
    }
}
