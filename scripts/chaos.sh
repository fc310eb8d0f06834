# shellcheck shell=bash
# ./run chaos: the whole system under registration churn while its parts
# fail, one fault at a time from a seeded schedule, then every invariant
# checked (tests/chaos/ncmp_chaos_check.c) and printed as a figure.
#
# Two ncmpd processes (every role, one consumer group), the DMI stub,
# PostgreSQL and Kafka on loopback, in the instance .local/chaos. The
# churn registers blocks of handles from two DMI plugins and removes the
# block before last, so the inventory keeps moving. Beside it, AVC events
# (NCMP's sample, each with its own ce_id) go to the DMI plugins' topic
# for the avc-forward role to forward. A fault is applied,
# held, and healed before the next one is drawn; the churn never stops
# for it (a publish the broker did not acknowledge is sent again).

_chaos_now() { date +%s; }

# _chaos_mark WHAT [SECONDS]: a fault applied at the run's second now.
_chaos_mark() {
    printf '{"t":%d,"fault":"%s","secs":%s}\n' "$(($(_chaos_now) - _chaos_t0))" "$1" "${2:-0}" \
        >>"$_chaos_dir/faults.jsonl"
    info "chaos: t=$(($(_chaos_now) - _chaos_t0))s $1${2:+ for ${2}s}"
}

# _chaos_ncmpd NAME: start (or restart) ncmpd NAME (a or b) as ./run up
# starts it, on its own HTTP port.
_chaos_ncmpd() {
    local port=$_chaos_http
    [ "$1" = b ] && port=$((port + 1))
    NCMPD_NAME=ncmpd-$1 ncmpd_start --http.host=127.0.0.1 --http.port="$port" \
        --kafka.instance-id="chaos-$1" --module-sync.retry-max-ms=10000 \
        --module-sync.advised-grace-ms=15000 >/dev/null
    disown "$(cat "$NCMP_INSTANCE_DIR/ncmpd-$1.pid")" # killing it is the point: no job report
}

# _chaos_stub [ARGS...]: (re)start the DMI stub with the tests' delays.
_chaos_stub() {
    stop_pidfile "$NCMP_INSTANCE_DIR/dmistub.pid" ncmp-dmi-stub 10
    dmistub_start --module-references-delay-ms 20 --module-resources-delay-ms 100 "$@" >/dev/null
    disown "$(cat "$NCMP_INSTANCE_DIR/dmistub.pid")"
}

_chaos_pg_crash() {
    local data
    data="$(readlink -f "$NCMP_INSTANCE_DIR/pg")/data"
    _pg_as_owner "$(pg_bindir)/pg_ctl" -D "$data" -m immediate -w -t 60 stop >/dev/null 2>&1
    rm -f "$NCMP_INSTANCE_DIR/pg.pid"
}

# _chaos_revive: a process that stopped by itself (a fatal error stops
# ncmpd, for its supervisor to start it again) is started again, as a
# supervisor would, and the exit is kept in exits.jsonl (the figure
# process_exits: counted, not judged, and said in the report).
_chaos_revive() {
    local n
    for n in a b; do
        pid_alive "$NCMP_INSTANCE_DIR/ncmpd-$n.pid" && continue
        printf '{"t":%d,"process":"ncmpd-%s","last_log":%s}\n' "$(($(_chaos_now) - _chaos_t0))" "$n" \
            "$(grep -E ' (error|fatal) ' "$NCMP_INSTANCE_DIR/ncmpd-$n.log" 2>/dev/null | tail -n 1 |
                cut -c1-300 | jq -Rs 'rtrimstr("\n")')" >>"$_chaos_dir/exits.jsonl"
        info "chaos: t=$(($(_chaos_now) - _chaos_t0))s ncmpd-$n had stopped by itself; starting it again"
        _chaos_ncmpd "$n"
    done
}

