#!/usr/bin/env bash
# Scenario benchmark virtual-speed: how fast usnet's virtual time runs, against ns-3 on the same TCP scenario, and
# how its cost grows with the number of flows.
#
# Part 1, bulk (perf-tests/virtual-speed.yaml against the ns-3 anchor ns3_bulk.cc): one CUBIC flow for DURATION
# virtual seconds over a 1 Gbit/s link with a 1000-packet tail-drop queue and 1 ms of round-trip delay. R rounds,
# each running ns-3 and then usnet (the order alternates round by round, so drift in the machine's speed hits both).
# Per round: ns-3's wall time of Simulator::Run() and its whole process, the frames ns-3 sent (data + ACKs);
# usnet's wall time of the run alone (its "virtual time ... in X s of wall time" line: topology built, JIT cold),
# of the whole command (./usnet: launcher, JVM start, build of the topology, run, report, exit), the frames it
# simulated (the tx packets of both devices), microseconds of wall time per frame and frames per wall second;
# goodput and retransmissions of both, which show that both simulated the same thing; usnet's steady state (snapshots
# every virtual second: wall us per frame from --steady-from on), ns-3's us per frame over it, and what of usnet's run
# the steady rate does not explain (JVM warm-up, build, start). Then the medians and the ratios ns-3/usnet: ns-3's
# run / usnet's run alone, ns-3's process / usnet's whole command, and per frame in the steady state.
#
# Part 2, flows (perf-tests/virtual-flows.yaml, parameter n): for each N, one ./usnet run of FLOWS_DURATION virtual
# seconds under /usr/bin/time -v; the table: flows, wall s of the run alone, frames at the bottleneck port sw/srv
# (tx + rx), frames sent by all devices, microseconds per bottleneck frame over the whole run and, from snapshots
# every virtual second, in the steady state (wall clock and the simulation thread's CPU, from --steady-from on:
# without the start-up, whose first ARP broadcasts a bridge of N ports floods N times each), maximum RSS, how many
# apps failed
# (a run whose apps did not all succeed, usnet's exit 1, still counts: many flows may starve each other).
#
# Writes perf-tests/target/virtual-speed.json (every run and the summary) and every run's output under
# perf-tests/target/virtual-speed/.
#
#   perf-tests/virtual-speed.sh                                  # 3 rounds of 10 s, then flows 1,10,100,1000 (~6 min)
#   perf-tests/virtual-speed.sh --rounds 5 --flows none          # the ns-3 comparison alone
#   perf-tests/virtual-speed.sh --rounds 0 --flows 1,10,100,1000,10000
#   SKIP_BUILD=1 perf-tests/virtual-speed.sh ...                 # skip the Maven build (tools/target must be current)
#   NS3_ANCHOR=/path/ns3_bulk.cc perf-tests/virtual-speed.sh     # the ns-3 program to compare with (no NS3_ANCHOR: no ns-3 column)
#   USNET_JAVA_OPTS=-Xmx4g perf-tests/virtual-speed.sh --flows 10000   # JVM options of every usnet run (the launcher's)
#
# Options: --rounds N (3; 0 skips part 1), --duration S (10: virtual seconds of part 1, ns-3's --sim too),
#          --flows a,b,... (1,10,100,1000; none skips part 2), --flows-duration S (5), --steady-from S (2: the
#          steady-state columns count from the snapshot at S virtual seconds, after every flow started and the first
#          ARP broadcasts were flooded; it must be below --flows-duration),
#          --flows-file FILE (perf-tests/virtual-flows.yaml: must declare parameter n and have device sw/srv),
#          --json FILE (perf-tests/target/virtual-speed.json), --logs DIR (perf-tests/target/virtual-speed).
#          Relative paths are taken from the repository's root (the script runs there).
# Needs no privileges. The ns-3 column needs g++ and ns-3 3.37 (apt-get install libns3-dev ns3) and the anchor;
# without them it is skipped, said so, and the JSON holds "ns3": null. Part 2 needs /usr/bin/time (GNU time).
# The Maven build is `mvn -q -B -DskipTests package -pl tools -am` (no install: the launcher then finds the build
# current and does not build itself).
set -euo pipefail

# shellcheck source=perf-tests/bench-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-env.sh"
bench_help "$@"

die() {
    echo "$bench_name: $*" >&2
    exit 2
}

