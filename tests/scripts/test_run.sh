#!/usr/bin/env bash
# Tests of the ./run interface itself: help, errors, up/down leaving
# nothing behind, a clear one-line error when a port is taken.
# Runs inside ./run test, which has started the test instance (its
# PostgreSQL port is used here as "a port somebody else holds").
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUN="$ROOT/run"
# shellcheck source=tests/scripts/check_lib.sh
. "$ROOT/tests/scripts/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

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
    # the postgres data may live under /var/tmp when run as root
    rm -rf "$(readlink -f "$dir/pg")"
    return 0
}

check "help lists the commands" help_lists_commands
check "unknown command fails" unknown_command_fails
check "unknown benchmark fails" unknown_bench_fails
check "taken port gives one clear line" taken_port_is_one_clear_line
check "up then down leaves no process and no port" up_then_down_leaves_nothing
check_summary "scripts"
