#!/usr/bin/env bash
# Scenario benchmark ns3-flows: ns-3's cost per bottleneck frame as the flows multiply, on the scenario of
# perf-tests/virtual-flows-routed.yaml, as a reference for usnet's flows table (perf-tests/virtual-speed.sh with
# --flows-file perf-tests/virtual-flows-routed.yaml).
#
# perf-tests/ns3_flows.cc is built with g++ against the installed ns-3 (3.37, Debian's libns3-dev) into
# perf-tests/target/ns3_flows (again only when the source is newer), then run once per N for 5 simulated seconds:
# N clients, each its own 10 Gbit/s, 50 us link to a router, which forwards over a 1 Gbit/s, 500 us link with a
# 1000-packet DropTail queue to one server; one CUBIC bulk flow per client, the starts spread over 1 s. Per N, the
# table: flows, wall s of Simulator::Run(), frames at the router's bottleneck device (serialized onto the wire +
# received from it), us of wall time per such frame over the whole run and in the steady state (from the event at
# 2 simulated seconds to the end), max RSS of the process; then goodput, drops and how many flows delivered nothing.
# Building the topology and the routing tables is timed apart (build s), outside the run.
#
#   perf-tests/ns3-flows.sh                                  # flows 1,10,100,1000 (~3 min on a 2-vCPU VM)
#   perf-tests/ns3-flows.sh --flows 10000 --routing static --timeout 900
#   perf-tests/ns3-flows.sh --flows 1000 --routing static --json perf-tests/target/ns3-flows-static.json
#
# Options: --flows a,b,... (1,10,100,1000), --routing global|static (global: ns-3's global route manager, a route
#          to every /30 on every node; static: default routes to the router, as the YAML; the simulated traffic is
#          the same), --duration S (5), --steady-from S (2), --timeout S (0: none; a run still going after S wall
#          seconds is stopped, and its last progress line says how far it got), --json FILE
#          (perf-tests/target/ns3-flows.json), --logs DIR (perf-tests/target/ns3-flows: every run's output).
#          Relative paths are taken from the repository's root (the script runs there).
# Needs g++ and ns-3 3.37 (apt-get install g++ libns3-dev); without them it says so and exits 0 having run nothing.
# Needs no privileges and no network: ns-3 simulates everything in its own process.
set -euo pipefail

# shellcheck source=perf-tests/bench-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-env.sh"
bench_help "$@"

die() {
    echo "$bench_name: $*" >&2
    exit 2
}

flows=1,10,100,1000
routing=global
duration=5
steady_from=2
timeout_s=0
json=perf-tests/target/ns3-flows.json
logs=perf-tests/target/ns3-flows
while [[ $# -gt 0 ]]; do
    opt="$1"
    [[ $# -ge 2 ]] || die "$opt needs a value (--help lists the options)"
    case "$opt" in
        --flows) [[ "$2" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--flows needs positive whole numbers a,b,..., got '$2'"; flows="$2" ;;
        --routing) [[ "$2" == global || "$2" == static ]] || die "--routing needs global or static, got '$2'"; routing="$2" ;;
        --duration) [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ && "$2" != 0 ]] || die "--duration needs a positive number of seconds, got '$2'"; duration="$2" ;;
        --steady-from) [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--steady-from needs a number of simulated seconds, got '$2'"; steady_from="$2" ;;
        --timeout) [[ "$2" =~ ^[0-9]+$ ]] || die "--timeout needs a whole number of wall seconds (0: none), got '$2'"; timeout_s="$2" ;;
        --json) json="$2" ;;
        --logs) logs="$2" ;;
        *) die "unknown option '$opt' (--help lists the options)" ;;
    esac
    shift 2
done
awk -v a="$steady_from" -v b="$duration" 'BEGIN { exit !(a < b) }' ||
    die "--steady-from ($steady_from) must be below --duration ($duration)"
awk -v d="$duration" 'BEGIN { exit !(d >= 1) }' ||
    die "--duration ($duration) must be at least 1 s: the clients' starts are spread over 1 s"
[[ "$json" == *.json ]] || die "--json $json: expected a file name ending in .json"
[[ ! -d "$json" ]] || die "--json $json is a directory"
mkdir -p "$(dirname "$json")" "$logs" 2>/dev/null || die "cannot create $(dirname "$json") or $logs"

src=perf-tests/ns3_flows.cc
bin=perf-tests/target/ns3_flows
[[ -f "$src" ]] || die "$src is missing"
if ! command -v g++ >/dev/null 2>&1; then
    echo "$bench_name: SKIPPED: g++ is not installed (apt-get install g++)" >&2
    exit 0
fi
if [[ ! -f /usr/include/ns3/core-module.h ]]; then
    echo "$bench_name: SKIPPED: ns-3 is not installed (no /usr/include/ns3/core-module.h; apt-get install libns3-dev)" >&2
    exit 0