rounds=3
duration=10
flows=1,10,100,1000
flows_duration=5
steady_from=2
flows_file=perf-tests/virtual-flows.yaml
json=perf-tests/target/virtual-speed.json
logs=perf-tests/target/virtual-speed
while [[ $# -gt 0 ]]; do
    opt="$1"
    [[ $# -ge 2 ]] || die "$opt needs a value (--help lists the options)"
    case "$opt" in
        --rounds) [[ "$2" =~ ^[0-9]+$ ]] || die "--rounds needs a whole number, got '$2'"; rounds="$2" ;;
        --duration) [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ && "$2" != 0 ]] || die "--duration needs a positive number of seconds, got '$2'"; duration="$2" ;;
        --flows) [[ "$2" == none || "$2" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--flows needs positive whole numbers a,b,... or none, got '$2'"; flows="$2" ;;
        --flows-duration) [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ && "$2" != 0 ]] || die "--flows-duration needs a positive number of seconds, got '$2'"; flows_duration="$2" ;;
        --steady-from) [[ "$2" =~ ^[0-9]+$ ]] || die "--steady-from needs a whole number of virtual seconds, got '$2'"; steady_from="$2" ;;
        --flows-file) flows_file="$2" ;;
        --json) json="$2" ;;
        --logs) logs="$2" ;;
        *) die "unknown option '$opt' (--help lists the options)" ;;
    esac
    shift 2
done
[[ "$rounds" -gt 0 || "$flows" != none ]] || die "--rounds 0 and --flows none leave nothing to run"

# Everything that can be wrong with the output paths or the inputs is found here, before a build or a run.
# (By writing a probe file: as root, test -w says yes to nearly anything.)
check_writable_dir() { # DIR WHAT: DIR exists or can be made, and a file can be written in it
    local probe
    mkdir -p "$1" 2>/dev/null || die "cannot create the directory $1 for $2"
    probe="$(mktemp -p "$1" .virtual-speed-probe.XXXXXX 2>/dev/null)" || die "cannot write in $1 (for $2)"
    rm -f "$probe"
}
[[ "$json" == *.json ]] || die "--json $json: expected a file name ending in .json"
[[ ! -d "$json" ]] || die "--json $json is a directory"
check_writable_dir "$(dirname "$json")" "--json $json"
if [[ -e "$json" ]]; then
    [[ -f "$json" ]] && : 2>/dev/null >>"$json" || die "--json $json exists and cannot be written"
fi
check_writable_dir "$logs" "--logs (every run's output)"
if [[ "$flows" != none ]]; then
    [[ -f "$flows_file" ]] || die "--flows-file $flows_file: no such file (the flows part needs it; --flows none skips that part)"
    grep -qE '^[[:space:]]+n:' "$flows_file" || die "--flows-file $flows_file: declares no parameter n under params:"
    [[ -x /usr/bin/time ]] || die "the flows part needs GNU time at /usr/bin/time (apt-get install time); --flows none skips it"
fi
if [[ "$rounds" -gt 0 ]]; then
    [[ -f perf-tests/virtual-speed.yaml ]] || die "perf-tests/virtual-speed.yaml is missing"
fi

# The ns-3 anchor: a measuring instrument outside the repository; without it (or ns-3) the ns-3 column is skipped.
ns3_anchor="${NS3_ANCHOR:-}"
ns3_bin="$logs/ns3_bulk"
ns3=""
ns3_skip_reason=""
if [[ "$rounds" -gt 0 ]]; then
    if [[ -z "$ns3_anchor" ]]; then
        ns3_skip_reason="NS3_ANCHOR is not set (the path of the ns-3 bulk-transfer program to compare with)"
    elif [[ ! -f "$ns3_anchor" ]]; then
        ns3_skip_reason="no ns-3 anchor at $ns3_anchor (NS3_ANCHOR)"
    elif ! command -v g++ >/dev/null 2>&1; then
        ns3_skip_reason="g++ is not installed"
    elif [[ ! -f /usr/include/ns3/core-module.h ]]; then
        ns3_skip_reason="ns-3 is not installed (no /usr/include/ns3/core-module.h; apt-get install libns3-dev ns3)"
    elif [[ -x "$ns3_bin" && "$ns3_bin" -nt "$ns3_anchor" ]]; then
        ns3="$ns3_bin"
    else
        echo "building the ns-3 anchor $ns3_anchor -> $ns3_bin" >&2
        # Debian's pkg-config files for ns-3 are broken: the libraries by name.
        if g++ -O2 -std=c++17 -o "$ns3_bin" "$ns3_anchor" -lns3-core -lns3-network -lns3-internet -lns3-point-to-point \
            -lns3-applications -lns3-traffic-control -lns3-bridge -lns3-stats 2>"$logs/ns3_bulk-build.log"; then
            ns3="$ns3_bin"
        else
            ns3_skip_reason="the ns-3 anchor did not build (g++ output in $logs/ns3_bulk-build.log)"
        fi
    fi
    if [[ -z "$ns3" ]]; then
        echo "$bench_name: SKIPPING the ns-3 column: $ns3_skip_reason" >&2
    fi