# _chaos_fault: draw one fault from $RANDOM (seeded), apply, hold, heal.
_chaos_fault() {
    local faults=(kill-a kill-b stop-a stop-b broker-stop pg-crash stub-kill stub-slow stub-garbage
        relay-stall)
    local f=${faults[RANDOM % ${#faults[@]}]} secs n
    case "$f" in
    kill-a | kill-b)
        n=${f#kill-}
        _chaos_mark "$f"
        kill -KILL "$(cat "$NCMP_INSTANCE_DIR/ncmpd-$n.pid")" 2>/dev/null
        sleep 1
        _chaos_ncmpd "$n"
        ;;
    stop-a | stop-b)
        # longer than the group's session timeout (10 s): its partitions move
        n=${f#stop-} secs=$((12 + RANDOM % 6))
        _chaos_mark "$f" "$secs"
        kill -STOP "$(cat "$NCMP_INSTANCE_DIR/ncmpd-$n.pid")"
        sleep "$secs"
        kill -CONT "$(cat "$NCMP_INSTANCE_DIR/ncmpd-$n.pid")"
        ;;
    broker-stop)
        # seconds, and in runs of 20 minutes or more, now and then minutes
        secs=$((3 + RANDOM % 10))
        [ "$_chaos_minutes" -ge 20 ] && [ $((RANDOM % 4)) -eq 0 ] && secs=$((60 + RANDOM % 60))
        _chaos_mark "$f" "$secs"
        kafka_stop
        sleep "$secs"
        (kafka_start) >/dev/null 2>&1 || die "chaos: Kafka did not come back"
        ;;
    pg-crash)
        secs=$((2 + RANDOM % 6))
        _chaos_mark "$f" "$secs"
        _chaos_pg_crash
        sleep "$secs"
        (pg_start) >/dev/null 2>&1 || die "chaos: PostgreSQL did not come back"
        ;;
    stub-kill)
        secs=$((2 + RANDOM % 8))
        _chaos_mark "$f" "$secs"
        kill -KILL "$(cat "$NCMP_INSTANCE_DIR/dmistub.pid")" 2>/dev/null
        sleep "$secs"
        _chaos_stub
        ;;
    stub-slow)
        secs=$((10 + RANDOM % 10))
        _chaos_mark "$f" "$secs"
        _chaos_stub --extra-delay-ms 3000
        sleep "$secs"
        _chaos_stub
        ;;
    relay-stall)
        # the outbox left behind: the relays' checkpoint table locked, so
        # the leader's round cannot finish while registrations go on
        # writing events; it catches up once the lock goes
        secs=$((10 + RANDOM % 21))
        _chaos_mark "$f" "$secs"
        pg_psql -q -c "BEGIN; LOCK TABLE lcm_relay_checkpoint IN ACCESS EXCLUSIVE MODE;
            SELECT pg_sleep($secs); COMMIT;" >/dev/null 2>&1
        info "chaos: the outbox holds $(pg_psql -tAc 'SELECT count(*) FROM lcm_outbox' 2>/dev/null) events as the relay resumes"
        ;;
    stub-garbage)
        # module resources that are not JSON: handles lock, then retry
        secs=$((5 + RANDOM % 10))
        _chaos_mark "$f" "$secs"
        _chaos_stub --garbage-tag tagA,tagB,tagC,tagD,tagE
        sleep "$secs"
        _chaos_stub
        ;;
    esac
}

# _chaos_publish VERB DMI FIRST COUNT: one block through ncmp-loadgen,
# sent again until the broker acknowledged all of it. The request ids of
# an acknowledged publish go to requests.txt (each must get an outcome);
# those of a publish that failed part-way to uncertain.txt.
_chaos_publish() {
    local ids="$_chaos_dir/ids.tmp"
    while :; do
        if "$NCMP_BIN/producers/ncmp-loadgen" "$1" -b "$(kafka_bootstrap)" --dmi "$2" \
            --first "$3" --handles "$4" --batch "$_chaos_batch" --print-ids "$ids" -q \
            -X message.timeout.ms=20000 >>"$_chaos_dir/loadgen.log" 2>&1; then
            cat "$ids" >>"$_chaos_dir/requests.txt"
            printf '%s %s %s\n' "$1" "$3" "$4" >>"$_chaos_dir/ops.txt"
            return 0
        fi
        cat "$ids" >>"$_chaos_dir/uncertain.txt" 2>/dev/null
        [ -e "$_chaos_dir/stop-churn" ] && [ -e "$_chaos_dir/abandon" ] && return 1
        sleep 2
    done
}

# _chaos_churn: rounds of "register block r, remove block r-2" for both
# DMI plugins (their own id ranges), until stop-churn exists.
_chaos_churn() {
    local r=0 d first dmis=("$_chaos_dmi_a" "$_chaos_dmi_b")
    while [ ! -e "$_chaos_dir/stop-churn" ]; do
        for d in 0 1; do
            first=$((d * 10000000 + r * _chaos_block + 1))
            _chaos_publish register "${dmis[d]}" "$first" "$_chaos_block" || return
            if [ $r -ge 2 ]; then
                _chaos_publish deregister "${dmis[d]}" $((first - 2 * _chaos_block)) \
                    "$_chaos_block" || return
            fi
        done
        r=$((r + 1))
        sleep 1
    done
}