fi
if [[ ! -x "$bin" || "$src" -nt "$bin" ]]; then
    echo "building $src -> $bin" >&2
    mkdir -p "$(dirname "$bin")"
    # Debian's pkg-config files for ns-3 are broken: the libraries by name.
    g++ -O2 -std=c++17 -o "$bin" "$src" -lns3-core -lns3-network -lns3-internet -lns3-point-to-point \
        -lns3-applications -lns3-traffic-control -lns3-bridge -lns3-stats 2>"$logs/build.log" ||
        die "$src did not build (g++ output in $logs/build.log)"
fi

# get KEY: the value of KEY in $result, a run's one key=value result line
get() { tr ' ' '\n' <<<"$result" | awk -F= -v k="$1" '$1 == k { print $2; exit }'; }
calc() { awk "BEGIN { printf \"${2:-%.6g}\", $1 }"; }

echo "ns-3 $(basename "$bin"): ${duration} simulated s per N, routing $routing, steady state from ${steady_from} s"
printf '%8s %9s %9s %12s %10s %12s %11s %10s %8s %9s\n' flows "build s" "run s" "frames" "us/frame" \
    "steady us/f" "max RSS MB" "goodput" drops "no data"
runs_json=()
failures=0
IFS=, read -r -a ns <<<"$flows"
for n in "${ns[@]}"; do
    out="$logs/flows-$n-$routing.txt"
    cmd=("$bin" --n="$n" --sim="$duration" --steadyFrom="$steady_from" --routing="$routing" --progress=0.5)
    rc=0
    if [[ "$timeout_s" -gt 0 ]]; then
        timeout --signal=TERM "$timeout_s" "${cmd[@]}" >"$out" 2>&1 || rc=$?
    else
        "${cmd[@]}" >"$out" 2>&1 || rc=$?
    fi
    if [[ $rc -ne 0 ]] || ! grep -q '^sim=ns3 ' "$out"; then
        failures=$((failures + 1))
        last=$(grep '^progress:' "$out" | tail -1 || true)
        why="exit $rc$([[ $rc -eq 124 ]] && echo ", stopped after --timeout $timeout_s s")"
        printf '%8s  FAILED (%s)%s: %s\n' "$n" "$why" "${last:+, last $last}" "$out"
        runs_json+=("{\"n\": $n, \"routing\": \"$routing\", \"error\": \"$why\", \"last_progress\": \"${last#progress: }\", \"log\": \"$out\"}")
        continue
    fi
    result=$(grep '^sim=ns3 ' "$out")
    rss_mb=$(calc "$(get max_rss_kb) / 1024" %.1f)
    drops=$(($(get queue_drops) + $(get tc_drops)))
    printf '%8s %9s %9s %12s %10s %12s %11s %10s %8s %9s\n' "$n" "$(get build_s)" "$(get wall_run_s)" \
        "$(get bottleneck_frames)" "$(get us_per_frame)" "$(get steady_wall_us_per_frame)" "$rss_mb" \
        "$(get goodput_mbps)" "$drops" "$(get flows_without_data)"
    runs_json+=("{\"n\": $n, \"routing\": \"$routing\", \"build_s\": $(get build_s), \"run_s\": $(get wall_run_s), \"cpu_run_s\": $(get cpu_run_s), \"events\": $(get events), \"bottleneck_tx\": $(get bottleneck_tx), \"bottleneck_rx\": $(get bottleneck_rx), \"bottleneck_frames\": $(get bottleneck_frames), \"us_per_frame\": $(get us_per_frame), \"steady_from_s\": $(get steady_from_s), \"steady_wall_s\": $(get steady_wall_s), \"steady_frames\": $(get steady_frames), \"steady_wall_us_per_frame\": $(get steady_wall_us_per_frame), \"steady_cpu_us_per_frame\": $(get steady_cpu_us_per_frame), \"queue_drops\": $(get queue_drops), \"tc_drops\": $(get tc_drops), \"goodput_mbps\": $(get goodput_mbps), \"rx_bytes\": $(get rx_bytes), \"flows_without_data\": $(get flows_without_data), \"max_rss_mb\": $rss_mb}")
done

join() { local IFS=,; echo "$*"; }
{
    echo "{\"benchmark\": \"ns3-flows\", \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"cpus\": $(nproc), \"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\","
    echo " \"commit\": \"$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\", \"program\": \"$src\","
    echo " \"virtual_s\": $duration, \"steady_from_s\": $steady_from, \"routing\": \"$routing\","
    echo " \"frames\": \"router's bottleneck device: PhyTxEnd (data serialized) + PhyRxEnd (ACKs received)\","
    echo " \"runs\": [$(join "${runs_json[@]}")]}"
} >"$json"
echo "wrote $json (logs in $logs)"
[[ $failures -eq 0 ]] || die "$failures run(s) failed (above)"
