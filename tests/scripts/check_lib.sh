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

# free_port: a loopback port nobody listens on, not handed out before.
_ports=" "
free_port() {
    local p i
    for ((i = 0; i < 100; i++)); do
        p=$((20000 + RANDOM % 12000)) # below the ephemeral range (32768-)
        case "$_ports" in *" $p "*) continue ;; esac
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
        _ports+="$p "
        echo "$p"
        return 0
    done
    return 1
}