# _chaos_avc: every 2 s, _chaos_avc_n AVC events to dmi-cm-events, each
# with its own ce_id, until stop-churn exists. A publish the broker did not
# take is not sent again: the checker compares what the input topic holds
# with what the forwarder put on cm-events, whatever reached the input.
_chaos_avc() {
    local first=0 sample=$NCMP_ROOT/tests/bench/data/avc-sample.json
    while [ ! -e "$_chaos_dir/stop-churn" ]; do
        timeout 60 "$NCMP_BIN/tests/bench/ncmp-bench-raw" publish-avc -b "$(kafka_bootstrap)" \
            -t dmi-cm-events -f "$sample" -n "$_chaos_avc_n" -s "$first" >>"$_chaos_dir/avc.log" 2>&1
        first=$((first + _chaos_avc_n))
        sleep 2
    done
}

# _chaos_batch_reads: every 2 s, a legacy batch read (POST /ncmp/v1/data)
# of the handles that stay (ch-90000001..20, registered first) through
# ncmpd-a and ncmpd-b in turn, its results for chaos-batch-results: the
# stub puts them on ncmp-async-m2m, the async-forward role forwards them.
# Each answer goes to batch.log as "<unix time> <body> <status>" (a
# process that is down or stopped answers nothing: that request is simply
# not made).
_chaos_batch_reads() {
    local i=0 port ids body
    ids=$(seq -f '"ch-%.0f"' 90000001 90000020 | paste -sd,)
    body='{"operations":[{"operation":"read","operationId":"op-1",'
    body+='"datastore":"ncmp-datastore:passthrough-operational",'
    body+='"resourceIdentifier":"ManagedElement=1","targetIds":['"$ids"']}]}'
    while [ ! -e "$_chaos_dir/stop-churn" ]; do
        port=$((_chaos_http + i % 2))
        printf '%s %s\n' "$(_chaos_now)" "$(curl -s -m 5 -w ' %{http_code}' -X POST \
            -H 'Content-Type: application/json' -d "$body" \
            "http://127.0.0.1:$port/ncmp/v1/data?topic=chaos-batch-results" 2>/dev/null)" \
            >>"$_chaos_dir/batch.log"
        i=$((i + 1))
        sleep 2
    done
}

# _chaos_data_load SECONDS: the rest of NCMP's KPI load at its rates,
# open loop, for SECONDS, split between the two processes: pass-through
# reads (13/s) through ncmpd-a and writes (5.2/s) through ncmpd-b, ProvMnS
# reads (40/s) through ncmpd-b and patches (1/s) through ncmpd-a, write
# data jobs of 100 operations (2/s) through ncmpd-a and of 100,000 (one a
# minute) through ncmpd-b, all on the handles that stay (ch-90000001..20);
# id-searches (0.96/s) through ncmpd-b and full searches (0.1/s) through
# ncmpd-a, NCMP's five filters in turn, over the moving inventory (an
# answer is ok when it is a whole JSON array, of any length). Each
# client's report (answers by kind, overheads, a timeline by the second)
# in data-NAME.json. Not judged while faults hit: what a fault costs them
# is the figure. --load F multiplies every rate (and the AVC load) by F:
# overload and faults at once.
_chaos_data_load() {
    local name rate mode args pids=() p
    while read -r name rate mode args; do
        rate=$(awk -v r="$rate" -v f="$_chaos_load" 'BEGIN { print r * f }')
        # shellcheck disable=SC2086
        "$NCMP_BIN/tests/bench/ncmp-bench-data" $mode --rate "$rate" --seconds "$1" \
            --first 90000001 --handles 20 --timeout-s 10 $args \
            --report "$_chaos_dir/data-$name.json" >/dev/null 2>>"$_chaos_dir/data.err" </dev/null &
        pids+=($!)
    done <<CLIENTS
pt_read 13 pt --url http://127.0.0.1:$_chaos_http --method GET --delay-ms 300
pt_write 5.2 pt --url http://127.0.0.1:$((_chaos_http + 1)) --method POST --delay-ms 670
provmns_read 40 provmns --url http://127.0.0.1:$((_chaos_http + 1)) --method GET --delay-ms 300
provmns_write 1 provmns --url http://127.0.0.1:$_chaos_http --method PATCH --delay-ms 670
datajob_small 2 datajob --url http://127.0.0.1:$_chaos_http --ops 100
datajob_large 0.016667 datajob --url http://127.0.0.1:$((_chaos_http + 1)) --ops 100000 --timeout-s 60
id_search 0.9615 search --url http://127.0.0.1:$((_chaos_http + 1)) --kind id --expect -1
search 0.1042 search --url http://127.0.0.1:$_chaos_http --kind full --expect -1 --timeout-s 30
CLIENTS
    trap 'kill "${pids[@]}" 2>/dev/null' TERM # the run ends early: so do they
    for p in "${pids[@]}"; do
        wait "$p"
    done
}

