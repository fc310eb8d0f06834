# shellcheck shell=bash
# ./run test: build, start private services, run every suite, stop them.
#
# The test instance lives in .local/test on its own ports, and is made
# anew on each run (a fresh cluster and broker take a few seconds and make
# every run start from the same state).

_test_results=()
_test_failed=0

# test_suite NAME COMMAND...: run one suite, record a one-line result.
test_suite() {
    local name=$1 log rc start secs
    shift
    log="$NCMP_INSTANCE_DIR/logs/suite-$name.log"
    info "suite $name"
    start=$(date +%s)
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    secs=$(($(date +%s) - start))
    if [ "$rc" -eq 0 ]; then
        _test_results+=("PASS  $name (${secs}s)")
    else
        _test_results+=("FAIL  $name (${secs}s, exit $rc; log $log)")
        _test_failed=$((_test_failed + 1))
    fi
}

# script_tests: every tests/scripts/test_*.sh; fails when one fails.
script_tests() {
    local t rc=0
    for t in "$NCMP_ROOT"/tests/scripts/test_*.sh; do
        bash "$t" || rc=1
    done
    return $rc
}

test_main() {
    local sanitize=1 fast=0 arg passed total
    for arg in "$@"; do
        case "$arg" in
        --fast) sanitize=0 fast=1 ;;
        *) die "test: unknown option '$arg' (options: --fast)" ;;
        esac
    done
    deps_ensure build services lint
    instance_fresh test "${NCMP_TEST_PG_PORT:-25532}" "${NCMP_TEST_BROKER_PORT:-29192}" \
        "${NCMP_TEST_BROKER_CONTROLLER_PORT:-29193}"
    mkdir -p "$NCMP_INSTANCE_DIR/logs"

    info "building (warnings are errors)"
    build_project release
    local bin_release=$NCMP_BIN bin_asan=
    if [ $sanitize -eq 1 ]; then
        info "building with ASan+UBSan"
        build_project asan
        bin_asan=$NCMP_BIN
    fi

    test_suite format format_sources --check
    test_suite unit "$bin_release/tests/unit/ncmp-unit-tests" --jobs 2
    test_suite conformance "$bin_release/tests/conformance/ncmp-conformance-tests" --jobs 2
    # every fuzz target: its seed corpus and random mutations of it (a few
    # seconds for all of them)
    fuzz_replay "$bin_release" "" 50000

    pg_start
    kafka_start
    export NCMP_TEST_DB_URL NCMP_TEST_KAFKA NCMP_TEST_LOG_DIR="$NCMP_INSTANCE_DIR/logs"
    NCMP_TEST_DB_URL=$(pg_url)
    NCMP_TEST_KAFKA=$(kafka_bootstrap)
    NCMP_BUILD_DIR=$bin_release test_suite scripts script_tests
    test_suite integration "$bin_release/tests/integration/ncmp-it-tests" --jobs 2
    # the short chaos run: a fixed seed, on its own instance and ports;
    # seed 12 draws a PostgreSQL crash, a broker stop, a SIGSTOP past the
    # session timeout, the relay held back, the stub answering garbage
    test_suite chaos "$NCMP_ROOT/run" chaos --minutes 2 --seed 12 \
        --json "$NCMP_INSTANCE_DIR/logs/chaos.json"
    # every benchmark of 'bench all' at its small sizes, on the bench's own
    # instance and ports: a smoke test that each still runs to its end and
    # writes its JSON (the figures themselves are judged by 'bench', not here)
    test_suite bench-smoke "$NCMP_ROOT/run" bench all --quick \
        --json "$NCMP_INSTANCE_DIR/logs/bench-quick.json"
    if [ $sanitize -eq 1 ]; then
        export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
        test_suite unit-asan "$bin_asan/tests/unit/ncmp-unit-tests" --jobs 2
        test_suite conformance-asan "$bin_asan/tests/conformance/ncmp-conformance-tests" --jobs 2
        fuzz_replay "$bin_asan" -asan 20000
        # one job: with two, Criterion's runner itself leaks a few bytes
        # under LeakSanitizer, which would fail the suite for nothing of ours
        test_suite integration-asan "$bin_asan/tests/integration/ncmp-it-tests" --jobs 1
    fi
    services_down

    printf '\n'
    printf '%s\n' "${_test_results[@]}"
    total=${#_test_results[@]}
    passed=$((total - _test_failed))
    [ $fast -eq 1 ] && printf '(--fast: the sanitizer build was skipped)\n'
    printf 'suites: %d passed, %d failed\n' "$passed" "$_test_failed"
    [ "$_test_failed" -eq 0 ]
}
