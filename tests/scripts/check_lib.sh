# shellcheck shell=bash
# The pass/fail bookkeeping that every tests/scripts/test_*.sh shares.
# Sourced, never run (./run test runs only the test_*.sh files).

pass=0 fail=0

# check NAME COMMAND...: run one check, print "ok" or "FAIL" with its name.
check() {
    local name=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
        echo "ok    $name"
    else
        fail=$((fail + 1))
        echo "FAIL  $name"
    fi
}

# check_summary SUITE: "SUITE: N passed, N failed"; fails when one failed.
check_summary() {
    echo "$1: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