# _chaos_data_after: after the settle, through each process, a
# pass-through read of a handle that stays answers 200 and a write data
# job of 100 operations on those handles is answered with its sub-job:
# the data path came back by itself.
_chaos_data_after() {
    local port alt
    alt='%2FSubNetwork%3DEurope%2FSubNetwork%3DIreland%2FMeContext%3DMyRadioNode90000001'
    alt+='%2FManagedElement%3DMyManagedElement90000001'
    for port in "$_chaos_http" $((_chaos_http + 1)); do
        [ "$(curl -s -o /dev/null -m 10 -w '%{http_code}' "http://127.0.0.1:$port/ncmp/v1/ch/$alt/data/ds/ncmp-datastore:passthrough-operational?resourceIdentifier=ManagedElement%3D1")" = 200 ] ||
            return 1
        "$NCMP_BIN/tests/bench/ncmp-bench-data" datajob --url "http://127.0.0.1:$port" --ops 100 \
            --first 90000001 --handles 20 --concurrency 1 --seconds 1 --timeout-s 10 \
            >>"$_chaos_dir/data-after.log" 2>&1 || return 1
    done
}

# _chaos_forwarded: the avc-forward and async-forward roles have committed
# everything on their inputs (each commits after the broker took the
# forwarded copies).
_chaos_forwarded() {
    "$NCMP_BIN/tests/bench/ncmp-bench-raw" committed -b "$(kafka_bootstrap)" \
        -g ncmp-group-avc-forward -t dmi-cm-events -n 0 -w 2 >/dev/null 2>&1 &&
        "$NCMP_BIN/tests/bench/ncmp-bench-raw" committed -b "$(kafka_bootstrap)" \
            -g ncmp-group-async-forward -t ncmp-async-m2m -n 0 -w 2 >/dev/null 2>&1
}

# _chaos_sample: every 5 s, each ncmpd's RSS (kB), open files, threads,
# the database connections of ncmpd, and an id-search's time.
_chaos_sample() {
    local n pid t rss fds thr conns ms
    while [ ! -e "$_chaos_dir/stop-sample" ]; do
        t=$(($(_chaos_now) - _chaos_t0))
        conns=$(pg_psql -tAc "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ncmpd'" 2>/dev/null || echo -1)
        for n in a b; do
            pid=$(cat "$NCMP_INSTANCE_DIR/ncmpd-$n.pid" 2>/dev/null) || continue
            rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
            thr=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
            fds=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
            [ -n "$rss" ] || continue
            printf '%s %s %s %s %s %s\n' "$t" "$n" "$rss" "$fds" "$thr" "${conns:--1}" >>"$_chaos_dir/samples.txt"
        done
        ms=$(curl -s -o /dev/null -m 10 -w '%{time_total}' -X POST -H 'Content-Type: application/json' \
            -d '{}' "http://127.0.0.1:$_chaos_http/ncmp/v1/ch/id-searches" 2>/dev/null)
        printf '%s %s\n' "$t" "${ms:-10}" >>"$_chaos_dir/latency.txt"
        sleep 5
    done
}

# _chaos_expected: the handles that must exist, from ops.txt.
_chaos_expected() {
    awk '{ for (i = $2; i < $2 + $3; i++) alive["ch-" i] = ($1 == "register") }
         END { for (h in alive) if (alive[h]) print h }' "$_chaos_dir/ops.txt"
}

# _chaos_settled: the database says the run is over: exactly the expected
# handles stored (expected.txt: the ids, not only their number, for the
# churn swaps blocks of the same size: a registration and a removal still
# on their way leave the count as it was), none stuck, nothing left in the
# outbox.
_chaos_settled() {
    local want=$1
    [ "$({
        printf 'CREATE TEMP TABLE want (id text);\nCOPY want FROM STDIN;\n'
        cat "$_chaos_dir/expected.txt"
        printf '\\.\n'
        printf "SELECT count(*) = %s AND count(*) FILTER (WHERE state <> 'READY') = 0" "$want"
        printf ' AND count(*) FILTER (WHERE id IN (SELECT id FROM want)) = %s' "$want"
        printf ' AND NOT EXISTS (SELECT 1 FROM lcm_outbox) FROM cm_handle;\n'
    } | pg_psql -tA 2>/dev/null)" = t ]
}

