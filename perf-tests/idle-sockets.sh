#!/usr/bin/env bash
# Scenario benchmark idle-sockets: the heap an idle, connected TCP connection costs. Runs perf-tests/idle-sockets.yaml
# (n clients, each with its own veth to one server namespace) twice with `usnet run` in real time: with connect=1
# every client connects (spread over 2 s), writes one byte and stays idle; with connect=0 the same topology has
# no apps. Once each run is ready and settled, `jcmd PID GC.class_histogram` makes a full GC and lists what is
# live; the difference of the two totals over n is the heap per connection (two sockets, a client's and the
# server's accepted one, and the two app ends that hold them), half of it per socket. Writes
# perf-tests/target/idle-sockets.json, both histograms and the classes that grew most
# (perf-tests/target/idle-sockets/).
#
#   perf-tests/idle-sockets.sh              # n = 10000
#   perf-tests/idle-sockets.sh 1000         # another n
#   SETTLE=20 perf-tests/idle-sockets.sh    # seconds between "usnet: ready" and the measurement (default 15)
#   USNET_JAVA_OPTS=-Xmx4g perf-tests/idle-sockets.sh   # JVM options of both usnet runs
#   SKIP_BUILD=1 perf-tests/idle-sockets.sh # skip the Maven build
# Needs no privileges (everything is in one JVM per run).
set -euo pipefail

# shellcheck source=perf-tests/bench-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-env.sh"
bench_help "$@"

# The runs use the usnet launcher, which reads the installed jars.
bench_build install

n="${1:-10000}"
settle="${SETTLE:-15}"
jcmd_bin="${JAVA_HOME:+$JAVA_HOME/bin/}jcmd"
dir=perf-tests/target/idle-sockets
mkdir -p "$dir"

# run_one CONNECT: starts the run, waits for it to be ready and settled, writes its class histogram (after a full GC)
# to $dir/histo-CONNECT.txt, stops it (SIGTERM, as Ctrl-C: the apps end and the exit summary is printed) and prints
# "LIVE_BYTES CONNECTED": the histogram's total and how many clients ended ok.
run_one() {
    local connect="$1" log="$dir/run-$1.txt" histo="$dir/histo-$1.txt" pid waited=0
    "$root/usnet" run --duration 3600 --param "n=$n" --param "connect=$connect" perf-tests/idle-sockets.yaml \
        >"$log" 2>&1 &
    pid=$!
    until grep -q '^usnet: ready' "$log"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "$bench_name: the run with connect=$connect ended before it was ready; see $log" >&2
            exit 1
        fi
        sleep 1
        waited=$((waited + 1))
        if [[ $waited -gt 1200 ]]; then
            kill -TERM "$pid"
            echo "$bench_name: the run with connect=$connect was not ready after 20 minutes; see $log" >&2
            exit 1
        fi
    done
    sleep "$settle"
    "$jcmd_bin" "$pid" GC.class_histogram >"$histo"
    kill -TERM "$pid"
    wait "$pid" || true
    local live connected
    live=$(awk '$1 == "Total" {print $3}' "$histo")
    connected=$(grep -c 'stream client .*; ok$' "$log" || true)
    echo "$live $connected"
}

read -r base _ < <(run_one 0)
read -r with connected < <(run_one 1)
per_conn=$(( (with - base) / n ))
per_sock=$(( (with - base) / (2 * n) ))

# The classes whose live bytes grew most between the two runs (class name, instances and bytes added per connection).
# (awk, not head, takes the first lines: head would close the pipe early and pipefail end the script.)
awk -v n="$n" '
    FNR == 1 { file++ }
    $1 ~ /^[0-9]+:$/ { key = $4; if (file == 1) { b[key] = $3; bi[key] = $2 } else { w[key] = $3; wi[key] = $2 } }
    END {
        for (k in w) { d = w[k] - b[k]; if (d > 0) printf "%12d %10.2f %10.1f  %s\n", d, (wi[k] - bi[k]) / n, d / n, k }
    }' "$dir/histo-0.txt" "$dir/histo-1.txt" | sort -rn | awk 'NR <= 30' \
    | { echo "  bytes added  inst/conn  bytes/conn  class"; cat; } >"$dir/growth.txt"

cat >perf-tests/target/idle-sockets.json <<EOF
{"benchmark": "idle-sockets", "n": $n, "connected": $connected, "live_heap_without": $base, "live_heap_with": $with,
 "heap_bytes_per_connection": $per_conn, "heap_bytes_per_socket": $per_sock, "settle_s": $settle}
EOF
echo "n=$n connected=$connected: live heap $base B without connections, $with B with them;" \
    "$per_conn B per connection, $per_sock B per socket (half of it)"
echo "classes that grew most: $dir/growth.txt"
head -16 "$dir/growth.txt"
[[ "$connected" -eq "$n" ]] || echo "$bench_name: only $connected of $n clients ended ok; see $dir/run-1.txt" >&2
