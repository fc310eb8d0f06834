#!/usr/bin/env bash
# Tests of the ./run interface itself: help, errors, up/down leaving
# nothing behind, a clear one-line error when a port is taken.
# Runs inside ./run test, which has started the test instance (its
# PostgreSQL port is used here as "a port somebody else holds").
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUN="$ROOT/run"
BUILD=${NCMP_BUILD_DIR:-$ROOT/build}
# shellcheck source=tests/scripts/check_lib.sh
. "$ROOT/tests/scripts/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

commands_have_help() {
    local out
    out=$("$RUN" fuzz --help) || { echo "fuzz --help failed"; return 1; }
    grep -q '^Usage: ./run fuzz' <<<"$out" || { echo "fuzz --help: $out"; return 1; }
    grep -q '^Targets: .*registration' <<<"$out" || { echo "fuzz --help lists no targets"; return 1; }
    out=$("$RUN" chaos --help) || { echo "chaos --help failed"; return 1; }
    grep -q '^Usage: ./run chaos' <<<"$out" || { echo "chaos --help: $out"; return 1; }
    for c in deps build format up down status demo test report; do
        out=$("$RUN" "$c" --help) || { echo "$c --help failed"; return 1; }
        grep -q "^Usage: ./run $c" <<<"$out" || { echo "$c --help: $out"; return 1; }
        [ "$(wc -l <<<"$out")" -ge 3 ] || { echo "$c --help says nothing: $out"; return 1; }
    done
    out=$("$RUN" bench --help) || { echo "bench --help failed"; return 1; }
    grep -q '^  overload \[--handles N\]' <<<"$out" || { echo "bench --help: $out"; return 1; }
    for c in $(cd "$ROOT" && bash -c '. scripts/bench.sh; bench_list'); do
        out=$("$RUN" bench "$c" --help) || { echo "bench $c --help failed"; return 1; }
        grep -q "^Usage: ./run bench $c" <<<"$out" || { echo "bench $c --help: $out"; return 1; }
        [ "$(wc -l <<<"$out")" -ge 3 ] || { echo "bench $c --help says nothing: $out"; return 1; }
    done
}

# The programs ./run bench runs answer --help with their usage on stdout
# and status 0, and bad arguments with it on stderr and status 2.
bench_clients_have_help() {
    local b out err rc
    for b in avc-apply cps data datasync raw search; do
        [ -x "$BUILD/tests/bench/ncmp-bench-$b" ] || { echo "no $BUILD/tests/bench/ncmp-bench-$b"; return 1; }
        out=$("$BUILD/tests/bench/ncmp-bench-$b" --help 2>"$scratch/err") ||
            { echo "ncmp-bench-$b --help: status $?: $(cat "$scratch/err")"; return 1; }
        grep -q "^usage: ncmp-bench-$b " <<<"$out" || { echo "ncmp-bench-$b --help: $out"; return 1; }
        [ "$(wc -l <<<"$out")" -ge 3 ] || { echo "ncmp-bench-$b --help says nothing: $out"; return 1; }
        "$BUILD/tests/bench/ncmp-bench-$b" --no-such-option >/dev/null 2>"$scratch/err"
        rc=$?
        err=$(cat "$scratch/err")
        [ "$rc" -eq 2 ] || { echo "ncmp-bench-$b --no-such-option: status $rc"; return 1; }
        grep -q "^usage: ncmp-bench-$b " <<<"$err" || { echo "ncmp-bench-$b --no-such-option: $err"; return 1; }
    done
}

help_lists_commands() {
    local out
    out=$("$RUN" --help) || return 1
    for c in demo test up down bench fuzz; do
        grep -q "^  $c" <<<"$out" || { echo "help lacks $c"; return 1; }
    done
}

unknown_command_fails() {
    local out
    out=$("$RUN" frobnicate 2>&1) && return 1
    grep -q "unknown command 'frobnicate'" <<<"$out"
}

unknown_bench_fails() {
    local out
    out=$("$RUN" bench nope 2>&1) && return 1
    grep -q "unknown benchmark 'nope'" <<<"$out"
}

