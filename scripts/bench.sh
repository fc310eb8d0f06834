# shellcheck shell=bash
# Benchmarks on real services. Each prints a table and writes JSON with
# the raw limit measured in the same run.

NCMP_BENCH_SCENARIOS=(ingest)

bench_list() { printf '%s' "${NCMP_BENCH_SCENARIOS[*]}"; }

bench_main() {
    local scenario=${1:-}
    [ -n "$scenario" ] || die "usage: ./run bench <scenario> [--json FILE] (scenarios: $(bench_list))"
    shift
    case " ${NCMP_BENCH_SCENARIOS[*]} " in
    *" $scenario "*) ;;
    *) die "unknown benchmark '$scenario' (scenarios: $(bench_list))" ;;
    esac
    "bench_$scenario" "$@"
}
