#!/usr/bin/env bash
# Tests that the documentation's commands work: every `./run <command>`
# written in README.md and docs/*.md is one that `./run --help` lists (and
# every `./run bench <scenario>` a scenario it lists); every curl example
# of docs/rest.md and docs/cps.md, run in order against a live system (`./run up` in a
# scratch instance on free ports), gets an answer that is not a 5xx, or
# the status the text before the example states ("answers NNN"). Stops
# everything it started (`./run down`) and checks nothing is left.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUN="$ROOT/run"
# shellcheck source=tests/scripts/check_lib.sh
. "$ROOT/tests/scripts/check_lib.sh"
scratch=$(mktemp -d)
up_dir=""
# whatever way this ends, stop what `./run up` started and drop the scratch
cleanup() {
    if [ -n "$up_dir" ] && ls "$up_dir"/*.pid >/dev/null 2>&1; then
        NCMP_INSTANCE_DIR=$up_dir "$RUN" down >/dev/null 2>&1
        rm -rf "$(readlink -f "$up_dir/pg")"
    fi
    rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM PIPE HUP

# doc_files: README.md and docs/*.md, relative to the root.
doc_files() {
    (cd "$ROOT" && ls README.md docs/*.md)
}

run_commands_are_listed() {
    local help commands scenarios f word bad=0
    help=$("$RUN" --help) || return 1
    commands=" $(sed -n 's/^  \([a-z][a-z-]*\).*/\1/p' <<<"$help" | tr '\n' ' ') "
    scenarios=" $(sed -n 's/.*(scenarios: \([^)]*\)).*/\1/p' <<<"$help") "
    [ "$commands" != "  " ] && [ "$scenarios" != "  " ] || { echo "cannot read ./run --help"; return 1; }
    for f in $(doc_files); do
        while read -r word; do
            case "$commands" in
            *" $word "*) ;;
            *) echo "$f: './run $word' is not a command of ./run --help"; bad=1 ;;
            esac
        done < <(grep -oE '\./run [a-z][a-z-]*' "$ROOT/$f" | awk '{ print $2 }' | sort -u)
        while read -r word; do
            case "$scenarios" in
            *" $word "*) ;;
            *) echo "$f: './run bench $word' is not a scenario of ./run --help"; bad=1 ;;
            esac
        done < <(grep -oE '\./run bench [a-z][a-z-]*' "$ROOT/$f" | awk '{ print $3 }' | sort -u)
    done
    return $bad
}