taken_port_is_one_clear_line() {
    local out rc
    out=$(NCMP_INSTANCE_DIR="$scratch/taken" NCMP_PG_PORT="$NCMP_PG_PORT" "$RUN" up 2>&1)
    rc=$?
    [ $rc -ne 0 ] || { echo "up succeeded on a taken port"; return 1; }
    grep -q "PostgreSQL cannot start: port $NCMP_PG_PORT is taken" <<<"$out" || { echo "$out"; return 1; }
    [ ! -f "$scratch/taken/pg.pid" ] && [ ! -f "$scratch/taken/kafka.pid" ]
}

up_then_down_leaves_nothing() {
    local dir="$scratch/updown" out pids p pg broker ctl http dmi
    # free ports, not fixed ones: another instance on this machine may
    # hold any fixed choice
    pg=$(free_port) && broker=$(free_port) && ctl=$(free_port) && http=$(free_port) && dmi=$(free_port) ||
        { echo "no free ports"; return 1; }
    export NCMP_INSTANCE_DIR=$dir NCMP_PG_PORT=$pg NCMP_BROKER_PORT=$broker NCMP_BROKER_CONTROLLER_PORT=$ctl
    export NCMP_HTTP_PORT=$http NCMP_DMISTUB_PORT=$dmi
    out=$("$RUN" up 2>&1) || { echo "$out"; "$RUN" down; return 1; }
    grep -q "PostgreSQL  postgresql://" <<<"$out" || { echo "$out"; "$RUN" down; return 1; }
    pids=$(cat "$dir"/*.pid)
    [ "$(echo "$pids" | wc -l)" -eq 4 ] || { echo "expected 4 pids: $pids"; "$RUN" down; return 1; }
    "$RUN" status | grep -q "ncmpd  running" || { "$RUN" down; return 1; }
    # the REST API and the DMI stub answer
    curl -fsS "http://127.0.0.1:$http/actuator/health" | grep -q '"UP"' ||
        { echo "REST health did not answer"; "$RUN" down; return 1; }
    curl -fsS "http://127.0.0.1:$dmi/actuator/health" | grep -q '"UP"' ||
        { echo "DMI stub health did not answer"; "$RUN" down; return 1; }
    "$RUN" down >/dev/null 2>&1 || return 1
    for p in $pids; do
        kill -0 "$p" 2>/dev/null && { echo "pid $p still running"; return 1; }
    done
    for p in $pg $broker $ctl $http $dmi; do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && { echo "port $p still open"; return 1; }
    done
    ls "$dir"/*.pid >/dev/null 2>&1 && { echo "pid files left"; return 1; }
    return 0
}

# down keeps the data of up (and says where), down --purge removes it
down_purge_removes_the_data() {
    local dir="$scratch/updown" home out
    home=$(readlink -f "$dir/pg") && [ -d "$home/data" ] || { echo "no data after down: $home"; return 1; }
    [ -d "$dir/kafka/data" ] || { echo "no broker data after down"; return 1; }
    out=$(NCMP_INSTANCE_DIR=$dir "$RUN" down 2>&1)
    grep -qF "data kept for the next 'up': PostgreSQL in $home" <<<"$out" || { echo "$out"; return 1; }
    NCMP_INSTANCE_DIR=$dir "$RUN" down --purge >/dev/null 2>&1 || return 1
    [ ! -e "$home" ] && [ ! -e "$dir/pg" ] && [ ! -e "$dir/kafka/data" ] ||
        { echo "data left: $(ls -d "$home" "$dir/pg" "$dir/kafka/data" 2>/dev/null)"; return 1; }
    out=$("$RUN" down --frobnicate 2>&1) && return 1
    grep -q "unknown option '--frobnicate'" <<<"$out"
}

# probe_instance NAME HOW: an instance made as test, bench and demo make
# theirs (instance_fresh, then PostgreSQL), in a folder Debian's postgres
# user cannot reach (so that, as root, the cluster lives in /var/tmp), and
# ended HOW: exit, die (a failure) or term (SIGTERM from outside, as a
# stopped CI job). Writes the cluster's home into $scratch/home-NAME.
probe_instance() {
    local name=$1 how=$2 port pid i
    port=$(free_port) || return 1
    rm -f "$scratch/home-$name"
    NCMP_LOCAL="$scratch/private" bash -c '
        . "$1/scripts/common.sh"; . "$1/scripts/pg.sh"; . "$1/scripts/kafka.sh"; . "$1/scripts/system.sh"
        instance_fresh "$2" "$3" 1 1
        pg_start >/dev/null 2>&1 || exit 3
        pg_home_of "$NCMP_INSTANCE_DIR" >"$4.tmp" && mv "$4.tmp" "$4"
        case "$5" in
        exit) exit 0 ;;
        die) die "failing on purpose" 2>/dev/null ;;
        term) sleep 60 & wait $! ;;
        esac' probe "$ROOT" "$name" "$port" "$scratch/home-$name" "$how" &
    pid=$!
    if [ "$how" = term ]; then
        for ((i = 0; i < 600; i++)); do
            [ -s "$scratch/home-$name" ] && break
            sleep 0.1
        done
        kill -TERM "$pid"
    fi
    wait "$pid"
    [ -s "$scratch/home-$name" ] || { echo "$name: PostgreSQL did not start"; return 1; }
}

# the data of a finished instance is gone, its logs are not
instance_leaves_no_data() {
    local how home
    mkdir -p -m 700 "$scratch/private"
    for how in exit die term; do
        probe_instance "$how" "$how" || return 1
        home=$(cat "$scratch/home-$how")
        [ ! -e "$home" ] || { echo "$how: $home left behind"; return 1; }
        [ ! -e "$scratch/private/$how/pg" ] || { echo "$how: the pg link left behind"; return 1; }
        [ -s "$scratch/private/$how/pg.log" ] || { echo "$how: PostgreSQL's log not kept"; return 1; }
    done
}

# a cluster outside its instance folder whose instance is gone (a deleted
# clone) is removed by the next instance; one still linked is kept
orphan_clusters_are_swept() {
    local kept orphan
    if [ "$(id -u)" -ne 0 ]; then
        echo "(not root: clusters live in their instance folders; nothing to sweep)"
        return 0
    fi
    NCMP_KEEP_DATA=1 probe_instance kept exit || return 1
    NCMP_KEEP_DATA=1 probe_instance orphan exit || return 1
    kept=$(cat "$scratch/home-kept") orphan=$(cat "$scratch/home-orphan")
    case "$orphan" in /var/tmp/ncmpd-pg-*) ;; *) echo "cluster not in /var/tmp: $orphan"; return 1 ;; esac
    [ -d "$orphan/data" ] || { echo "NCMP_KEEP_DATA=1 did not keep $orphan"; return 1; }
    rm -rf "$scratch/private/orphan"
    probe_instance next exit || return 1
    [ ! -e "$orphan" ] || { echo "orphan $orphan not swept"; return 1; }
    [ -d "$kept/data" ] || { echo "$kept swept although its instance links to it"; return 1; }
    rm -rf "$kept"
}

# a second ./run on an instance in use is refused, naming the first; the
# first keeps running; once it ended, the instance is free again
instance_in_use_is_refused() {
    local holder out rc
    mkdir -p -m 700 "$scratch/private"
    NCMP_LOCAL="$scratch/private" bash -c '
        . "$1/scripts/common.sh"; . "$1/scripts/pg.sh"; . "$1/scripts/kafka.sh"; . "$1/scripts/system.sh"
        instance_fresh held 1 1 1
        touch "$2"
        sleep 60 & wait $!' holder "$ROOT" "$scratch/held-up" &
    holder=$!
    for ((i = 0; i < 100; i++)); do
        [ -e "$scratch/held-up" ] && break
        sleep 0.1
    done
    out=$(NCMP_LOCAL="$scratch/private" bash -c '
        . "$1/scripts/common.sh"; . "$1/scripts/pg.sh"; . "$1/scripts/kafka.sh"; . "$1/scripts/system.sh"
        instance_fresh held 1 1 1
        echo "took it"' second "$ROOT" 2>&1)
    rc=$?
    kill -0 "$holder" 2>/dev/null || { echo "the first ./run was stopped by the second"; return 1; }
    kill -TERM "$holder"
    wait "$holder"
    [ "$rc" -ne 0 ] || { echo "the second ./run took the instance in use: $out"; return 1; }
    grep -q "in use by another ./run (pid $holder" <<<"$out" || { echo "no clear refusal: $out"; return 1; }
    [ ! -e "$scratch/private/held.owner" ] || { echo "the first left its claim behind"; return 1; }
    out=$(NCMP_LOCAL="$scratch/private" bash -c '
        . "$1/scripts/common.sh"; . "$1/scripts/pg.sh"; . "$1/scripts/kafka.sh"; . "$1/scripts/system.sh"
        instance_fresh held 1 1 1
        echo "took it"' third "$ROOT" 2>&1) || { echo "the instance stayed taken: $out"; return 1; }
    grep -q "took it" <<<"$out" || { echo "third: $out"; return 1; }
}

# ncmpd_wait_assigned reads the lines of ncmpd's last start only: an
# assignment an earlier run logged does not count, one logged after the
# start does, and an ncmpd that died is said at once
wait_assigned_reads_this_start() {
    local dir="$scratch/assigned" sleeper waiter rc out
    mkdir -p "$dir"
    printf '%s\n' 'x info  [kafka] ncmpd-g-ingest#consumer-1 group-registration#consumer-1 assigned: t[0]' \
        'x info  [main] ncmpd 0.1.0 running (1 roles)' >"$dir/ncmpd.log"
    echo 3 >"$dir/ncmpd.log-from" # as ncmpd_start writes it
    sleep 60 &
    sleeper=$!
    echo "$sleeper" >"$dir/ncmpd.pid"
    NCMP_INSTANCE_DIR=$dir bash -c '. "$1/scripts/common.sh"; . "$1/scripts/system.sh"
        ncmpd_wait_assigned registration' probe "$ROOT" >/dev/null 2>&1 &
    waiter=$!
    sleep 1
    if ! kill -0 "$waiter" 2>/dev/null; then
        kill "$sleeper"
        echo "returned on the earlier run's assignment"
        return 1
    fi
    echo 'x info  [kafka] ncmpd-g-ingest#consumer-2 group-registration#consumer-2 assigned: t[1]' \
        >>"$dir/ncmpd.log"
    wait "$waiter"
    rc=$?
    [ "$rc" = 0 ] || { kill "$sleeper"; echo "this start's assignment not seen ($rc)"; return 1; }
    kill "$sleeper"
    wait "$sleeper" 2>/dev/null
    echo 5 >"$dir/ncmpd.log-from"
    out=$(NCMP_INSTANCE_DIR=$dir timeout 10 bash -c '. "$1/scripts/common.sh"; . "$1/scripts/system.sh"
        ncmpd_wait_assigned module-sync' probe "$ROOT" 2>&1)
    rc=$?
    [ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q 'ncmpd stopped before its module-sync workers' <<<"$out" ||
        { echo "a dead ncmpd: status $rc, $out"; return 1; }
}

check "help lists the commands" help_lists_commands
check "waiting for partitions reads the last start's lines only" wait_assigned_reads_this_start
check "every command and benchmark explains itself with --help, running nothing" commands_have_help
check "the benchmark clients explain themselves with --help" bench_clients_have_help
check "unknown command fails" unknown_command_fails
check "unknown benchmark fails" unknown_bench_fails
check "taken port gives one clear line" taken_port_is_one_clear_line
check "up then down leaves no process and no port" up_then_down_leaves_nothing
check "down keeps the data and says where; down --purge removes it" down_purge_removes_the_data
check "test, bench and demo instances leave no data (exit, failure, SIGTERM)" instance_leaves_no_data
check "clusters of instances that are gone are swept" orphan_clusters_are_swept
check "a second ./run on an instance in use is refused" instance_in_use_is_refused
check_summary "scripts"
