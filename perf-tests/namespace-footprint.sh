#!/usr/bin/env bash
# Scenario benchmark namespace-footprint: N idle containers, each a namespace with one veth whose other end is a
# port of br0 in a host namespace, built in-process on one virtual-time scheduler (dev.usnet.perf.NamespaceFootprint).
# For each N (its own JVM): retained heap per container after full GCs, build and delete time, timers pending
# while idle, wall time of one idle virtual minute. Writes perf-tests/target/namespace-footprint.json and, per N,
# the top of the class histogram to perf-tests/target/namespace-footprint-histo-N.txt.
#
#   perf-tests/namespace-footprint.sh                   # N = 1000 and 10000 with -Xmx4g
#   perf-tests/namespace-footprint.sh 1000 10000 100000 # any list of N
#   XMX=8g perf-tests/namespace-footprint.sh 100000     # the heap for every JVM (default 4g)
#   SKIP_BUILD=1 perf-tests/namespace-footprint.sh ...  # skip the Maven build
# A JVM that runs out of heap is reported as {"n": N, "error": "..."} and the others still run.
set -euo pipefail

# shellcheck source=perf-tests/bench-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-env.sh"
bench_help "$@"

bench_build
bench_jar

ns=("$@")
[[ ${#ns[@]} -gt 0 ]] || ns=(1000 10000)
mkdir -p perf-tests/target
out=perf-tests/target/namespace-footprint.json
runs=()
for n in "${ns[@]}"; do
    one="perf-tests/target/namespace-footprint-$n.json"
    rm -f "$one"
    # shellcheck disable=SC2086
    if "$java_bin" -Xmx"${XMX:-4g}" -XX:+UseG1GC --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
        -Dio.netty.leakDetection.level=disabled -Dorg.slf4j.simpleLogger.defaultLogLevel=warn ${JAVA_OPTS:-} \
        -cp "$jar" dev.usnet.perf.NamespaceFootprint "$n" "$one" "perf-tests/target/namespace-footprint-histo-$n.txt"; then
        runs+=("$(cat "$one")")
    else
        runs+=("{\"n\": $n, \"max_heap\": \"${XMX:-4g}\", \"error\": \"JVM failed (exit $?; out of heap?)\"}")
    fi
done
{
    echo '{"benchmark": "namespace-footprint", "runs": ['
    for k in "${!runs[@]}"; do
        sep=,; [[ $k -eq $((${#runs[@]} - 1)) ]] && sep=
        echo "  ${runs[$k]}$sep"
    done
    echo ']}'
} > "$out"
echo "wrote $out"