# _chaos_end: on any exit, the load and the sampler stop with the run
# (a failure or Ctrl-C would leave them publishing to a broker that is
# gone), then the instance ends as every instance does.
_chaos_end() {
    local j
    [ -d "${_chaos_dir:-}" ] && touch "$_chaos_dir/stop-churn" "$_chaos_dir/stop-sample" "$_chaos_dir/abandon"
    for j in $(jobs -p); do
        kill "$j" 2>/dev/null
    done
    instance_end
}

# ./run chaos [--minutes N] [--seed S] [--json FILE]
chaos_main() {
    local json="" plot="" seed="" wait_s=240 i expected figures healthy=1 n code port sample_pid churn_pid
    local avc_pid batch_pid data_pid data_after=0
    _chaos_minutes=10 _chaos_block=200 _chaos_batch=100 _chaos_avc_n=100 _chaos_load=1
    while [ $# -gt 0 ]; do
        case "$1" in
        --minutes) _chaos_minutes=${2:-}; shift 2 || die "--minutes needs a number" ;;
        --seed) seed=${2:-}; shift 2 || die "--seed needs a number" ;;
        --json) json=${2:-}; shift 2 || die "--json needs a file" ;;
        --block) _chaos_block=${2:-}; shift 2 || die "--block needs a number" ;;
        --plot) plot=${2:-}; shift 2 || die "--plot needs a file" ;;
        --load) _chaos_load=${2:-}; shift 2 || die "--load needs a number" ;;
        -h | --help)
            cat <<'USAGE'
Usage: ./run chaos [--minutes N] [--seed S] [--json FILE] [--plot PNG] [--block N]
                   [--load F]

