#!/usr/bin/env bash
# Builds the JMH uber-jar and runs the usnet micro-benchmarks.
#
#   perf-tests/run-jmh.sh                          # all benchmarks, quick default config (below)
#   perf-tests/run-jmh.sh Ipv4ForwardBench -p ipLen=1500 -p shared=false
#   perf-tests/run-jmh.sh -f 1 -wi 1 -w 200ms -i 1 -r 200ms -prof gc   # smoke run
#   SKIP_BUILD=1 perf-tests/run-jmh.sh -l          # list benchmarks without rebuilding
#
# With no arguments it runs: -f 1 -wi 3 -w 1s -i 5 -r 1s -prof gc -rf json -rff perf-tests/target/jmh.json
# Any arguments are passed to JMH unchanged and replace that default entirely.
set -euo pipefail

# shellcheck source=perf-tests/bench-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-env.sh"

bench_build

bench_jar

if [[ $# -eq 0 ]]; then
    set -- -f 1 -wi 3 -w 1s -i 5 -r 1s -prof gc -rf json -rff perf-tests/target/jmh.json
fi

# JMH forks inherit these; recycler.chunkSize=1024: Netty 4.2.18's default (32) makes the Recycler allocate (README, TCP);
# maxCapacityPerThread=65536: a flood to 10 000 ports has more clones in flight than the default 4096 keeps (README,
# idle-neighbours). Both as the usnet launcher sets them.
exec "$java_bin" --enable-native-access=ALL-UNNAMED -Dio.netty.leakDetection.level=disabled \
    -Dio.netty.recycler.chunkSize=1024 -Dio.netty.recycler.maxCapacityPerThread=65536 -jar "$jar" "$@"
