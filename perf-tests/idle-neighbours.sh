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

for arg in "$@"; do
    if [[ "$arg" == -h || "$arg" == --help ]]; then
        sed -n '2,/^set -euo pipefail$/{/^set -euo pipefail$/d; s/^# \{0,1\}//; p;}' "${BASH_SOURCE[0]}"
        exit 0
    fi
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"

if [[ -z "${JAVA_HOME:-}" && -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]]; then
    export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"

if [[ -z "${SKIP_BUILD:-}" ]]; then
    # Everything: the runs use the usnet launcher (tools), the driver is in the benchmarks jar.
    mvn -q -B -DskipTests install
    # The launcher rebuilds when a source is newer than its jar, which Maven leaves alone when tools did not change.
    touch tools/target/usnet-tools.jar
fi
jar="${BENCH_JAR:-perf-tests/target/benchmarks.jar}"
[[ -f "$jar" ]] || { echo "idle-neighbours.sh: $jar not found (build failed?)" >&2; exit 1; }

# shellcheck disable=SC2086
exec "$java_bin" -Xmx256m ${JAVA_OPTS:-} -cp "$jar" dev.usnet.perf.IdleNeighbours --usnet "$root/usnet" \
    --file "$root/perf-tests/idle-neighbours.yaml" "$@"
