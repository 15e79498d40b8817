#!/usr/bin/env bash
# Scenario benchmark idle-neighbours: a TCP stream and a ping through a bridge with n idle containers on it
# (perf-tests/idle-neighbours.yaml), each run a `usnet run` of its own, n alternating round by round. Prints
# medians and min-max per n and the change against the smallest n; writes perf-tests/target/idle-neighbours.json
# (every run and the summary) and each run's results and output under perf-tests/target/idle-neighbours/.
#
#   perf-tests/idle-neighbours.sh                                  # n = 0 and 10000, 3 rounds of 10 s, stream and ping
#   perf-tests/idle-neighbours.sh --n 0,1000,10000 --rounds 5 --seconds 20
#   perf-tests/idle-neighbours.sh --modes ping --rounds 5          # the ping alone (the bridge's own latency)
#   perf-tests/idle-neighbours.sh --clock virtual --rate 1gbit     # virtual time, the stream's link at 1 Gbit/s
#   USNET_JAVA_OPTS=-Xmx2g perf-tests/idle-neighbours.sh ...       # JVM options of every usnet run
#   SKIP_BUILD=1 perf-tests/idle-neighbours.sh ...                 # skip the Maven build
#
# Options: --n a,b,... (0,10000), --rounds N (3), --seconds S (10), --modes stream,ping, --clock real|virtual (real),
#          --rate R (1gbit: the netem rate of sa0's link in virtual time), --json FILE (perf-tests/target/idle-neighbours.json).
# Needs no privileges (everything is in one JVM per run).
set -euo pipefail

# shellcheck source=perf-tests/bench-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-env.sh"
bench_help "$@"

# Everything: the runs use the usnet launcher (tools), the driver is in the benchmarks jar.
bench_build install
bench_jar

# shellcheck disable=SC2086
exec "$java_bin" -Xmx256m ${JAVA_OPTS:-} -cp "$jar" dev.usnet.perf.IdleNeighbours --usnet "$root/usnet" \
    --file "$root/perf-tests/idle-neighbours.yaml" "$@"