Two ncmpd processes, the DMI stub, PostgreSQL and Kafka on loopback under
registration churn from two DMI plugins (blocks of N handles, default 200,
registered and removed), AVC events (50/s), batch reads (one per 2 s)
whose results are forwarded, and the rest of NCMP's KPI load at its rates
(pass-through and ProvMnS reads and writes, write data jobs, id-searches
and searches), for N minutes (default 10), while one fault at
a time, drawn from seed S (default: the time; printed), hits them: kill -9 or SIGSTOP of either ncmpd, the broker
stopped, PostgreSQL crashed, the stub killed, slowed or answering garbage,
the outbox relay held back. Then the load stops, everything is healed, and
after a bounded settle every invariant is checked; the run fails on any
breach. --json FILE writes the figures, --plot PNG draws memory and an
id-search's time over the run with the faults marked (docs/reliability.md).
--load F runs the AVC events and NCMP's KPI load at F times their rates
(default 1; 10 is the overload of ./run bench overload, with faults).
USAGE
            return 0
            ;;
        *) die "chaos: unknown option '$1' (./run chaos --help)" ;;
        esac
    done
    [[ "$_chaos_minutes" =~ ^[0-9]+$ ]] && [ "$_chaos_minutes" -gt 0 ] || die "--minutes needs a positive number"
    [[ "$_chaos_block" =~ ^[0-9]+$ ]] && [ "$_chaos_block" -gt 0 ] || die "--block needs a positive number"
    [[ "$_chaos_load" =~ ^[1-9][0-9]*$ ]] || die "--load needs a whole number from 1"
    _chaos_avc_n=$((_chaos_avc_n * _chaos_load))
    [ -n "$seed" ] || seed=$(date +%s)
    [[ "$seed" =~ ^[0-9]+$ ]] || die "--seed needs a number"
    deps_ensure build services chaos
    instance_fresh chaos "${NCMP_CHAOS_PG_PORT:-26032}" "${NCMP_CHAOS_BROKER_PORT:-29692}" \
        "${NCMP_CHAOS_BROKER_CONTROLLER_PORT:-29693}"
    _chaos_http=${NCMP_CHAOS_HTTP_PORT:-28781}
    export NCMP_DMISTUB_PORT=${NCMP_CHAOS_DMISTUB_PORT:-28792}
    for n in "$_chaos_http" $((_chaos_http + 1)); do
        port_in_use "$n" && die "chaos: $(port_taken "$n") (set NCMP_CHAOS_HTTP_PORT)"
    done
    trap '_chaos_end' EXIT
    _chaos_dir="$NCMP_INSTANCE_DIR/run"
    mkdir -p "$_chaos_dir"
    : >"$_chaos_dir/faults.jsonl"
    : >"$_chaos_dir/exits.jsonl"
    : >"$_chaos_dir/requests.txt"
    : >"$_chaos_dir/ops.txt"
    info "chaos: seed $seed (replay with --seed $seed), $_chaos_minutes minute(s)"
    RANDOM=$seed
    services_up
    _chaos_dmi_a="http://127.0.0.1:$NCMP_DMISTUB_PORT"
    _chaos_dmi_b="http://localhost:$NCMP_DMISTUB_PORT"
    _chaos_stub
    "$NCMP_BIN/workers/ncmpd" --ingest.topic=chaos-batch-results create-topics \
        >>"$NCMP_INSTANCE_DIR/setup.log" 2>&1 || die "chaos: cannot create the batch-read topic"
    _chaos_ncmpd a
    _chaos_ncmpd b
    # the handles the batch reads and the data load ask for: registered
    # once, never removed, READY before the load starts
    _chaos_publish register "$_chaos_dmi_a" 90000001 20
    for ((i = 0; i < 600; i++)); do
        [ "$(pg_psql -Atc "SELECT count(*) FROM cm_handle WHERE state = 'READY' AND id IN (SELECT 'ch-' || g FROM generate_series(90000001, 90000020) g)")" = 20 ] &&
            break
        sleep 0.1
    done
    [ "$i" -lt 600 ] || die "chaos: the 20 handles of the data load are not READY after 60 s"
    _chaos_t0=$(_chaos_now)
    _chaos_sample &
    sample_pid=$!
    _chaos_churn &
    churn_pid=$!
    _chaos_avc &
    avc_pid=$!
    _chaos_batch_reads &
    batch_pid=$!
    _chaos_data_load $((_chaos_minutes * 60)) &
    data_pid=$!
    # one fault at a time, 5-20 s apart
    while [ $(($(_chaos_now) - _chaos_t0)) -lt $((_chaos_minutes * 60)) ]; do
        sleep $((5 + RANDOM % 16))
        [ $(($(_chaos_now) - _chaos_t0)) -lt $((_chaos_minutes * 60)) ] || break
        _chaos_revive
        _chaos_fault
    done
    _chaos_revive
    info "chaos: stopping the churn, then settling (at most ${wait_s}s)"
    touch "$_chaos_dir/stop-churn"
    wait "$churn_pid" "$avc_pid" "$batch_pid" "$data_pid"
    sleep 2 # the stub's answers to the last batch reads (300 ms)
    expected=$(_chaos_expected | tee "$_chaos_dir/expected.txt" | wc -l)
    for ((i = 0; i < wait_s; i++)); do
        _chaos_settled "$expected" && _chaos_forwarded && break
        sleep 1
    done
    info "chaos: settled after ${i}s; checking"
    _chaos_data_after && data_after=1
    touch "$_chaos_dir/stop-sample"
    wait "$sample_pid"
    for n in a b; do
        port=$_chaos_http
        [ "$n" = b ] && port=$((port + 1))
        code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "http://127.0.0.1:$port/actuator/health/liveness")
        [ "$code" = 200 ] || { healthy=0; say "chaos: ncmpd-$n is not healthy (HTTP $code)"; }
        pid_alive "$NCMP_INSTANCE_DIR/ncmpd-$n.pid" || { healthy=0; say "chaos: ncmpd-$n is not running"; }
    done
    figures=$("$NCMP_BIN/tests/chaos/ncmp-chaos-check" -b "$(kafka_bootstrap)" -d "$(pg_url)" \
        --lcm-topic ncmp-events --response-topic ncmp-dmi-registration-response \
        --requests "$_chaos_dir/requests.txt" --expected "$_chaos_dir/expected.txt" \
        --avc-in dmi-cm-events --avc-out cm-events \
        --batch-in ncmp-async-m2m --batch-out chaos-batch-results) ||
        die "chaos: the invariant check could not read the run's results"
    # kept whatever happens next: the services' data goes when the run ends
    printf '%s\n' "$figures" >"$_chaos_dir/figures.json"
    info "chaos: the checker's figures are in $_chaos_dir/figures.json"
    [ -n "$plot" ] && _chaos_plot "$plot"
    _chaos_report "$seed" "$healthy" "$i" "$json" "$data_after"
}