fi

if [[ -z "${SKIP_BUILD:-}" ]]; then
    # Maven 3.8's own Guava calls sun.misc.Unsafe, which Java 24+ warns about (the launcher's switch for it), and its
    # jansi writes colour resets even with style.color=never: stripped, as the launcher does.
    MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow ${MAVEN_OPTS:-}" mvn -q -B -Dstyle.color=never -DskipTests \
        package -pl tools -am 2>&1 | sed -u 's/\x1b\[[0-9;]*[A-Za-z]//g' >&2
    # The launcher builds (with install) when a source is newer than its jar, which the jar plugin leaves alone when
    # tools did not change: mark the build current.
    touch tools/target/usnet-tools.jar
fi
[[ -f tools/target/usnet-tools.jar ]] || die "tools/target/usnet-tools.jar not found (build failed? SKIP_BUILD set without a build?)"
# The launcher's own test for a stale build (it would then build and install during the timed run).
stale="$(find "$root" -path '*/target' -prune -o \( -name '*.java' -o -name 'pom.xml' -o -name '*.properties' \
    -o -path "$root/examples/demo.yaml" \) -newer tools/target/usnet-tools.jar -print -quit)"
[[ -z "$stale" ]] || die "$stale is newer than tools/target/usnet-tools.jar: the launcher would build first and spoil the timing; run without SKIP_BUILD"
# The launcher trains the JVM's ahead-of-time cache once per build, on its first command: here, not in a timed run.
"$root/usnet" --help >/dev/null 2>&1 || true

# --- helpers -------------------------------------------------------------------------------------------------

