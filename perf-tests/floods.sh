#!/usr/bin/env bash
# Scenario benchmark floods: six hostile floods in virtual time (deterministic, seeded), each at a namespace built
# for it with a legitimate flow beside it (dev.usnet.perf.floods.Floods):
#   mac-flood        10^6 random source MACs into a bridge port (fdb_max_learned)
#   syn-flood        10^6 spoofed SYNs at a listener with backlog 128 (SYN cookies)
#   fragment-flood   10^6 incomplete, tiny and overlapping fragments at a host (ipfrag_high_thresh, ipfrag_time)
#   neighbour-flood  10^5 ARP requests from random sources and 10^5 packets to unresolved next hops at a router
#                    (gc_thresh1/2/3, unres_qlen_bytes)
#   icmp-storm       traffic to an unreachable prefix at 1 GbE line rate (1.488 Mpps) for 2 s (icmp_msgs_per_sec)
#   conntrack-syn-flood  10^6 spoofed SYNs at a port published by DNAT through a NAT router, beside an established
#                    stream and new connections through the same DNAT (nf_conntrack_max 65536, early_drop)
# Per flood: peak retained heap above the pre-flood baseline (full-GC samples), drops by reason, the bounded state,
# the legitimate flow's numbers and whether it stayed within the stated bound. Writes perf-tests/target/floods.json.
#
#   perf-tests/floods.sh              # full size
#   perf-tests/floods.sh 0.1          # every flood at a tenth of its size (a quick look)
#   perf-tests/floods.sh 1 conntrack-syn-flood   # only the floods named (comma-separated)
#   SKIP_BUILD=1 perf-tests/floods.sh # skip the Maven build
set -euo pipefail

# shellcheck source=perf-tests/bench-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-env.sh"
bench_help "$@"

bench_build
bench_jar

mkdir -p perf-tests/target
# shellcheck disable=SC2086
"$java_bin" -Xmx"${XMX:-2g}" -XX:+UseG1GC --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
    -Dio.netty.leakDetection.level=disabled -Dorg.slf4j.simpleLogger.defaultLogLevel=warn ${JAVA_OPTS:-} \
    -cp "$jar" dev.usnet.perf.floods.Floods perf-tests/target/floods.json "${1:-1}" ${2:+"$2"}