# extract_examples FILE DIR: each ```sh block of FILE holding curl becomes
# DIR/NNN.sh; DIR/NNN.expect holds the statuses the text before it states
# ("answers NNN" for every call, "answers NNN, NNN and NNN" one per call in
# order), or nothing.
extract_examples() {
    awk -v dir="$2" '
        /^```sh$/ { inblock = 1; body = ""; next }
        /^```/ && inblock {
            inblock = 0
            if (body ~ /curl /) {
                n++
                f = sprintf("%s/%03d", dir, n)
                printf "%s", body > (f ".sh")
                close(f ".sh")
                printf "%s", expect > (f ".expect")
                close(f ".expect")
            }
            prose = ""; expect = ""
            next
        }
        inblock { body = body $0 "\n"; next }
        /^```/ { next }
        {
            prose = prose " " $0
            if (match(prose, /answers [1-5][0-9][0-9]((,| and|, and) [1-5][0-9][0-9])*/)) {
                expect = substr(prose, RSTART + 8, RLENGTH - 8)
                gsub(/,|and/, " ", expect)
                gsub(/  +/, " ", expect)
            }
        }
    ' "$1"
}

# run_example SH PORT: runs the example with its port replaced; prints
# one HTTP status per curl call (the body of the last one is in SH.body).
run_example() {
    local sh=$1 port=$2
    sed "s/127\.0\.0\.1:8883/127.0.0.1:$port/g; s/localhost:8883/localhost:$port/g" "$sh" >"$sh.run"
    # from the root: examples name the repository's files by relative path
    cd "$ROOT" && BODY="$sh.body" CODES="$sh.codes" bash -c '
        curl() { command curl "$@" -sS --max-time 60 -o "$BODY" -w "%{http_code}\n" >>"$CODES"; }
        . "$1"' _ "$sh.run" >/dev/null 2>"$sh.err"
    cat "$sh.codes" 2>/dev/null
}

# examples_answer DOC: every curl example of docs/DOC.md, in order.
examples_answer() {
    local doc=$1 dir="$scratch/examples-$1" http ex codes expect want code bad=0 n=0 i
    mkdir -p "$dir"
    extract_examples "$ROOT/docs/$doc.md" "$dir"
    [ -n "$(ls "$dir"/*.sh 2>/dev/null)" ] || { echo "no curl example found in docs/$doc.md"; return 1; }
    http=$NCMP_HTTP_PORT
    for ex in "$dir"/*.sh; do
        n=$((n + 1))
        codes=$(run_example "$ex" "$http" | tr "\n" " ")
        # The handle map follows the lifecycle events (docs/rest.md,
        # "References"): right after a registration or a removal it may
        # lag by an event's latency, longer on a busy machine. An answer
        # of 5xx the text does not state is asked again for up to 20 s;
        # one that stays is a failure.
        for ((i = 0; i < 20; i++)); do
            [[ " $codes" =~ \ 5[0-9][0-9]\  ]] && ! grep -q '5[0-9][0-9]' "${ex%.sh}.expect" || break
            sleep 1
            rm -f "$ex.codes"
            codes=$(run_example "$ex" "$http" | tr "\n" " ")
        done
        if [ "$i" -gt 0 ]; then echo "      $doc example $n: asked again $i time(s) after a 5xx"; fi
        read -r -a expect <"${ex%.sh}.expect"
        [ -n "$codes" ] || { echo "$doc example $n made no request: $(cat "$ex.err")"; bad=1; continue; }
        i=0
        for code in $codes; do
            if [ ${#expect[@]} -gt 1 ]; then want=${expect[$i]:-none}; else want=${expect[0]:-}; fi
            i=$((i + 1))
            if [ -n "$want" ] && [ "$code" != "$want" ]; then
                echo "$doc example $n, call $i answered $code, the text says $want: $(head -c 300 "$ex.body")"
                bad=1
            elif [ -z "$want" ] && { [ "$code" -ge 500 ] || [ "$code" -lt 100 ]; }; then
                echo "$doc example $n answered $code: $(head -c 300 "$ex.body" 2>/dev/null) $(cat "$ex.err")"
                bad=1
            fi
        done
        echo "      $doc example $n: $codes${expect[*]:+ (documented ${expect[*]})}"
    done
    return $bad
}

# system_up_runs_examples: ./run up in a scratch instance, the examples,
# ./run down; nothing left running.
system_up_runs_examples() {
    local dir="$scratch/up" out pids p rc=0 pg broker ctl http dmi
    pg=$(free_port) && broker=$(free_port) && ctl=$(free_port) && http=$(free_port) && dmi=$(free_port) ||
        { echo "no free ports"; return 1; }
    export NCMP_INSTANCE_DIR=$dir NCMP_PG_PORT=$pg NCMP_BROKER_PORT=$broker NCMP_BROKER_CONTROLLER_PORT=$ctl
    export NCMP_HTTP_PORT=$http NCMP_DMISTUB_PORT=$dmi
    up_dir=$dir
    out=$("$RUN" up 2>&1) || { echo "$out"; "$RUN" down >/dev/null 2>&1; return 1; }
    pids=$(cat "$dir"/*.pid)
    for ((p = 0; p < 100; p++)); do
        curl -fsS "http://127.0.0.1:$http/actuator/health" 2>/dev/null | grep -q '"UP"' && break
        sleep 0.2
    done
    examples_answer rest || rc=1
    examples_answer cps || rc=1
    "$RUN" down --purge >/dev/null 2>&1 || { echo "./run down --purge failed"; rc=1; }
    for p in $pids; do
        kill -0 "$p" 2>/dev/null && { echo "pid $p still running"; rc=1; }
    done
    for p in $pg $broker $ctl $http $dmi; do
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && { echo "port $p still open"; rc=1; }
    done
    return $rc
}

check "every ./run command in the docs is listed by ./run --help" run_commands_are_listed
check "every curl example of docs/rest.md and docs/cps.md answers, then down leaves nothing" system_up_runs_examples
check_summary "docs"
