#!/usr/bin/env bash
# Scenario benchmark tap-throughput: iperf3 TCP throughput, ping RTT and usnet CPU, side by side, over
#   kernel-veth, kernel-bridge, usnet-bridge-gso, usnet-bridge, usnet-router-gso, usnet-router
# between two kernel network namespaces it creates (usnet-bench-<pid>-*, addresses in 198.18.0.0/15 only)
# and deletes again (also on Ctrl-C).
#
#   perf-tests/tap-throughput.sh                                   # all six paths, 3 x 10 s each (~4 min)
#   perf-tests/tap-throughput.sh --seconds 5 --reps 1 --paths kernel-bridge,usnet-bridge-gso
#   perf-tests/tap-throughput.sh --loops 2                         # TAP B on a second event loop
#   SKIP_BUILD=1 perf-tests/tap-throughput.sh ...                  # skip the Maven build
#
# Options: --seconds N (10), --reps N (3), --warmup S (2, untimed iperf3 first), --paths a,b,... (all), --json FILE (perf-tests/target/tap-throughput.json),
#          --loops 1|2 (1: NetStack and both TAPs on one epoll loop), --pings N (200, at 10 ms),
#          --busy-poll US (50: microseconds the loop keeps polling after activity before it sleeps; 0: off).
# Needs root (CAP_NET_ADMIN), /dev/net/tun, iproute2, iperf3, ping (iputils), timeout (coreutils).
set -euo pipefail

# shellcheck source=perf-tests/bench-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-env.sh"
bench_help "$@"

for tool in ip iperf3 ping timeout; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "tap-throughput.sh: '$tool' is not installed (apt-get install iproute2 iperf3 iputils-ping coreutils)" >&2
        exit 2
    fi
done

bench_build

bench_jar

# recycler.chunkSize=1024: with Netty 4.2.18's default (32) the Recycler allocates queue chunks in real time (README, TCP).
exec "$java_bin" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
    -Dio.netty.leakDetection.level=disabled -Dio.netty.recycler.chunkSize=1024 \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -cp "$jar" dev.usnet.perf.tap.TapThroughput "$@"
