# shellcheck shell=bash
# The fuzz targets (tests/fuzz/): their replay in ./run test, and
# ./run fuzz, the long runs with libFuzzer.

# fuzz_targets: the targets' names, one a line (one seed corpus each).
fuzz_targets() {
    local d
    for d in "$NCMP_ROOT"/tests/fuzz/corpus/*/; do
        d=${d%/}
        printf '%s\n' "${d##*/}"
    done
}

# fuzz_replay BIN SUFFIX RUNS: every target's plain driver of the build in
# BIN over its seed corpus and RUNS random mutations, one suite each
# (fuzz-<target><SUFFIX>).
fuzz_replay() {
    local bin=$1 suffix=$2 runs=$3 t prog
    for t in $(fuzz_targets); do
        prog=${t//_/-}
        test_suite "fuzz-$prog$suffix" "$bin/tests/fuzz/ncmp-fuzz-$prog" \
            "$NCMP_ROOT/tests/fuzz/corpus/$t" "$runs"
    done
}

# ./run fuzz [--minutes N] [--target NAME]: each target (or NAME) for N
# minutes (default 10) under libFuzzer with ASan+UBSan, from its seed
# corpus; what it learns is kept in .local/fuzz/<target>/corpus, a crash in
# .local/fuzz/<target>/ (to be fixed, then added to the seed corpus).
fuzz_main() {
    local minutes=10 only= t prog dir rc failed=0 line summary=()
    while [ $# -gt 0 ]; do
        case "$1" in
        --minutes)
            minutes=${2:-}
            shift 2 || die "--minutes needs a number"
            ;;
        --target)
            only=${2:-}
            shift 2 || die "--target needs a name"
            ;;
        -h | --help)
            cat <<USAGE
Usage: ./run fuzz [--minutes N] [--target NAME]

Builds the fuzz targets with clang (libFuzzer, ASan+UBSan) in build-fuzz/
and runs each target (or NAME alone) for N minutes (default 10) from its
seed corpus in tests/fuzz/corpus/<target>/. What a run learns is kept in
.local/fuzz/<target>/corpus, its log in .local/fuzz/<target>/log, and a
crashing input in .local/fuzz/<target>/ (fix it, then add the input to the
seed corpus, which ./run test replays). Prints one line per target with
its executions; fails when a target found a crash.

Targets: $(fuzz_targets | tr '\n' ' ')
USAGE
            return 0
            ;;
        *) die "unknown option '$1' (./run fuzz --help)" ;;
        esac
    done
    [[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || die "--minutes needs a positive number"
    if [ -n "$only" ] && ! fuzz_targets | grep -qx -- "$only"; then
        die "no fuzz target '$only' (targets: $(fuzz_targets | tr '\n' ' '))"
    fi
    deps_ensure fuzz
    command -v clang >/dev/null ||
        die "./run fuzz needs clang with libFuzzer (Debian: clang libclang-rt-dev; ./run deps installs them as root)"
    info "building the libFuzzer targets with clang (build-fuzz/)"
    build_project fuzz
    for t in $(fuzz_targets); do
        [ -n "$only" ] && [ "$t" != "$only" ] && continue
        prog=${t//_/-}
        dir="$NCMP_LOCAL/fuzz/$t"
        mkdir -p "$dir/corpus"
        info "fuzzing $t for $minutes minute(s) (log: $dir/log)"
        (cd "$dir" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            "$NCMP_BIN/tests/fuzz/ncmp-fuzz-$prog-libfuzzer" -max_len=4200 \
            -max_total_time=$((minutes * 60)) -print_final_stats=1 -artifact_prefix="$dir/" \
            "$dir/corpus" "$NCMP_ROOT/tests/fuzz/corpus/$t") >"$dir/log" 2>&1
        rc=$?
        line=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$')
        if [ $rc -eq 0 ]; then
            summary+=("PASS  $t: ${line:-?} executions in $minutes minute(s)")
        else
            summary+=("FAIL  $t: exit $rc, see $dir/log and the crash-* input in $dir/")
            failed=$((failed + 1))
        fi
    done
    printf '%s\n' "${summary[@]}"
    [ $failed -eq 0 ]
}
