# shellcheck shell=bash
# Sourced by the scenario and JMH scripts of perf-tests, not run: makes the repository root the working directory,
# finds java ($java_bin), and offers bench_help, bench_build and bench_jar, so each script is only its own options.

bench_script="${BASH_SOURCE[1]}"
bench_name="$(basename "$bench_script")"

# bench_help "$@": with -h or --help anywhere, prints the calling script's header comment (its usage) and exits,
# before any build or privilege is needed.
bench_help() {
    local arg
    for arg in "$@"; do
        if [[ "$arg" == -h || "$arg" == --help ]]; then
            sed -n '2,/^set -euo pipefail$/{/^set -euo pipefail$/d; s/^# \{0,1\}//; p;}' "$bench_script"
            exit 0
        fi
    done
}

root="$(cd "$(dirname "$bench_script")/.." && pwd)"
cd "$root"

if [[ -z "${JAVA_HOME:-}" && -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]]; then
    export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
# shellcheck disable=SC2034 # used by the scripts that source this
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"

# bench_build [install]: unless SKIP_BUILD is set, builds the benchmarks jar; with "install", every module too (for
# scenarios that run the usnet launcher, which reads the installed jars).
bench_build() {
    if [[ -n "${SKIP_BUILD:-}" ]]; then
        return 0
    fi
    if [[ "${1:-}" == install ]]; then
        mvn -q -B -DskipTests install
        # The launcher rebuilds when a source is newer than its jar, which Maven leaves alone when tools did not change.
        touch tools/target/usnet-tools.jar
    else
        mvn -q -B -DskipTests package -pl perf-tests -am
    fi
}

# bench_jar: sets $jar to the benchmarks jar (BENCH_JAR overrides) and stops with a message when it is missing.
bench_jar() {
    jar="${BENCH_JAR:-perf-tests/target/benchmarks.jar}"
    if [[ ! -f "$jar" ]]; then
        echo "$bench_name: $jar not found (build failed?)" >&2
        exit 1
    fi
}
