#!/usr/bin/env bash
# Scenario benchmark tcp-throughput: bulk TCP throughput between two namespaces, side by side:
#   kernel-veth   two kernel netns + veth pair, iperf3 (TSO/GSO on, as veth comes)
#   usnet-1448    two usnet namespaces in one JVM over a usnet veth, real-time scheduler, 1448-byte segments
#   usnet-64k     the same with GSO offload: super-segments of up to 45 MSS (65160 bytes)
# with retransmits, the JVM's CPU and the bytes allocated per segment. Kernel namespaces are
# usnet-tcpbench-<pid>-* on 198.18.70.0/24 only, deleted again by name (also on failure and Ctrl-C).
#
#   perf-tests/tcp-throughput.sh                                    # all three, 3 x 10 s each, usnet on 1 and 2 loops (~3.5 min)
#   perf-tests/tcp-throughput.sh --seconds 5 --reps 1 --paths usnet-64k --loops 1
#   perf-tests/tcp-throughput.sh --paths kernel-veth,kernel-veth-1448,usnet-1448,usnet-1448-swcsum   # extra rows
#   SKIP_BUILD=1 perf-tests/tcp-throughput.sh ...                   # skip the Maven build
#   SKIP_BUILD=1 BENCH_JAR=/tmp/benchmarks.jar perf-tests/tcp-throughput.sh   # a copy of the jar (a concurrent build
#                                                                   # cannot replace it under a long run)
#
# Options: --seconds N (10), --reps N (3), --warmup S (3: settling time of the first usnet run, untimed iperf3 first),
#          --paths a,b,... (kernel-veth,usnet-1448,usnet-64k; extra: kernel-veth-1448, usnet-1448-swcsum),
#          --loops 1|2|1,2 (1,2: usnet namespaces on one shared event loop, and on one loop each),
#          --backlog N (1000: usnet net.core.netdev_max_backlog), --sink skip|read (skip: the usnet receiver discards
#          without copying; read copies like iperf3's recv), --chunk BYTES (131072: the sender's write size),
#          --set key=value (a usnet knob in both namespaces, repeatable, e.g. --set 'net.ipv4.tcp_rmem=4096 131072 1048576'),
#          --json FILE (perf-tests/target/tcp-throughput.json).
# The kernel paths need root (CAP_NET_ADMIN), iproute2, iperf3, timeout (coreutils); the usnet paths need nothing.
set -euo pipefail

# shellcheck source=perf-tests/bench-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-env.sh"
bench_help "$@"

bench_build

bench_jar

# JAVA_OPTS (optional) go to the JVM after these, e.g. JAVA_OPTS=-Dio.netty.recycler.chunkSize=32 (Netty's default) for an A/B.
# recycler.chunkSize=1024: with Netty 4.2.18's default (32) the Recycler allocates queue chunks in real time (README, TCP).
# shellcheck disable=SC2086
exec "$java_bin" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
    -Dio.netty.leakDetection.level=disabled -Dio.netty.recycler.chunkSize=1024 \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn ${JAVA_OPTS:-} \
    -cp "$jar" dev.usnet.perf.tcp.TcpThroughput "$@"