# _chaos_plot PNG: RSS of both processes and an id-search's time over the
# run, each fault a vertical line with its name (gnuplot).
_chaos_plot() {
    local d=$_chaos_dir marks
    deps_ensure report
    awk '$2 == "a" { print $1, $3 / 1024 }' "$d/samples.txt" >"$d/rss-a.dat"
    awk '$2 == "b" { print $1, $3 / 1024 }' "$d/samples.txt" >"$d/rss-b.dat"
    awk '{ print $1, $2 * 1000 }' "$d/latency.txt" >"$d/latency.dat"
    # the data clients' answers per second, all clients together
    jq -rs '[.[].timeline[]] | group_by(.t)[] |
        [.[0].t, (map(.ok) | add), (map(.shed + .failed + .timeouts + .errors) | add)] | @tsv' \
        "$d"/data-*.json >"$d/data.dat" 2>/dev/null || : >"$d/data.dat"
    marks=$(jq -r '"set arrow from \(.t), graph 0 to \(.t), graph 1 nohead lc rgb \"#bbbbbb\"\n" +
        "set label \"\(.fault)\" at \(.t), graph 0.98 rotate by 90 right font \",8\""' "$d/faults.jsonl")
    gnuplot <<GNUPLOT || die "chaos: gnuplot failed"
set terminal pngcairo size 1100,1000 noenhanced font ",10"
set output "$1"
set multiplot layout 3,1
set grid
set xlabel "seconds into the run"
$marks
set ylabel "RSS (MB)"
set title "ncmpd under faults: resident memory of both processes"
plot "$d/rss-a.dat" with lines lw 2 title "ncmpd-a", "$d/rss-b.dat" with lines lw 2 title "ncmpd-b"
set ylabel "ms"
set logscale y
set title "id-search (all handles) through ncmpd-a, every 5 s"
plot "$d/latency.dat" with linespoints pt 7 ps 0.4 title "id-search"
unset logscale y
set ylabel "answers/s"
set title "NCMP's KPI load (pass-through, ProvMnS, data jobs, searches: $((62 * _chaos_load)) requests/s): answers per second"
plot "$d/data.dat" using 1:2 with lines lw 1 title "ok", "" using 1:3 with lines lw 1 title "not ok (refused, failed, timed out, no connection)"
unset multiplot
GNUPLOT
    info "chaos: plot written to $1"
}

# _chaos_data_json: the data clients' reports as one object: per client
# its totals and, per minute, the answers ok and not ok and the average
# overhead of the ok ones.
_chaos_data_json() {
    local f n out='{}'
    for f in "$_chaos_dir"/data-*.json; do
        [ -s "$f" ] || continue
        n=$(basename "$f" .json)
        out=$(jq --arg n "${n#data-}" --slurpfile r "$f" '.[$n] = ($r[0] | del(.timeline) +
            {per_minute: [.timeline | group_by(.t / 60 | floor)[] |
                {minute: (.[0].t / 60 | floor), ok: (map(.ok) | add),
                 not_ok: (map(.shed + .failed + .timeouts + .errors) | add),
                 avg_ms: (if (map(.ok) | add) > 0 then ((map(.sum_ms) | add) / (map(.ok) | add) * 1000 | round / 1000) else null end)}]})' \
            <<<"$out") || return 1
    done
    printf '%s\n' "$out"
}

# _chaos_report SEED HEALTHY SETTLE_S JSON DATA_AFTER: the checker's figures (kept in
# $_chaos_dir/figures.json by chaos_main) with the faults and samples,
# judged; printed as a table, written as JSON.
_chaos_report() {
    local out passed d=$_chaos_dir
    # through files: a run of hours has more samples than fit in the
    # arguments of one command
    awk '{printf "%s{\"t\":%s,\"process\":\"%s\",\"rss_kb\":%s,\"fds\":%s,\"threads\":%s,\"db_connections\":%s}", (NR>1?",":"["), $1, $2, $3, $4, $5, $6} END {if (NR) print "]"; else print "[]"}' \
        "$d/samples.txt" >"$d/samples.json" 2>/dev/null || echo '[]' >"$d/samples.json"
    awk '{printf "%s{\"t\":%s,\"id_search_ms\":%.1f}", (NR>1?",":"["), $1, $2 * 1000} END {if (NR) print "]"; else print "[]"}' \
        "$d/latency.txt" >"$d/latency.json" 2>/dev/null || echo '[]' >"$d/latency.json"
    out=$(jq -n --argjson seed "$1" --slurpfile fs "$d/figures.json" --argjson healthy "$2" \
        --argjson settle "$3" --argjson minutes "$_chaos_minutes" --argjson block "$_chaos_block" \
        --argjson load "$_chaos_load" \
        --slurpfile faults "$d/faults.jsonl" --slurpfile exits "$d/exits.jsonl" \
        --argjson uncertain "$(cat "$d/uncertain.txt" 2>/dev/null | wc -l)" \
        --argjson batch_ok "$(cat "$d/batch.log" 2>/dev/null | grep -c ' 200$')" \
        --argjson data_after "${5:-0}" --argjson data "$(_chaos_data_json)" \
        --slurpfile ss "$d/samples.json" --slurpfile ls "$d/latency.json" '
        $fs[0] as $f | $ss[0] as $samples | $ls[0] as $latency |
        ($samples | map(select(.process == "a"))) as $a |
        $f + {seed: $seed, minutes: $minutes, block: $block, load: $load, faults: $faults,
              exits: $exits, process_exits: ($exits | length),
              settle_s: $settle, both_healthy: ($healthy == 1), requests_uncertain: $uncertain,
              batch_requests_accepted: $batch_ok,
              data_load: $data, data_path_after_settle: ($data_after == 1),
              rss_mb_first: (($a | first | .rss_kb // 0) / 1024 | floor),
              rss_mb_last: (($a | last | .rss_kb // 0) / 1024 | floor),
              fds_first: ($a | first | .fds // 0), fds_last: ($a | last | .fds // 0),
              threads_first: ($a | first | .threads // 0), threads_last: ($a | last | .threads // 0),
              samples: $samples, latency: $latency} |
        .passed = (.handles_missing == 0 and .handles_unexpected == 0 and .duplicate_alternate_ids == 0
                   and .events_missing == 0 and .events_duplicated == 0 and .events_out_of_order == 0
                   and .outcomes_missing == 0 and .stuck == 0 and .outbox_left == 0
                   and .avc_missing == 0 and .avc_unknown == 0 and .batch_missing == 0
                   and .data_path_after_settle and .both_healthy)')
    [ -n "$4" ] && printf '%s\n' "$out" >"$4"
    printf '%s\n' "$out" | jq -r '
        "faults: \(.faults | length) (\(.faults | map(.fault) | group_by(.) | map("\(.[0]) \(length)") | join(", ")))",
        "seed \(.seed), \(.minutes) min, load x\(.load), settled in \(.settle_s) s",
        "",
        "invariant              figure",
        "handles expected       \(.handles_expected)",
        "handles stored         \(.handles_stored)  (missing \(.handles_missing), unexpected \(.handles_unexpected))",
        "duplicate alt ids      \(.duplicate_alternate_ids)",
        "events                 \(.events_total) (missing \(.events_missing), duplicated \(.events_duplicated), out of order \(.events_out_of_order))",
        "outcomes               \(.outcomes_received) of \(.outcomes_expected) requests (missing \(.outcomes_missing), duplicated \(.outcomes_duplicated): at least once)",
        "AVC events forwarded   \(.avc_delivered) of \(.avc_published) (missing \(.avc_missing), duplicated \(.avc_duplicated): at least once, unknown \(.avc_unknown))",
        "batch-read results     \(.batch_delivered) on the client topic for \(.batch_requests_accepted) requests, of them from DMI \(.batch_published) (missing \(.batch_missing), duplicated \(.batch_duplicated): at least once; ncmpd'"'"'s own \(.batch_unknown))",
        "data load              \(.data_load | to_entries | map("\(.key) \(.value.ok) ok of \(.value.sent)") | join(", ")) (answers lost to faults counted, not judged)",
        "data path after settle \(.data_path_after_settle) (a pass-through read and a data job through each process)",
        "stuck handles          \(.stuck)",
        "outbox left            \(.outbox_left)",
        "both ncmpd healthy     \(.both_healthy)",
        "stopped by themselves  \(.process_exits) (started again, as a supervisor would; counted, not judged)",
        "ncmpd-a RSS MB         \(.rss_mb_first) -> \(.rss_mb_last), fds \(.fds_first) -> \(.fds_last), threads \(.threads_first) -> \(.threads_last)",
        "",
        (if .passed then "chaos: passed" else "chaos: FAILED" end)'
    passed=$(printf '%s\n' "$out" | jq -r .passed)
    [ "$passed" = true ]
}