now() { date +%s.%N; }
# calc EXPR [FORMAT]: awk arithmetic, printed with FORMAT (default %.6g)
calc() { awk "BEGIN { printf \"${2:-%.6g}\", $1 }"; }
# median of the numbers given (an empty list gives null)
median() {
    if [[ $# -eq 0 ]]; then echo null; return; fi
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.10g", v[(NR + 1) / 2]; else printf "%.10g", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
minmax() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f", lo, hi }'; }
# key=value from ns-3's one-line output
ns3_field() { tr ' ' '\n' <"$1" | awk -F= -v k="$2" '$1 == k { print $2; exit }'; }
# usnet's "virtual time V s in W s of wall time" line: W
usnet_run_wall() { sed -nE 's/^usnet: virtual time [0-9.]+ s in ([0-9.]+) s of wall time.*/\1/p' "$1" | tail -1; }
usnet_virtual() { sed -nE 's/^usnet: virtual time ([0-9.]+) s in [0-9.]+ s of wall time.*/\1/p' "$1" | tail -1; }
# The device table ("usnet: devices:", a header, one row per device): sum of tx packets over every device.
device_tx_sum() {
    awk '/^usnet: devices:/ { on = 1; next } on && $2 == "device" { next }
         on && $2 ~ /\// && NF == 10 { s += $8; next } on { on = 0 } END { printf "%d", s }' "$1"
}
# One device's "rx tx" packets ("" when it is not in the table)
device_rx_tx() {
    awk -v d="$2" '/^usnet: devices:/ { on = 1; next } on && $2 == d && NF == 10 { print $4, $8; exit }' "$1"
}
# The speed line's CPU seconds of the simulation thread, and its events
usnet_cpu() { sed -nE 's/^usnet: virtual time .* s of wall time \([0-9.]+x\), ([0-9.]+) s of CPU.*/\1/p' "$1" | tail -1; }
usnet_events() { sed -nE 's/^usnet: virtual time .*, ([0-9]+) events$/\1/p' "$1" | tail -1; }
# From a results file with snapshots: the frames after the snapshot at FROM virtual seconds, and microseconds of
# wall time and of the simulation thread's CPU per such frame ("null null null" without them). The frames are
# DEVICE's rx + tx when one is named (the flows' bottleneck port), else the tx of every device (the bulk run).
steady_cost() { # RESULTS FROM [DEVICE]
    python3 - "$1" "$2" "${3:-}" <<'PY' 2>/dev/null || echo "null null null"
import json, sys
r = json.load(open(sys.argv[1]))
m, snaps, start, dev = r["measured"], r["snapshots"], float(sys.argv[2]), sys.argv[3]
i = next(k for k, s in enumerate(snaps) if s["t_s"] >= start)
def frames(s):
    if not dev:
        return sum(x["tx_packets"] for x in s["devices"])
    d = next(x for x in s["devices"] if x["name"] == dev)
    return d["rx_packets"] + d["tx_packets"]
f = frames(snaps[-1]) - frames(snaps[i])
w = float(m["snapshot_wall_s"][-1]) - float(m["snapshot_wall_s"][i])
c = float(m["snapshot_cpu_s"][-1]) - float(m["snapshot_cpu_s"][i])
print(f, "%.3f" % (w * 1e6 / f), "%.3f" % (c * 1e6 / f))
PY
}
# The stream client's report line: goodput in Mbit/s and retransmissions
usnet_stream() { sed -nE 's/^usnet: [^ ]+: stream client .*, ([0-9.]+) Mbit\/s, .*retrans ([0-9]+),.*/\1 \2/p' "$1" | head -1; }

if [[ "$flows" != none ]] && ! awk -v a="$steady_from" -v b="$flows_duration" 'BEGIN { exit !(a < b) }'; then
    die "--steady-from ($steady_from) must be below --flows-duration ($flows_duration): the steady state needs two snapshots"
fi
usnet_cmd=("$root/usnet" run --clock virtual)
failures=0

# --- part 1: ns-3 and usnet, the bulk flow -----------------------------------------------------------------------

bulk_json=()
ns3_runs=() ns3_procs=() ns3_frames=() u_runs=() u_wholes=() u_frames=() u_retranses=() ns3_retranses=() ratio_run=() ratio_whole=()
u_s_walls=() u_warmups=() ratio_steady=()
run_ns3() { # ROUND
    local out="$logs/ns3-round$1.txt" t0 t1 rc=0
    t0=$(now)
    "$ns3" --rate=1000Mbps --delay=0.5ms --sim="$duration" --queue=1000 >"$out" 2>&1 || rc=$?
    t1=$(now)
    [[ $rc -eq 0 ]] || die "ns-3 failed in round $1 (exit $rc): $out"
    n_run=$(ns3_field "$out" wall_run_s)
    n_frames=$(ns3_field "$out" pkts)
    n_goodput=$(ns3_field "$out" goodput_mbps)
    n_retrans=$(ns3_field "$out" retrans)
    [[ -n "$n_run" && -n "$n_frames" ]] || die "ns-3's output has no wall_run_s= or pkts= (round $1): $out"
    n_proc=$(calc "$t1 - $t0" %.3f)
}
run_usnet_bulk() { # ROUND
    local out="$logs/usnet-round$1.txt" t0 t1 rc=0
    t0=$(now)
    "${usnet_cmd[@]}" --duration "$duration" --param seconds="$duration" perf-tests/virtual-speed.yaml \
        --snapshot-interval 1 --results "$out.json" >"$out" 2>&1 || rc=$?
    t1=$(now)
    [[ $rc -eq 0 ]] || die "usnet failed in round $1 (exit $rc): $out"
    u_run=$(usnet_run_wall "$out")
    u_frame_count=$(device_tx_sum "$out")
    [[ -n "$u_run" && "$u_frame_count" -gt 0 ]] || die "usnet's output has no 'virtual time ... of wall time' line or no device table (round $1): $out"
    read -r u_goodput u_retrans <<<"$(usnet_stream "$out")"
    u_whole=$(calc "$t1 - $t0" %.3f)
    # The steady state, from the snapshot at steady_from virtual seconds on: what a frame costs once the JIT has
    # compiled the packet path (ns-3, compiled ahead of time, has no such start).
    u_s_wall=null u_warmup=null
    if awk -v a="$steady_from" -v b="$duration" 'BEGIN { exit !(a < b) }'; then
        read -r _ u_s_wall _ <<<"$(steady_cost "$out.json" "$steady_from")"
        [[ "$u_s_wall" == null ]] || u_warmup=$(calc "$u_run - $u_s_wall * $u_frame_count / 1e6" %.3f)
    fi
}

if [[ "$rounds" -gt 0 ]]; then
    echo "part 1: ${duration} virtual s of one CUBIC flow at 1 Gbit/s, $rounds rounds$([[ -n "$ns3" ]] && echo ", ns-3 and usnet alternating")"
    printf '%-6s %-6s %10s %10s %10s %9s %9s %10s %10s %9s %9s %10s %9s %9s\n' round first "ns3 run s" "ns3 frames" "usnet run" \
        "whole s" "frames" "us/frame" "frames/s" "run x" "whole x" "steady us" "steady x" "warm-up s"
    for ((r = 1; r <= rounds; r++)); do
        n_run="" n_proc="" n_frames="" n_goodput="" n_retrans=""
        if [[ -z "$ns3" ]]; then
            first=usnet
            run_usnet_bulk "$r"
        elif ((r % 2)); then
            first=ns-3
            run_ns3 "$r"
            run_usnet_bulk "$r"
        else
            first=usnet
            run_usnet_bulk "$r"
            run_ns3 "$r"
        fi
        u_runs+=("$u_run") u_wholes+=("$u_whole") u_frames+=("$u_frame_count") u_retranses+=("${u_retrans:-?}")
        us_per_frame=$(calc "$u_run * 1e6 / $u_frame_count" %.3f)
        frames_per_s=$(calc "$u_frame_count / $u_run" %.0f)
        rr=null rw=null rs=null ns3_obj=null
        if [[ -n "$n_run" ]]; then
            ns3_runs+=("$n_run") ns3_procs+=("$n_proc") ns3_frames+=("$n_frames") ns3_retranses+=("${n_retrans:-?}")
            rr=$(calc "$n_run / $u_run" %.3f) rw=$(calc "$n_proc / $u_whole" %.3f)
            ratio_run+=("$rr") ratio_whole+=("$rw")
            if [[ "$u_s_wall" != null ]]; then
                rs=$(calc "$n_run * 1e6 / $n_frames / $u_s_wall" %.3f)
                ratio_steady+=("$rs")
            fi
            ns3_obj="{\"wall_run_s\": $n_run, \"process_s\": $n_proc, \"frames\": $n_frames, \"us_per_frame\": $(calc "$n_run * 1e6 / $n_frames" %.3f), \"frames_per_wall_s\": $(calc "$n_frames / $n_run" %.0f), \"goodput_mbps\": ${n_goodput:-null}, \"retrans\": ${n_retrans:-null}}"
        fi
        [[ "$u_s_wall" == null ]] || u_s_walls+=("$u_s_wall") u_warmups+=("$u_warmup")
        printf '%-6s %-6s %10s %10s %10s %9s %9s %10s %10s %9s %9s %10s %9s %9s\n' "$r" "$first" "${n_run:--}" "${n_frames:--}" \
            "$u_run" "$u_whole" "$u_frame_count" "$us_per_frame" "$frames_per_s" "${rr/null/-}" "${rw/null/-}" \
            "${u_s_wall/null/-}" "${rs/null/-}" "${u_warmup/null/-}"
        bulk_json+=("{\"round\": $r, \"first\": \"$first\", \"ns3\": $ns3_obj, \"usnet\": {\"run_s\": $u_run, \"whole_s\": $u_whole, \"frames\": $u_frame_count, \"us_per_frame\": $us_per_frame, \"frames_per_wall_s\": $frames_per_s, \"goodput_mbps\": ${u_goodput:-null}, \"retrans\": ${u_retrans:-null}, \"steady_from_s\": $steady_from, \"steady_us_per_frame\": $u_s_wall, \"warmup_s\": $u_warmup}, \"ratio_run\": $rr, \"ratio_whole\": $rw, \"ratio_steady\": $rs}")
    done
    m_u_run=$(median "${u_runs[@]}") m_u_whole=$(median "${u_wholes[@]}") m_u_frames=$(median "${u_frames[@]}")
    echo "medians over $rounds rounds:"
    echo "  usnet: run alone $m_u_run s [$(minmax "${u_runs[@]}")], whole command $m_u_whole s [$(minmax "${u_wholes[@]}")], $m_u_frames frames, $(calc "$m_u_run * 1e6 / $m_u_frames" %.3f) us/frame, $(calc "$m_u_frames / $m_u_run" %.0f) frames/s"
    m_u_s_wall=null m_u_warmup=null m_rs=null
    if [[ ${#u_s_walls[@]} -gt 0 ]]; then
        m_u_s_wall=$(median "${u_s_walls[@]}") m_u_warmup=$(median "${u_warmups[@]}")
        echo "  usnet steady state (from ${steady_from} virtual s on): $m_u_s_wall us/frame [$(minmax "${u_s_walls[@]}")]; the run alone less that rate over all its frames (the JVM's warm-up, the build, the start): $m_u_warmup s"
    fi
    m_n_run=null m_n_proc=null m_n_frames=null m_rr=null m_rw=null
    if [[ ${#ns3_runs[@]} -gt 0 ]]; then
        m_n_run=$(median "${ns3_runs[@]}") m_n_proc=$(median "${ns3_procs[@]}") m_n_frames=$(median "${ns3_frames[@]}")
        m_rr=$(median "${ratio_run[@]}") m_rw=$(median "${ratio_whole[@]}")
        echo "  ns-3:  run $m_n_run s [$(minmax "${ns3_runs[@]}")], process $m_n_proc s, $m_n_frames frames, $(calc "$m_n_run * 1e6 / $m_n_frames" %.3f) us/frame, $(calc "$m_n_frames / $m_n_run" %.0f) frames/s"
        echo "  ns-3/usnet: run $m_rr x [$(minmax "${ratio_run[@]}")] (ns-3's Simulator::Run / usnet's run alone), whole $m_rw x [$(minmax "${ratio_whole[@]}")] (process / whole command)"
        if [[ ${#ratio_steady[@]} -gt 0 ]]; then
            m_rs=$(median "${ratio_steady[@]}")
            echo "  ns-3/usnet per frame in the steady state: $m_rs x [$(minmax "${ratio_steady[@]}")] (ns-3's us/frame over its run / usnet's steady us/frame)"
        fi
    else
        echo "  ns-3:  skipped ($ns3_skip_reason)"
    fi
    # Both simulators are deterministic: every round must have simulated the same thing, or the times compare
    # different work.
    distinct() { printf '%s\n' "$@" | sort -u | paste -sd/; }
    echo "  retransmissions: usnet $(distinct "${u_retranses[@]}")$([[ ${#ns3_retranses[@]} -gt 0 ]] && echo ", ns-3 $(distinct "${ns3_retranses[@]}")")"
    if [[ "$(distinct "${u_frames[@]}")" == */* || ( ${#ns3_frames[@]} -gt 0 && "$(distinct "${ns3_frames[@]}")" == */* ) ]]; then
        echo "$bench_name: WARNING: the rounds simulated different numbers of frames (usnet $(distinct "${u_frames[@]}"), ns-3 $(distinct "${ns3_frames[@]}")): a run was not the same scenario" >&2
        failures=$((failures + 1))
    fi
fi

# --- part 2: flows ---------------------------------------------------------------------------------------------

flows_json=()
if [[ "$flows" != none ]]; then
    echo "part 2: $flows_file, ${flows_duration} virtual s per n"
    printf '%8s %10s %14s %14s %10s %12s %12s %10s %12s\n' flows "run s" "sw/srv frames" "all tx frames" "us/frame" \
        "steady wall" "steady cpu" "max RSS MB" "apps failed"
    IFS=, read -r -a ns <<<"$flows"
    for n in "${ns[@]}"; do
        out="$logs/flows-$n.txt"
        rc=0
        /usr/bin/time -v -o "$out.time" "${usnet_cmd[@]}" --duration "$flows_duration" "$flows_file" --param n="$n" \
            --snapshot-interval 1 --results "$out.json" >"$out" 2>&1 || rc=$?
        rss_kb=$(sed -nE 's/^[[:space:]]*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$out.time")
        rss_mb=$( [[ -n "$rss_kb" ]] && calc "$rss_kb / 1024" %.1f || echo null)
        run_s=$(usnet_run_wall "$out")
        read -r rx tx <<<"$(device_rx_tx "$out" sw/srv)"
        # Exit 1 is a run that completed with apps that failed (e.g. flows starved by the others): its timing
        # counts, and the table says how many failed. Anything else without the speed line is a failed run.
        apps_failed=$(sed -nE 's/^usnet: ([0-9]+) of [0-9]+ apps? failed.*/\1/p' "$out" | head -1)
        apps_failed=${apps_failed:-0}
        if [[ ($rc -ne 0 && $rc -ne 1) || -z "$run_s" || -z "${tx:-}" ]]; then
            failures=$((failures + 1))
            why="exit $rc"
            [[ -n "$run_s" ]] || why="$why, no 'virtual time' line"
            [[ -n "${tx:-}" ]] || why="$why, no device sw/srv in the table"
            printf '%8s  FAILED (%s): %s\n' "$n" "$why" "$out"
            flows_json+=("{\"n\": $n, \"error\": \"$why\", \"log\": \"$out\", \"max_rss_mb\": $rss_mb}")
            continue
        fi
        frames=$((rx + tx))
        all_tx=$(device_tx_sum "$out")
        us=$( ((frames > 0)) && calc "$run_s * 1e6 / $frames" %.3f || echo null)
        # The steady state: from the snapshot at steady_from virtual seconds (every flow started, the first ARP
        # broadcasts flooded) to the last, by the wall clock and the simulation thread's CPU clock per bottleneck frame.
        read -r s_frames s_wall_us s_cpu_us <<<"$(steady_cost "$out.json" "$steady_from" sw/srv)"
        printf '%8s %10s %14s %14s %10s %12s %12s %10s %12s\n' "$n" "$run_s" "$frames" "$all_tx" "$us" "$s_wall_us" "$s_cpu_us" "$rss_mb" "$apps_failed"
        flows_json+=("{\"n\": $n, \"exit\": $rc, \"apps_failed\": $apps_failed, \"virtual_s\": $(usnet_virtual "$out"), \"run_s\": $run_s, \"loop_cpu_s\": $(usnet_cpu "$out"), \"events\": $(usnet_events "$out"), \"bottleneck_rx\": $rx, \"bottleneck_tx\": $tx, \"bottleneck_frames\": $frames, \"all_devices_tx\": $all_tx, \"us_per_frame\": $us, \"steady_from_s\": $steady_from, \"steady_frames\": $s_frames, \"steady_wall_us_per_frame\": $s_wall_us, \"steady_cpu_us_per_frame\": $s_cpu_us, \"max_rss_mb\": $rss_mb}")
    done
fi

# --- JSON --------------------------------------------------------------------------------------------------------

join() { local IFS=,; echo "$*"; }
host_load=$(cut -d' ' -f1-3 /proc/loadavg)
{
    echo "{\"benchmark\": \"virtual-speed\", \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"cpus\": $(nproc), \"load_after\": \"$host_load\","
    echo " \"commit\": \"$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\","
    if [[ "$rounds" -gt 0 ]]; then
        ns3_note=null
        [[ -n "$ns3" ]] || ns3_note="\"$ns3_skip_reason\""
        echo " \"bulk\": {\"virtual_s\": $duration, \"rounds\": [$(join "${bulk_json[@]}")],"
        echo "  \"ns3_skipped\": $ns3_note,"
        echo "  \"median\": {\"usnet_run_s\": $m_u_run, \"usnet_whole_s\": $m_u_whole, \"usnet_frames\": $m_u_frames, \"ns3_run_s\": $m_n_run, \"ns3_process_s\": $m_n_proc, \"ns3_frames\": $m_n_frames, \"ratio_run\": $m_rr, \"ratio_whole\": $m_rw, \"usnet_steady_us_per_frame\": $m_u_s_wall, \"usnet_warmup_s\": $m_u_warmup, \"ratio_steady\": $m_rs}},"
    else
        echo " \"bulk\": null,"
    fi
    if [[ "$flows" != none ]]; then
        echo " \"flows\": {\"file\": \"$flows_file\", \"virtual_s\": $flows_duration, \"runs\": [$(join "${flows_json[@]}")]}"
    else
        echo " \"flows\": null"
    fi
    echo "}"
} >"$json"
echo "wrote $json (logs in $logs)"
[[ $failures -eq 0 ]] || die "$failures run(s) failed (above)"
