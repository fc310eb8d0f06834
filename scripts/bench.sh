# shellcheck shell=bash
# Benchmarks on real services. Each prints a table and writes JSON with
# the raw limit measured in the same run, so that results read as ratios.

NCMP_BENCH_SCENARIOS=(ingest registration module-sync search avc data provmns cps data-sync datajobs)
# Not single scenarios: a series of registration runs, the whole system at
# two sizes, and every scenario above in one report JSON.
NCMP_BENCH_SERIES=(registration-scale scale all)
# Single scenarios kept out of `all`: avc-apply is the AVC phase of the
# coming `bench data-sync`, run alone until that joins it; overload drives
# the machine past what it can serve for minutes; kpi is NCMP's whole KPI
# suite, a quarter of an hour at least; scale-out is registration again,
# by one process and by two.
NCMP_BENCH_EXTRA=(avc-apply overload kpi scale-out)

bench_list() { printf '%s' "${NCMP_BENCH_SCENARIOS[*]} ${NCMP_BENCH_SERIES[*]} ${NCMP_BENCH_EXTRA[*]}"; }

# bench_ports: the benchmark instance's ports (PostgreSQL, broker, controller).
bench_ports() {
    printf '%s %s %s' "${NCMP_BENCH_PG_PORT:-25932}" "${NCMP_BENCH_BROKER_PORT:-29592}" \
        "${NCMP_BENCH_BROKER_CONTROLLER_PORT:-29593}"
}

# bench_fresh: a fresh benchmark instance (.local/bench), nothing running.
bench_fresh() {
    local pg broker controller
    read -r pg broker controller < <(bench_ports)
    instance_fresh bench "$pg" "$broker" "$controller"
}

# _bench_doc NAME: the comment above bench_NAME, its help.
_bench_doc() {
    awk -v f="bench_${1//-/_}() {" '
        /^#/ { doc = doc $0 "\n"; next }
        $0 == f { printf "%s", doc; exit }
        { doc = "" }' "$NCMP_ROOT/scripts/bench.sh" |
        sed -e 's/^# \{0,1\}//' -e "s/^bench_${1//-/_}/.\/run bench $1/"
}

# _bench_help [NAME]: every scenario with its options, or NAME's whole help.
_bench_help() {
    local s doc
    if [ -n "${1:-}" ]; then
        doc=$(_bench_doc "$1" | tr '\n' ' ')
        printf 'Usage: %s\n\n' "${doc%%: *}"
        printf '%s\n' "${doc#*: }" | fmt -w 76
        return
    fi
    cat <<USAGE
Usage: ./run bench <scenario> [options]

Runs a benchmark on its own fresh PostgreSQL and Kafka (.local/bench),
measures in the same run the raw limit it compares with, prints a table
and writes JSON. ./run bench <scenario> --help tells what it measures.

Scenarios:
USAGE
    for s in $(bench_list); do
        doc=$(_bench_doc "$s" | tr '\n' ' ')
        doc=${doc%%: *}
        printf '  %s\n' "${doc#./run bench }"
    done
}

bench_main() {
    local scenario=${1:-}
    case "$scenario" in
    "" | -h | --help)
        _bench_help
        [ -n "$scenario" ] || exit 2
        return 0
        ;;
    esac
    shift
    case " $(bench_list) " in
    *" $scenario "*) ;;
    *) die "unknown benchmark '$scenario' (scenarios: $(bench_list))" ;;
    esac
    if wants_help "$@"; then
        _bench_help "$scenario"
        return 0
    fi
    # `all` runs each scenario as its own ./run, on its own fresh services
    [ "$scenario" = all ] && { bench_all "$@"; return; }
    bench_fresh
    "bench_${scenario//-/_}" "$@"
}

_now() { date +%s.%N; }
_secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
_rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }'; }
_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# _calibrate: the CPU time, in ms, SHA-256 over 4 MB takes on this machine
# now (the least of 9 runs). The same work takes longer when the core itself
# is slower (its clock, another tenant of the host), which a load average
# does not show: a run's figures are compared with another's only when
# their calibrations agree.
_calibrate() {
    "$NCMP_BIN/tests/bench/ncmp-bench-raw" calibrate | awk '{ printf "%.1f", $6 * 1000 }'
}

# _calibration_line START END: the console line of two calibrations.
_calibration_line() {
    printf 'calibration (CPU ms of SHA-256 over 4 MB; a slower machine takes longer): %s at the start, %s at the end\n' \
        "$1" "$2"
}

# _calibration_json START END: the JSON member of two calibrations.
_calibration_json() {
    printf '"calibration_cpu_ms": {"start": %s, "end": %s}' "$1" "$2"
}

# bench_ingest [--events N] [--json FILE]: the platform slice. Time from
# the first publish until every event is a row, against raw produce, raw
# group consume and plain COPY of the same rows, all in this run.
bench_ingest() {
    local events=500000 json="" t0 t1 n secs rate produce consume copy batch workers
    while [ $# -gt 0 ]; do
        case "$1" in
        --events) events=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench ingest: unknown option '$1' (options: --events N, --json FILE)" ;;
        esac
    done
    services_up
    local pub="$NCMP_BIN/producers/ncmp-publish" raw="$NCMP_BIN/tests/bench/ncmp-bench-raw"
    local bs
    bs=$(kafka_bootstrap)
    batch=$("$NCMP_BIN/workers/ncmpd" --dump-config | sed -n 's/^ingest.batch-size = //p')
    workers=$("$NCMP_BIN/workers/ncmpd" --dump-config | sed -n 's/^ingest.workers = //p')

    info "raw limits: produce, consume, COPY ($events each)"
    "$NCMP_BIN/workers/ncmpd" --ingest.topic=bench-raw create-topics >/dev/null 2>&1
    t0=$(_now)
    "$pub" -b "$bs" -t bench-raw -n "$events" -q || die "raw produce failed"
    t1=$(_now)
    produce=$(_rate "$events" "$(_secs "$t0" "$t1")")
    consume=$("$raw" consume -b "$bs" -t bench-raw -n "$events" | awk '{print $4}') ||
        die "raw consume failed"
    copy=$("$raw" copy -d "$(pg_url)" -n "$events" | awk '{print $4}') || die "raw COPY failed"

    info "pipeline: publish $events events, wait until all are rows"
    ncmpd_start
    ncmpd_wait_assigned ingest
    t0=$(_now)
    "$pub" -b "$bs" -t ncmp-ingest -n "$events" -q || die "publish failed"
    while :; do
        n=$(pg_psql -Atc "SELECT count(*) FROM ingest_event")
        [ "$n" -ge "$events" ] && break
        awk -v a="$t0" -v b="$(_now)" 'BEGIN { exit !(b - a > 600) }' &&
            die "only $n of $events stored after 600 s"
        sleep 0.05
    done
    t1=$(_now)
    secs=$(_secs "$t0" "$t1")
    rate=$(_rate "$events" "$secs")
    dups=$(pg_psql -Atc 'SELECT count(*) - count(DISTINCT (partition, "offset")) FROM ingest_event')

    printf '\n%-34s %14s %12s\n' "ingest, $events events" "events/s" "vs pipeline"
    printf '%-34s %14s %12s\n' "pipeline (publish -> row)" "$rate" "1.00"
    printf '%-34s %14s %12s\n' "raw produce (ncmp-publish)" "$produce" "$(_ratio "$rate" "$produce")"
    printf '%-34s %14s %12s\n' "raw consume" "$consume" "$(_ratio "$rate" "$consume")"
    printf '%-34s %14s %12s\n' "raw COPY of the same rows" "$copy" "$(_ratio "$rate" "$copy")"
    printf 'batch size %s, workers %s, %s s, duplicates %s, machine: %s cores\n' \
        "$batch" "$workers" "$secs" "$dups" "$(nproc)"
    if [ -n "$json" ]; then
        cat >"$json" <<JSON
{"scenario": "ingest", "events": $events, "pipeline_events_per_s": $rate, "pipeline_seconds": $secs,
 "raw_produce_per_s": $produce, "raw_consume_per_s": $consume, "copy_rows_per_s": $copy,
 "pipeline_vs_copy": $(_ratio "$rate" "$copy"), "duplicates": $dups,
 "batch_size": $batch, "workers": $workers, "cores": $(nproc)}
JSON
        info "wrote $json"
    fi
}

# _wait_consumer PID SECONDS: wait for a background consumer, or fail.
_wait_consumer() {
    local pid=$1 secs=$2 i
    for ((i = 0; i < secs * 20; i++)); do
        kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
        sleep 0.05
    done
    kill "$pid" 2>/dev/null
    return 1
}

# _registration_measure HANDLES [PLUGINS [PROCESSES]]: on running
# services with nothing registered, NCMP's reference registration workload
# of HANDLES handles through Kafka, from the first publish until every
# handle's ADVISED event is on the lifecycle topic, then the matching
# deregistration until every DELETED event is out; and plain COPY of the
# same rows into an empty copy of cm_handle first. With PLUGINS (1), the
# handles are split among that many DMI plugins, each published at once
# by its own load generator (a plugin's requests share a record key, so a
# partition); with PROCESSES (1), that many ncmpd run the registration
# role in one consumer group. Prints "<reg/s> <reg s> <dereg/s> <dereg s>
# <COPY/s>". Leaves ncmpd (registration, lcm-relay) running.
#
# A freshly started broker compiles its code as the first requests run
# through it: its JIT compiler threads took 0.7-1.2 CPU-seconds of the
# 4-5 s a 50,000-handle registration took on two cores. One unmeasured
# round of the same requests (up to 20,000 handles registered and
# deregistered) comes first, so that the run measures the registration
# path rather than the broker's start; its events are counted off the
# measured ones, and the table is vacuumed after it.
_registration_measure() {
    local handles=$1 plugins=${2:-1} processes=${3:-1} t0 t1 reg dereg copy secs_reg secs_dereg cpid
    local gen="$NCMP_BIN/producers/ncmp-loadgen" raw="$NCMP_BIN/tests/bench/ncmp-bench-raw" bs warm

    bs=$(kafka_bootstrap)
    ncmpd_start --roles=registration,lcm-relay
    if [ "$processes" -eq 2 ]; then
        NCMPD_NAME=ncmpd-b ncmpd_start --roles=registration,lcm-relay \
            --http.port="${NCMP_BENCH_HTTP_PORT2:-28984}"
        _registration_wait_two_members
    else
        ncmpd_wait_assigned registration
    fi
    warm=$((handles < 20000 ? handles : 20000))
    info "warm-up, not measured: $warm handles registered and deregistered"
    "$raw" consume -b "$bs" -t ncmp-events -n $((3 * warm)) >/dev/null &
    cpid=$!
    _registration_publish register "$warm" 1 && _registration_publish deregister "$warm" 1 ||
        die "publishing the warm-up failed"
    _wait_consumer "$cpid" 1800 || die "the warm-up's events did not arrive (see $NCMP_INSTANCE_DIR/ncmpd.log)"
    [ "$(pg_psql -Atc 'SELECT count(*) FROM cm_handle')" -eq 0 ] || die "handles left after the warm-up"
    pg_psql -qc "VACUUM ANALYZE cm_handle, lcm_outbox" >/dev/null || die "VACUUM after the warm-up failed"

    info "raw limit: COPY of the same $handles rows into an empty copy of cm_handle"
    copy=$("$raw" copy-handles -d "$(pg_url)" -n "$handles" | awk '{print $4}') || die "raw COPY failed"

    info "registration: $handles handles in requests of 2,000 from $plugins DMI plugin(s), $processes process(es)"
    "$raw" consume -b "$bs" -t ncmp-events -n $((3 * warm + handles)) >/dev/null &
    cpid=$!
    t0=$(_now)
    _registration_publish register "$handles" "$plugins" || die "publishing the registrations failed"
    _wait_consumer "$cpid" 1800 || die "not every ADVISED event arrived (see $NCMP_INSTANCE_DIR/ncmpd.log)"
    t1=$(_now)
    secs_reg=$(_secs "$t0" "$t1")
    reg=$(_rate "$handles" "$secs_reg")
    [ "$(pg_psql -Atc 'SELECT count(*) FROM cm_handle')" -eq "$handles" ] || die "handles missing"

    info "deregistration: $handles handles"
    # every handle gives an update (DELETING) and a delete event
    "$raw" consume -b "$bs" -t ncmp-events -n $((3 * warm + 3 * handles)) >/dev/null &
    cpid=$!
    t0=$(_now)
    _registration_publish deregister "$handles" "$plugins" || die "publishing the deregistrations failed"
    _wait_consumer "$cpid" 1800 || die "not every DELETED event arrived"
    t1=$(_now)
    secs_dereg=$(_secs "$t0" "$t1")
    dereg=$(_rate "$handles" "$secs_dereg")
    [ "$(pg_psql -Atc 'SELECT count(*) FROM cm_handle')" -eq 0 ] || die "handles left after deregistration"
    printf '%s %s %s %s %s\n' "$reg" "$secs_reg" "$dereg" "$secs_dereg" "$copy"
}

# The DMI plugins of a run with several: the load generator's partitioner
# (librdkafka's consistent_random, CRC32 of the key) puts these six on six
# different partitions of a 6-partition topic, so that the members of the
# group share the work as evenly as the assignment allows.
_REGISTRATION_PLUGINS=(http://dmi-1:8092 http://dmi-3:8092 http://dmi-12:8092 http://dmi-13:8092
    http://dmi-2:8092 http://dmi-4:8092)

# _registration_publish register|deregister HANDLES PLUGINS: the workload,
# split among PLUGINS DMI plugins published at once (handles ch-1.. in
# consecutive blocks, one block per plugin).
_registration_publish() {
    local what=$1 handles=$2 plugins=$3 per first=1 k pids=() rc=0 n
    local gen="$NCMP_BIN/producers/ncmp-loadgen"
    if [ "$plugins" -eq 1 ]; then
        "$gen" "$what" -b "$(kafka_bootstrap)" --handles "$handles" -q
        return
    fi
    per=$(((handles + plugins - 1) / plugins))
    for ((k = 0; k < plugins; k++)); do
        n=$((handles - first + 1))
        [ "$n" -gt "$per" ] && n=$per
        [ "$n" -gt 0 ] || break
        "$gen" "$what" -b "$(kafka_bootstrap)" --handles "$n" --first "$first" \
            --dmi "${_REGISTRATION_PLUGINS[$k]}" -q &
        pids+=($!)
        first=$((first + n))
    done
    for k in "${pids[@]}"; do wait "$k" || rc=1; done
    return $rc
}

# _registration_wait_two_members: both ncmpd's registration consumers hold
# partitions (the group has settled after the second joined).
_registration_wait_two_members() {
    local i a b
    for ((i = 0; i < 600; i++)); do
        a=$(grep -c "group-registration#consumer.* assigned:" "$NCMP_INSTANCE_DIR/ncmpd.log" 2>/dev/null)
        b=$(grep -c "group-registration#consumer.* assigned:" "$NCMP_INSTANCE_DIR/ncmpd-b.log" 2>/dev/null)
        if [ "${b:-0}" -ge 1 ] && [ "${a:-0}" -ge 1 ]; then
            # the first member's partitions were revoked and given out again
            # once the second joined; a moment more for the last assignment
            sleep 3
            return 0
        fi
        sleep 0.1
    done
    die "the two ncmpd's registration consumers did not both get partitions within 60 s"
}

# _registration_settings: "<batch size> <workers>" of the registration role.
_registration_settings() {
    "$NCMP_BIN/workers/ncmpd" --dump-config |
        awk '/^registration.batch-size = / { b = $3 } /^registration.workers = / { w = $3 }
             END { print b, w }'
}

# bench_registration [--handles N] [--json FILE]: one run of
# _registration_measure, as a table and JSON, with the machine's speed
# (calibration_cpu_ms) before and after.
bench_registration() {
    local handles=50000 json="" reg dereg copy batch workers secs_reg secs_dereg cal0 cal1
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench registration: unknown option '$1' (options: --handles N, --json FILE)" ;;
        esac
    done
    services_up
    read -r batch workers < <(_registration_settings)
    cal0=$(_calibrate)
    read -r reg secs_reg dereg secs_dereg copy < <(_registration_measure "$handles") ||
        die "the registration run failed"
    cal1=$(_calibrate)

    printf '\n%-40s %14s %10s\n' "registration, $handles handles" "handles/s" "vs COPY"
    printf '%-40s %14s %10s\n' "registration (publish -> ADVISED event)" "$reg" "$(_ratio "$reg" "$copy")"
    printf '%-40s %14s %10s\n' "deregistration (publish -> DELETED)" "$dereg" "$(_ratio "$dereg" "$copy")"
    printf '%-40s %14s %10s\n' "raw COPY of the same rows" "$copy" "1.00"
    printf 'batch size %s requests, workers %s, %s s + %s s, machine: %s cores\n' \
        "$batch" "$workers" "$secs_reg" "$secs_dereg" "$(nproc)"
    _calibration_line "$cal0" "$cal1"
    if [ -n "$json" ]; then
        cat >"$json" <<JSON
{"scenario": "registration", "handles": $handles,
 $(_calibration_json "$cal0" "$cal1"),
 "registration_handles_per_s": $reg, "registration_seconds": $secs_reg,
 "deregistration_handles_per_s": $dereg, "deregistration_seconds": $secs_dereg,
 "copy_rows_per_s": $copy, "registration_vs_copy": $(_ratio "$reg" "$copy"),
 "deregistration_vs_copy": $(_ratio "$dereg" "$copy"),
 "batch_size": $batch, "workers": $workers, "cores": $(nproc)}
JSON
        info "wrote $json"
    fi
}

# bench_scale_out [--handles N] [--plugins K] [--json FILE]: registration
# and deregistration of N handles (50,000) from K DMI plugins (6, each on
# its own partition) by one ncmpd, then on fresh services by two ncmpd in
# one consumer group (each with the registration workers of its settings),
# so that what a second process adds, and what coordinating two costs, is
# read off one run; each beside a plain COPY of the same rows measured on
# the same services.
bench_scale_out() {
    local handles=50000 plugins=6 json="" p rows=() row batch workers
    local reg dereg copy secs_reg secs_dereg
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        --plugins) plugins=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench scale-out: unknown option '$1' (options: --handles N, --plugins K, --json FILE)" ;;
        esac
    done
    [[ "$handles" =~ ^[1-9][0-9]*$ ]] || die "bench scale-out: --handles wants a positive number"
    [[ "$plugins" =~ ^[1-6]$ ]] || die "bench scale-out: --plugins wants 1 to 6, not '$plugins'"
    for p in 1 2; do
        [ "$p" -eq 1 ] || bench_fresh
        info "$p process(es): fresh services"
        services_up
        read -r batch workers < <(_registration_settings)
        read -r reg secs_reg dereg secs_dereg copy < <(_registration_measure "$handles" "$plugins" "$p") ||
            die "the run with $p process(es) failed"
        rows+=("$p $reg $secs_reg $dereg $secs_dereg $copy")
        services_down
    done

    printf '\n%-10s %16s %10s %18s %10s %14s\n' processes "registration/s" "vs COPY" "deregistration/s" \
        "vs COPY" "COPY rows/s"
    for row in "${rows[@]}"; do
        read -r p reg secs_reg dereg secs_dereg copy <<<"$row"
        printf '%-10s %16s %10s %18s %10s %14s\n' "$p" "$reg" "$(_ratio "$reg" "$copy")" "$dereg" \
            "$(_ratio "$dereg" "$copy")" "$copy"
    done
    printf '%s handles from %s DMI plugins; each process: %s registration workers, batch %s requests; machine: %s cores\n' \
        "$handles" "$plugins" "$workers" "$batch" "$(nproc)"
    if [ -n "$json" ]; then
        local one two
        read -r _ reg secs_reg dereg secs_dereg copy <<<"${rows[0]}"
        one=$(printf '{"processes": 1, "registration_handles_per_s": %s, "registration_seconds": %s, "deregistration_handles_per_s": %s, "deregistration_seconds": %s, "copy_rows_per_s": %s, "registration_vs_copy": %s, "deregistration_vs_copy": %s}' \
            "$reg" "$secs_reg" "$dereg" "$secs_dereg" "$copy" "$(_ratio "$reg" "$copy")" "$(_ratio "$dereg" "$copy")")
        read -r _ reg secs_reg dereg secs_dereg copy <<<"${rows[1]}"
        two=$(printf '{"processes": 2, "registration_handles_per_s": %s, "registration_seconds": %s, "deregistration_handles_per_s": %s, "deregistration_seconds": %s, "copy_rows_per_s": %s, "registration_vs_copy": %s, "deregistration_vs_copy": %s}' \
            "$reg" "$secs_reg" "$dereg" "$secs_dereg" "$copy" "$(_ratio "$reg" "$copy")" "$(_ratio "$dereg" "$copy")")
        jq -n --argjson one "$one" --argjson two "$two" --argjson n "$handles" --argjson k "$plugins" \
            --argjson b "$batch" --argjson w "$workers" --argjson c "$(nproc)" \
            '{scenario: "scale-out", handles: $n, plugins: $k, batch_size: $b, workers: $w, cores: $c,
              runs: [$one, $two],
              two_vs_one_registration: (($two.registration_handles_per_s / $one.registration_handles_per_s) * 100 | round / 100),
              two_vs_one_deregistration: (($two.deregistration_handles_per_s / $one.deregistration_handles_per_s) * 100 | round / 100),
              two_vs_one_registration_vs_copy: (($two.registration_vs_copy / $one.registration_vs_copy) * 100 | round / 100),
              two_vs_one_deregistration_vs_copy: (($two.deregistration_vs_copy / $one.deregistration_vs_copy) * 100 | round / 100)}' \
            >"$json" || die "bench scale-out: writing $json failed"
        info "wrote $json"
    fi
}

# bench_registration_scale [--sizes A,B,...] [--json FILE]: registration
# and deregistration throughput against the size of the workload, each
# size on fresh services (an empty inventory, empty topics). Default sizes
# 1,000 to 1,000,000. JSON: a list of {handles, registration_handles_per_s,
# deregistration_handles_per_s, copy_rows_per_s, ...}.
bench_registration_scale() {
    local sizes="1000,10000,50000,100000,1000000" json="" n first=1 out=()
    local reg dereg copy secs_reg secs_dereg batch workers rows=() row
    while [ $# -gt 0 ]; do
        case "$1" in
        --sizes) sizes=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench registration-scale: unknown option '$1' (options: --sizes A,B,..., --json FILE)" ;;
        esac
    done
    [[ "$sizes" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
        die "bench registration-scale: --sizes wants positive numbers separated by commas, not '$sizes'"
    IFS=, read -r -a out <<<"$sizes"
    for n in "${out[@]}"; do
        [ $first -eq 1 ] || bench_fresh
        first=0
        info "size $n: fresh services"
        services_up
        read -r batch workers < <(_registration_settings)
        read -r reg secs_reg dereg secs_dereg copy < <(_registration_measure "$n") ||
            die "the registration run of $n handles failed"
        rows+=("$n $reg $secs_reg $dereg $secs_dereg $copy")
        services_down
    done

    printf '\n%12s %16s %18s %14s %10s\n' handles "registration/s" "deregistration/s" "COPY rows/s" \
        "reg/COPY"
    for row in "${rows[@]}"; do
        read -r n reg secs_reg dereg secs_dereg copy <<<"$row"
        printf '%12s %16s %18s %14s %10s\n' "$n" "$reg" "$dereg" "$copy" "$(_ratio "$reg" "$copy")"
    done
    printf 'each size on fresh services; batch size %s requests, workers %s, machine: %s cores\n' \
        "$batch" "$workers" "$(nproc)"
    if [ -n "$json" ]; then
        {
            printf '['
            first=1
            for row in "${rows[@]}"; do
                read -r n reg secs_reg dereg secs_dereg copy <<<"$row"
                [ $first -eq 1 ] || printf ','
                first=0
                printf '\n {"handles": %s, "registration_handles_per_s": %s, "registration_seconds": %s,' \
                    "$n" "$reg" "$secs_reg"
                printf ' "deregistration_handles_per_s": %s, "deregistration_seconds": %s,' "$dereg" "$secs_dereg"
                printf ' "copy_rows_per_s": %s, "batch_size": %s, "workers": %s, "cores": %s}' \
                    "$copy" "$batch" "$workers" "$(nproc)"
            done
            printf '\n]\n'
        } >"$json"
        info "wrote $json"
    fi
}

# _wait_all_ready HANDLES T0 SECONDS: wait until HANDLES handles are READY
# and the outbox is empty (every READY event is on the topic), at most
# SECONDS after T0.
_wait_all_ready() {
    local q="SELECT count(*) FILTER (WHERE state = 'READY') = $1
                    AND NOT EXISTS (SELECT 1 FROM lcm_outbox) FROM cm_handle"
    until [ "$(pg_psql -Atc "$q")" = t ]; do
        awk -v a="$2" -v b="$(_now)" -v s="$3" 'BEGIN { exit !(b - a > s) }' && return 1
        sleep 0.05
    done
}

# _register_ready HANDLES DMI: register the reference workload of HANDLES
# handles against DMI through the running ncmpd and wait (30 minutes at
# most) until all are READY.
_register_ready() {
    local t0
    info "registering $1 handles and waiting until READY"
    t0=$(_now)
    "$NCMP_BIN/producers/ncmp-loadgen" register -b "$(kafka_bootstrap)" --handles "$1" --dmi "$2" -q ||
        die "registration failed"
    _wait_all_ready "$1" "$t0" 1800 || die "handles not READY after 1800 s"
    info "$1 handles READY in $(_secs "$t0" "$(_now)") s"
}

# _module_sync_run HANDLES LCM_TOPIC STUB_ARGS...: register the reference workload
# against a fresh DMI stub and time from the first publish until every
# handle's READY event is on the lifecycle topic. Prints "<seconds> <refs>
# <resources>" (the stub's module-reference and module-resource fetches).
_module_sync_run() {
    local handles=$1 gen="$NCMP_BIN/producers/ncmp-loadgen" raw="$NCMP_BIN/tests/bench/ncmp-bench-raw"
    local lcm=$2 bs dmi t0 t1 refs=0 res=0 tag
    shift 2
    bs=$(kafka_bootstrap)
    dmi=$(dmistub_start "$@") || exit 1
    ncmpd_start --roles=registration,module-sync,lcm-relay --lcm.topic="$lcm"
    ncmpd_wait_assigned registration
    ncmpd_wait_assigned module-sync
    # a create and a READY event per handle (and, with a busy window, a
    # LOCKED event in between): done when every handle is READY and the
    # outbox is empty (the relay deletes a row once Kafka has its event)
    t0=$(_now)
    "$gen" register -b "$bs" --handles "$handles" --dmi "$dmi" -q || die "publishing failed"
    while :; do
        [ "$(pg_psql -Atc "SELECT (SELECT count(*) FROM cm_handle WHERE state = 'READY') = $handles
            AND NOT EXISTS (SELECT 1 FROM lcm_outbox)")" = t ] && break
        awk -v a="$t0" -v b="$(_now)" 'BEGIN { exit !(b - a > 1200) }' &&
            die "not every handle READY after 1200 s (see $NCMP_INSTANCE_DIR/ncmpd.log)"
        sleep 0.05
    done
    t1=$(_now)
    "$raw" consume -b "$bs" -t "$lcm" -n $((2 * handles)) >/dev/null ||
        die "the lifecycle events are not on $lcm"
    for tag in tagA tagB tagC tagD tagE; do
        refs=$((refs + $(dmistub_stat moduleReferences "$tag")))
        res=$((res + $(dmistub_stat moduleResources "$tag")))
    done
    printf '%s %s %s\n' "$(_secs "$t0" "$t1")" "$refs" "$res"
}

# bench_module_sync [--handles N] [--busy-ms MS] [--json FILE]: NCMP's
# reference workload from the first registration publish until every
# handle is READY (its READY event on the lifecycle topic), against the DMI
# stub with the reference delays (module references 100 ms, resources
# 1,000 ms); then again with the reference busy window (the stub answers
# 503 for --busy-ms after the first request per tag; 180,000 in NCMP's
# runs, 0 skips it). Raw limit: COPY of the same rows, in the same run.
bench_module_sync() {
    local handles=50000 busy=180000 json="" copy secs refs res rate busy_secs="null" busy_rate="null"
    local raw batch workers
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        --busy-ms) busy=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench module-sync: unknown option '$1' (options: --handles N, --busy-ms MS, --json FILE)" ;;
        esac
    done
    services_up
    raw="$NCMP_BIN/tests/bench/ncmp-bench-raw"
    batch=$("$NCMP_BIN/workers/ncmpd" --dump-config | sed -n 's/^module-sync.batch-size = //p')
    workers=$("$NCMP_BIN/workers/ncmpd" --dump-config | sed -n 's/^module-sync.workers = //p')
    info "raw limit: COPY of the same $handles rows into an empty copy of cm_handle"
    copy=$("$raw" copy-handles -d "$(pg_url)" -n "$handles" | awk '{print $4}') || die "raw COPY failed"

    info "module sync: $handles handles to READY (stub delays 100 ms / 1,000 ms)"
    read -r secs refs res < <(_module_sync_run "$handles" ncmp-events) || die "module-sync run failed"
    rate=$(_rate "$handles" "$secs")
    if [ "$busy" -gt 0 ]; then
        info "again with the stub's busy window of $busy ms (NCMP's figure includes it)"
        stop_pidfile "$NCMP_INSTANCE_DIR/ncmpd.pid" ncmpd 40
        stop_pidfile "$NCMP_INSTANCE_DIR/dmistub.pid" ncmp-dmi-stub 10
        pg_psql -qc "TRUNCATE cm_handle, module_set, module_set_member, module_sync_retry, schema_set_member, yang_resource, lcm_outbox" ||
            die "cannot empty the inventory"
        read -r busy_secs _ _ < <(_module_sync_run "$handles" ncmp-events-busy --busy-ms "$busy") ||
            die "module-sync run with the busy window failed"
        busy_rate=$(_rate "$handles" "$busy_secs")
    fi

    printf '\n%-46s %14s %10s\n' "module sync, $handles handles" "handles/s" "vs COPY"
    printf '%-46s %14s %10s\n' "publish -> all READY" "$rate" "$(_ratio "$rate" "$copy")"
    [ "$busy" -gt 0 ] &&
        printf '%-46s %14s %10s\n' "publish -> all READY, ${busy} ms busy window" "$busy_rate" \
            "$(_ratio "$busy_rate" "$copy")"
    printf '%-46s %14s %10s\n' "raw COPY of the same rows" "$copy" "1.00"
    printf 'DMI fetches: %s module references, %s module resources (5 tags); %s s; batch %s, workers %s, %s cores\n' \
        "$refs" "$res" "$secs" "$batch" "$workers" "$(nproc)"
    if [ -n "$json" ]; then
        cat >"$json" <<JSON
{"scenario": "module-sync", "handles": $handles, "ready_handles_per_s": $rate,
 "ready_seconds": $secs, "dmi_module_fetches": $((refs + res)),
 "dmi_module_reference_fetches": $refs, "dmi_module_resource_fetches": $res,
 "busy_window_ms": $busy, "busy_ready_seconds": $busy_secs, "busy_ready_handles_per_s": $busy_rate,
 "copy_rows_per_s": $copy, "ready_vs_copy": $(_ratio "$rate" "$copy"),
 "batch_size": $batch, "workers": $workers, "cores": $(nproc)}
JSON
        info "wrote $json"
    fi
}

# _log_time FILE PATTERN: the Unix time (s.ms) of the first line of ncmpd's
# log FILE that matches PATTERN, waiting 30 s for it.
_log_time() {
    local line i
    for ((i = 0; i < 1500; i++)); do
        line=$(grep -m1 -- "$2" "$1" 2>/dev/null) && break
        sleep 0.02
    done
    [ -n "$line" ] || return 1
    date -d "${line%% *}" +%s.%N
}

# bench_avc [--events N] [--json FILE]: NCMP's AVC load through the
# avc-forward role. N copies of an AVC event ($NCMP_AVC_SAMPLE, by default
# tests/bench/data/avc-sample.json: a YANG-patch AvcEvent of NCMP's sample
# size, checked by the conformance tests against schema/) are published to
# dmi-cm-events first (keys neType-1..10, NCMP's CloudEvent headers); then
# ncmpd --roles=avc-forward is timed from its consumer's assignment (the
# time stamp in its log) until its group's commits cover all N, which it
# makes only after the broker acknowledged them on cm-events. The raw
# limit, in the same run: ncmp-bench-raw reading the same input topic and
# producing each record to a scratch topic with the same producer
# settings, no group, no commits.
bench_avc() {
    local events=1000000 json="" sample t0 t1 secs rate raw delivered dups dlq batch workers
    while [ $# -gt 0 ]; do
        case "$1" in
        --events) events=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench avc: unknown option '$1' (options: --events N, --json FILE)" ;;
        esac
    done
    sample=${NCMP_AVC_SAMPLE:-$NCMP_ROOT/tests/bench/data/avc-sample.json}
    [ -f "$sample" ] || die "bench avc: no AVC sample at $sample (set NCMP_AVC_SAMPLE)"
    services_up
    local raw="$NCMP_BIN/tests/bench/ncmp-bench-raw" ncmpd="$NCMP_BIN/workers/ncmpd" bs log
    bs=$(kafka_bootstrap)
    log="$NCMP_INSTANCE_DIR/ncmpd.log"
    batch=$("$ncmpd" --dump-config | sed -n 's/^avc-forward.batch-size = //p')
    workers=$("$ncmpd" --dump-config | sed -n 's/^avc-forward.workers = //p')

    info "publishing $events AVC events to dmi-cm-events"
    "$raw" publish-avc -b "$bs" -t dmi-cm-events -f "$sample" -n "$events" >/dev/null ||
        die "publishing the AVC events failed"

    info "raw limit: consume dmi-cm-events and produce to a scratch topic"
    "$ncmpd" --avc-forward.output-topic=bench-raw-cm-events create-topics >/dev/null 2>&1
    raw=$("$raw" forward -b "$bs" -t dmi-cm-events -o bench-raw-cm-events -n "$events" |
        awk '{print $4}') || die "raw forward failed"

    info "avc-forward: ncmpd forwards the $events events to cm-events"
    ncmpd_start --roles=avc-forward
    t0=$(_log_time "$log" "group-avc-forward#consumer.* assigned:") ||
        die "ncmpd's avc-forward consumer got no partitions (see $log)"
    t1=$("$NCMP_BIN/tests/bench/ncmp-bench-raw" committed -b "$bs" -g ncmp-group-avc-forward \
        -t dmi-cm-events -n "$events" | awk '{print $3}') ||
        die "not every event was forwarded (see $log)"
    secs=$(_secs "$t0" "$t1")
    rate=$(_rate "$events" "$secs")
    stop_pidfile "$NCMP_INSTANCE_DIR/ncmpd.pid" ncmpd 40
    delivered=$("$NCMP_BIN/tests/bench/ncmp-bench-raw" consume -b "$bs" -t cm-events \
        -n "$events" | awk '{print $2}') || die "cm-events does not hold $events events"
    dups=$(sed -n 's/.*worker [0-9]* stopping: \([0-9]*\) forwarded.*/\1/p' "$log" |
        awk -v n="$events" '{ s += $1 } END { print s - n }')
    dlq=$(sed -n 's/.*forwarded, \([0-9]*\) dead-lettered.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')

    printf '\n%-40s %14s %10s\n' "avc, $events events ($(wc -c <"$sample") bytes)" "events/s" "vs raw"
    printf '%-40s %14s %10s\n' "avc-forward (assigned -> all committed)" "$rate" "$(_ratio "$rate" "$raw")"
    printf '%-40s %14s %10s\n' "raw consume + produce (no ncmpd)" "$raw" "1.00"
    printf 'delivered %s of %s, forwarded twice %s, dead-lettered %s, batch %s, workers %s, %s s, machine: %s cores\n' \
        "$delivered" "$events" "$dups" "$dlq" "$batch" "$workers" "$secs" "$(nproc)"
    if [ -n "$json" ]; then
        cat >"$json" <<JSON
{"scenario": "avc", "events": $events, "forwarded_per_s": $rate, "seconds": $secs,
 "raw_consume_produce_per_s": $raw, "ratio": $(_ratio "$rate" "$raw"),
 "delivered": $delivered, "duplicates": $dups, "dead_lettered": $dlq,
 "batch_size": $batch, "workers": $workers, "cores": $(nproc)}
JSON
        info "wrote $json"
    fi
    [ "$delivered" -eq "$events" ] || die "delivered $delivered of $events"
}

# bench_avc_apply [--handles N] [--events M] [--workers W] [--json FILE]:
# the AVC phase of bench data-sync alone. ncmpd runs cps and avc-apply;
# ncmp-bench-avc-apply makes N caches of one Open ROADM device through the
# CPS API (as data sync leaves them), then produces M AVC events (a leaf
# patched each) to dmi-cm-events and times them until the avc-apply
# group's offsets, committed with the writes, cover them all.
bench_avc_apply() {
    local handles=1000 events=100000 workers=2 json="" port=${NCMP_BENCH_HTTP_PORT:-28884} rc
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        --events) events=$2; shift 2 ;;
        --workers) workers=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench avc-apply: unknown option '$1' (options: --handles N, --events M, --workers W, --json FILE)" ;;
        esac
    done
    services_up
    port_in_use "$port" && die "bench avc-apply: $(port_taken "$port") (set NCMP_BENCH_HTTP_PORT)"
    ncmpd_start --roles=cps,avc-apply --http.host=127.0.0.1 --http.port="$port" \
        --avc-apply.workers="$workers"
    info "avc-apply: $handles caches, $events AVC events (ncmpd's log: $NCMP_INSTANCE_DIR/ncmpd.log)"
    "$NCMP_BIN/tests/bench/ncmp-bench-avc-apply" -u "http://127.0.0.1:$port" -d "$(pg_url)" \
        -b "$(kafka_bootstrap)" -D "$NCMP_ROOT/tests/data" -H "$handles" -M "$events" \
        ${json:+-j "$json"}
    rc=$?
    printf 'avc-apply workers %s, machine: %s cores shared by ncmpd, PostgreSQL, Kafka and the client\n' \
        "$workers" "$(nproc)"
    stop_pidfile "$NCMP_INSTANCE_DIR/ncmpd.pid" ncmpd 40
    [ $rc -eq 0 ] || die "bench avc-apply failed (rc $rc; see $NCMP_INSTANCE_DIR/ncmpd.log)"
    [ -n "$json" ] && info "wrote $json"
    return 0
}

# bench_search [--handles N] [--runs R] [--json FILE]: NCMP's ten reference
# searches (id-search and search; no filter, module, property, trust level,
# CPS path) over HTTP against the reference workload registered and READY,
# each answer holding every handle; the median of R runs each, timed by the
# client; and, in the same run, PostgreSQL returning the same rows and a
# second ncmpd answering from PostgreSQL (rest.search-index=false).
bench_search() {
    local handles=50000 runs=11 json="" gen dmi port=${NCMP_BENCH_HTTP_PORT:-28983} i n
    local port2=${NCMP_BENCH_HTTP_PORT2:-28984}
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench search: unknown option '$1' (options: --handles N, --runs R, --json FILE)" ;;
        esac
    done
    services_up
    gen="$NCMP_BIN/producers/ncmp-loadgen"
    NCMP_DMISTUB_PORT=${NCMP_BENCH_DMISTUB_PORT:-28992}
    export NCMP_DMISTUB_PORT
    dmi=$(dmistub_start) || exit 1
    ncmpd_start --roles=registration,module-sync,lcm-relay,rest --http.port="$port"
    ncmpd_wait_assigned registration
    info "registering $handles handles and waiting until all are READY"
    "$gen" register -b "$(kafka_bootstrap)" --handles "$handles" --dmi "$dmi" -q ||
        die "publishing the registrations failed"
    for ((i = 0; i < 6000; i++)); do
        n=$(pg_psql -Atc "SELECT count(*) FROM cm_handle WHERE state = 'READY'")
        [ "$n" -eq "$handles" ] && break
        sleep 0.1
    done
    [ "$n" -eq "$handles" ] || die "only $n of $handles handles READY"
    pg_psql -qc "VACUUM ANALYZE cm_handle" >/dev/null
    NCMPD_NAME=ncmpd-plain ncmpd_start --roles=rest --rest.search-index=false \
        --http.host=127.0.0.1 --http.port="$port2"
    for ((i = 0; i < 600; i++)); do
        n=$(curl -fsS "http://127.0.0.1:$port/metrics" | awk '$1 == "ncmp_search_index_handles" { printf "%d", $2 }')
        [ "${n:-0}" -eq "$handles" ] && break
        sleep 0.1
    done
    [ "${n:-0}" -eq "$handles" ] || die "the search index holds ${n:-0} of $handles handles"
    info "the ten reference searches, $runs runs each, beside PostgreSQL and an ncmpd without the index"
    "$NCMP_BIN/tests/bench/ncmp-bench-search" -u "http://127.0.0.1:$port" -d "$(pg_url)" \
        -U "http://127.0.0.1:$port2" -n "$handles" -r "$runs" ${json:+-j "$json"} ||
        die "a search failed"
    [ -n "$json" ] && info "wrote $json"
    return 0
}

# _pt_fields LINE: the figures of a line of ncmp-bench-data (pt, provmns,
# policy) into _pt_n, _pt_ok, _pt_rps, _pt_avg, _pt_p50, _pt_p99, _pt_max,
# and where ncmpd's answers said the time went into _pt_hops ("" when they
# did not): "<answers> <ncmpd avg> <p99> <dmi-wait avg> <p99> <beyond the
# stub's delay avg> <p99> <outside ncmpd avg> <p99>".
_pt_fields() {
    local rest n a1 p1 a2 p2 a3 p3 a4 p4
    read -r _ _pt_n _ _pt_ok _ _pt_rps _ _pt_avg _ _pt_p50 _ _pt_p99 _ _pt_max rest <<<"$1"
    _pt_hops=""
    if [[ "$rest" == hops* ]]; then
        read -r _ n _ a1 p1 _ a2 p2 _ a3 p3 _ a4 p4 <<<"$rest"
        _pt_hops="$n $a1 $p1 $a2 $p2 $a3 $p3 $a4 $p4"
    fi
}

# _pt_hops_row: the hops of the last _pt_fields, as a row under its own
# (nothing when there were none).
_pt_hops_row() {
    local n a1 p1 a2 p2 a3 p3 a4 p4
    [ -n "$_pt_hops" ] || return 0
    read -r n a1 p1 a2 p2 a3 p3 a4 p4 <<<"$_pt_hops"
    printf '  avg/p99 ms: ncmpd %s/%s, DMI client wait %s/%s, stub beyond its delay %s/%s, outside ncmpd %s/%s\n' \
        "$a1" "$p1" "$a2" "$p2" "$a3" "$p3" "$a4" "$p4"
}

# _pt_hops_json: the hops of the last _pt_fields as JSON members, with a
# trailing comma ("" when there were none).
_pt_hops_json() {
    local n a1 p1 a2 p2 a3 p3 a4 p4
    [ -n "$_pt_hops" ] || return 0
    read -r n a1 p1 a2 p2 a3 p3 a4 p4 <<<"$_pt_hops"
    printf ' "hops": {"answers": %s, "ncmpd_avg_ms": %s, "ncmpd_p99_ms": %s, "dmi_wait_avg_ms": %s, "dmi_wait_p99_ms": %s, "dmi_beyond_delay_avg_ms": %s, "dmi_beyond_delay_p99_ms": %s, "outside_avg_ms": %s, "outside_p99_ms": %s},' \
        "$n" "$a1" "$p1" "$a2" "$p2" "$a3" "$p3" "$a4" "$p4"
}

# _data_pt KEY LABEL ARGS...: one pass-through run of ncmp-bench-data;
# prints a table row and adds its figures to the JSON under KEY.
_data_pt() {
    local key=$1 label=$2 line
    shift 2
    line=$("$NCMP_BIN/tests/bench/ncmp-bench-data" pt --url "$_data_url" "$@") ||
        die "bench data: $label failed: $line"
    _pt_fields "$line"
    printf '%-44s %8s %8s %9s %9s %9s %9s\n' "$label" "$_pt_ok" "$_pt_rps" "$_pt_avg" "$_pt_p50" \
        "$_pt_p99" "$_pt_max"
    _pt_hops_row
    local ramp=0 a prev=""
    for a in "$@"; do
        [ "$prev" = --ramp-ms ] && ramp=$a
        prev=$a
    done
    _data_json+="\"$key\": {\"requests\": $_pt_n, \"ok\": $_pt_ok, \"rps\": $_pt_rps, \"ramp_ms\": $ramp,$(_pt_hops_json)"
    _data_json+=" \"avg_overhead_ms\": $_pt_avg, \"p50_overhead_ms\": $_pt_p50,"
    _data_json+=" \"p99_overhead_ms\": $_pt_p99, \"max_overhead_ms\": $_pt_max},"
}

# _data_stub READ_MS WRITE_MS [ARGS...]: (re)start the DMI stub with those
# data delays (module delays small: only the setup syncs modules) and ARGS.
_data_stub() {
    local read=$1 write=$2
    shift 2
    stop_pidfile "$NCMP_INSTANCE_DIR/dmistub.pid" ncmp-dmi-stub 10
    dmistub_start --read-delay-ms "$read" --write-delay-ms "$write" --module-references-delay-ms 10 \
        --module-resources-delay-ms 20 --threads 2 "$@" >/dev/null || exit 1
}

# bench_data [--handles N] [--seconds S] [--json FILE]: data access against
# the DMI stub. Pass-through read and write by alternate id at NCMP's
# reference rates (13 reads/s, 5.2 writes/s) with the reference delays
# (300/670 ms), overhead = client time - stub delay; the same at
# 200 concurrent clients (started over one delay, then at once); reads
# against a zero-delay stub
# (requests/s); legacy batch reads of 200 handles as fast as accepted,
# counting the events that reach the client topic in S seconds. The
# machine's speed (calibration_cpu_ms) at the start and the end.
bench_data() {
    local handles=10000 secs=20 json="" bs n cal0 cal1
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        --seconds) secs=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench data: unknown option '$1' (options: --handles N, --seconds S, --json FILE)" ;;
        esac
    done
    services_up
    bs=$(kafka_bootstrap)
    "$NCMP_BIN/workers/ncmpd" --ingest.topic=legacy_batch_topic create-topics \
        >>"$NCMP_INSTANCE_DIR/setup.log" 2>&1 || die "creating the client topic failed"
    _data_stub 300 670
    _data_url="http://127.0.0.1:${NCMP_BENCH_HTTP_PORT:-28883}"
    ncmpd_start --roles=registration,module-sync,lcm-relay,rest,async-forward \
        --http.host=127.0.0.1 --http.port="${NCMP_BENCH_HTTP_PORT:-28883}"
    ncmpd_wait_assigned registration
    info "registering $handles handles (the reference workload) and waiting until READY"
    "$NCMP_BIN/producers/ncmp-loadgen" register -b "$bs" --handles "$handles" \
        --dmi "http://127.0.0.1:${NCMP_DMISTUB_PORT:-8092}" -q || die "registration failed"
    for ((n = 0; n < 1200; n++)); do
        [ "$(pg_psql -Atc "SELECT count(*) FROM cm_handle WHERE state = 'READY'")" -ge "$handles" ] &&
            break
        sleep 0.5
    done
    [ "$n" -lt 1200 ] || die "handles not READY after 600 s"
    sleep 2 # the last READY events reach the handle map

    cal0=$(_calibrate)
    _data_json="{\"scenario\": \"data\", \"handles\": $handles, \"seconds\": $secs, \"cores\": $(nproc),"
    printf '\n%-44s %8s %8s %9s %9s %9s %9s\n' "data, $handles handles, $secs s per run" ok req/s \
        "avg ms" "p50 ms" "p99 ms" "max ms"
    _data_pt read_reference_rate "read overhead, 13/s (stub 300 ms)" --method GET --rate 13 --delay-ms 300 \
        --handles "$handles" --seconds "$secs"
    _data_pt write_reference_rate "write overhead, 5.2/s (stub 670 ms)" --method POST --rate 5.2 --delay-ms 670 \
        --handles "$handles" --seconds "$secs"
    # 200 clients started one after the other over one delay, then all at
    # once (bench provmns says why both)
    _data_pt read_200_concurrent "read overhead, 200 concurrent (stub 300 ms)" --method GET --concurrency 200 \
        --delay-ms 300 --ramp-ms 300 --handles "$handles" --seconds "$secs"
    _data_pt write_200_concurrent "write overhead, 200 concurrent (stub 670 ms)" --method POST --concurrency 200 \
        --delay-ms 670 --ramp-ms 670 --handles "$handles" --seconds "$secs"
    _data_pt read_200_concurrent_same_start "  the same, started at once" --method GET --concurrency 200 \
        --delay-ms 300 --handles "$handles" --seconds "$secs"
    _data_pt write_200_concurrent_same_start "  the same, started at once" --method POST --concurrency 200 \
        --delay-ms 670 --handles "$handles" --seconds "$secs"

    local line breq bok bev brate
    line=$("$NCMP_BIN/tests/bench/ncmp-bench-data" batch --url "$_data_url" --bootstrap "$bs" \
        --topic legacy_batch_topic --handles "$handles" --concurrency 4 --seconds "$secs") ||
        die "bench data: batch failed: $line"
    read -r _ breq _ bok _ _ _ bev _ brate _ <<<"$line"
    printf '%-44s %8s %8s   events: %s in %s s = %s events/s\n' "legacy batch read, 200 handles each" \
        "$bok" "$(_rate "$bok" "$secs")" "$bev" "$secs" "$brate"
    _data_json+="\"batch\": {\"requests\": $breq, \"ok\": $bok, \"events\": $bev, \"events_per_s\": $brate},"

    _data_stub 0 0
    _data_pt read_zero_delay "read, zero-delay stub, 200 concurrent" --method GET --concurrency 200 \
        --delay-ms 0 --handles "$handles" --seconds "$secs"
    cal1=$(_calibrate)
    _data_json+="$(_calibration_json "$cal0" "$cal1"),"
    printf 'machine: %s cores shared by ncmpd, the stub, the client, PostgreSQL and Kafka\n' "$(nproc)"
    _calibration_line "$cal0" "$cal1"
    if [ -n "$json" ]; then
        printf '%s\n' "${_data_json%,}}" >"$json"
        info "wrote $json"
    fi
}

# --- bench provmns ------------------------------------------------------------

# _pm_row LABEL LINE: a table row of one ncmp-bench-data line.
_pm_row() {
    _pt_fields "$2"
    printf '%-48s %7s %8s %8s %8s %8s %8s\n' "$1" "$_pt_ok" "$_pt_rps" "$_pt_avg" "$_pt_p50" \
        "$_pt_p99" "$_pt_max"
    _pt_hops_row
}

# _pm_run VAR LABEL ARGS...: one run of ncmp-bench-data ARGS (its mode and
# options, the handles and seconds added); its line into VAR and the table.
# A request that did not succeed fails the benchmark.
_pm_run() {
    local var=$1 label=$2 line err="$NCMP_INSTANCE_DIR/bench-data.err"
    shift 2
    line=$("$NCMP_BIN/tests/bench/ncmp-bench-data" "$@" --handles "$_pm_handles" \
        --seconds "${_pm_run_secs:-$_pm_secs}" 2>"$err") ||
        die "bench provmns: $label failed: $line $(head -n 5 "$err")"
    _pm_row "$label" "$line"
    printf -v "$var" '%s' "$line"
}

# _pm_kpi STUB: NCMP's ProvMnS load at its KPI rates (40 reads/s, 1
# patch/s by random alternate id) through ncmpd and, at the same time, the
# same load straight to the STUB (so that both meet the same moments of
# the machine), beside bench data's pass-through load at its rates (13
# reads/s, 5.2 writes/s) through ncmpd: six clients at once for $_pm_secs
# s, on the stub with the reference delays. The lines into _pm_kr, _pm_kp
# (ProvMnS reads, patches through ncmpd), _pm_dr, _pm_dp (straight to the
# stub) and _pm_ptr, _pm_ptw (pass-through); the rows printed.
_pm_kpi() {
    local stub=$1 dir="$NCMP_INSTANCE_DIR/kpi" bin="$NCMP_BIN/tests/bench/ncmp-bench-data"
    local common=(--handles "$_pm_handles" --seconds "$_pm_secs") pids=() p f failed=0
    mkdir -p "$dir"
    rm -f "$dir"/*
    # name url mode method rate delay
    while read -r f url mode method rate delay; do
        "$bin" "$mode" --url "$url" --method "$method" --rate "$rate" --delay-ms "$delay" "${common[@]}" \
            >"$dir/$f" 2>>"$dir/err" </dev/null &
        pids+=($!)
    done <<CLIENTS
read $_pm_url provmns GET 40 300
patch $_pm_url provmns PATCH 1 670
read-direct $stub provmns GET 40 300
patch-direct $stub provmns PATCH 1 670
ptread $_pm_url pt GET 13 300
ptwrite $_pm_url pt POST 5.2 670
CLIENTS
    for p in "${pids[@]}"; do
        wait "$p" || failed=1
    done
    [ $failed -eq 0 ] || die "bench provmns: the KPI-rate run failed: $(cat "$dir"/read "$dir"/patch \
        "$dir"/read-direct "$dir"/patch-direct "$dir"/ptread "$dir"/ptwrite; head -n 5 "$dir/err")"
    _pm_kr=$(cat "$dir/read") _pm_kp=$(cat "$dir/patch")
    _pm_dr=$(cat "$dir/read-direct") _pm_dp=$(cat "$dir/patch-direct")
    _pm_ptr=$(cat "$dir/ptread") _pm_ptw=$(cat "$dir/ptwrite")
    _pm_row "read 40/s (stub 300 ms), ncmpd" "$_pm_kr"
    _pm_row "read 40/s (stub 300 ms), stub alone, same time" "$_pm_dr"
    _pm_row "patch 1/s (stub 670 ms), ncmpd" "$_pm_kp"
    _pm_row "patch 1/s (stub 670 ms), stub alone, same time" "$_pm_dp"
    _pm_row "  pass-through read 13/s beside them, ncmpd" "$_pm_ptr"
    _pm_row "  pass-through write 5.2/s beside them, ncmpd" "$_pm_ptw"
}

# _pm_members PREFIX LINE: the figures of LINE as JSON members PREFIXrequests,
# PREFIXok, PREFIXrps, PREFIX{avg,p50,p99,max}_overhead_ms.
_pm_members() {
    _pt_fields "$2"
    printf '"%srequests": %s, "%sok": %s, "%srps": %s, "%savg_overhead_ms": %s, ' \
        "$1" "$_pt_n" "$1" "$_pt_ok" "$1" "$_pt_rps" "$1" "$_pt_avg"
    printf '"%sp50_overhead_ms": %s, "%sp99_overhead_ms": %s, "%smax_overhead_ms": %s' \
        "$1" "$_pt_p50" "$1" "$_pt_p99" "$1" "$_pt_max"
}

# _pm_field NAME LINE: one figure (n ok rps avg p50 p99 max) of LINE.
_pm_field() {
    _pt_fields "$2"
    local v="_pt_$1"
    printf '%s' "${!v}"
}

_pm_sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
_pm_mean2() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (a + b) / 2 }'; }

# _pm_phase KEY SETTINGS LINE DIRECT: a JSON member KEY: SETTINGS (JSON
# members), the figures through ncmpd (LINE), the same requests straight
# to the stub (DIRECT, as direct_*), what ncmpd adds (added_*: through
# ncmpd minus straight) and the ratio of the throughputs.
_pm_phase() {
    local key=$1 settings=$2 line=$3 direct=$4
    printf '"%s": {%s, %s, %s, "added_avg_ms": %s, "added_p50_ms": %s, "added_p99_ms": %s, "rps_vs_direct": %s},' \
        "$key" "$settings" "$(_pm_members "" "$line")" "$(_pm_members direct_ "$direct")" \
        "$(_pm_sub "$(_pm_field avg "$line")" "$(_pm_field avg "$direct")")" \
        "$(_pm_sub "$(_pm_field p50 "$line")" "$(_pm_field p50 "$direct")")" \
        "$(_pm_sub "$(_pm_field p99 "$line")" "$(_pm_field p99 "$direct")")" \
        "$(_ratio "$(_pm_field rps "$line")" "$(_pm_field rps "$direct")")"
}

# _pm_probe BASE: wait (60 s at most) until BASE answers ProvMnS reads of
# the first and the last handle.
_pm_probe() {
    local fdn="SubNetwork=Europe/SubNetwork=Ireland/MeContext=MyRadioNode%s/ManagedElement=MyManagedElement%s"
    local i id url
    for id in 1 "$_pm_handles"; do
        # shellcheck disable=SC2059
        url="$1/ProvMnS/v1/$(printf "$fdn" "$id" "$id")"
        for ((i = 0; i < 200; i++)); do
            curl -fsS -o /dev/null --max-time 5 "$url" 2>/dev/null && break
            sleep 0.3
        done
        [ "$i" -lt 200 ] || die "bench provmns: $url does not answer 200 (logs in $NCMP_INSTANCE_DIR)"
    done
}

# bench_provmns [--handles N] [--seconds S] [--json FILE]: ProvMnS through
# ncmpd's proxy (GET/PATCH /ProvMnS/v1<alternate id>) against the DMI stub,
# overhead = client time - the stub's delay, as NCMP computes it; every
# run also straight to the stub (the same requests: the raw DMI round
# trip) in the same run. Phases of S s: NCMP's KPI rates (40 reads/s, 1
# patch/s, beside bench data's pass-through load at its rates) with the
# reference delays (300 ms read, 670 ms write), through ncmpd and
# straight to the stub at the same time; reads at 200 concurrent clients
# started over 300 ms, then the same straight to the stub, and both again
# with the clients started at once; reads against a zero-delay stub
# (requests/s); then patches at 40/s against that stub through two ncmpd,
# the policy executor off and on (the stub's, allowing, no delay), in the
# rounds off, on, on, off of S/2 s each: policy_added_ms is the mean of
# the rounds' medians on minus off; beside it, a permission request
# straight to the policy stub. The machine's speed (calibration_cpu_ms)
# is measured at the start and the end, so that runs are compared only
# where it agrees.
bench_provmns() {
    local json="" port=${NCMP_BENCH_HTTP_PORT:-28883} port2 stub bs t0 j load0 load1 cal0 cal1
    _pm_handles=50000 _pm_secs=30
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) _pm_handles=$2; shift 2 ;;
        --seconds) _pm_secs=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench provmns: unknown option '$1' (options: --handles N, --seconds S, --json FILE)" ;;
        esac
    done
    [ "$_pm_secs" -ge 2 ] 2>/dev/null || die "bench provmns: --seconds must be 2 or more"
    port2=${NCMP_BENCH_POLICY_HTTP_PORT:-$((port + 1))}
    NCMP_DMISTUB_PORT=${NCMP_BENCH_DMISTUB_PORT:-28992}
    export NCMP_DMISTUB_PORT
    local p
    for p in "$port" "$port2"; do
        port_in_use "$p" && die "bench provmns: $(port_taken "$p") (NCMP_BENCH_HTTP_PORT, NCMP_BENCH_POLICY_HTTP_PORT)"
    done
    services_up
    bs=$(kafka_bootstrap)
    stub="http://127.0.0.1:$NCMP_DMISTUB_PORT"
    _pm_url="http://127.0.0.1:$port"
    _data_stub 300 670 --provmns-read-delay-ms 300 --provmns-write-delay-ms 670
    ncmpd_start --roles=registration,module-sync,lcm-relay,rest --http.host=127.0.0.1 --http.port="$port"
    ncmpd_wait_assigned registration
    info "registering $_pm_handles handles (the reference workload) and waiting until READY"
    t0=$(_now)
    "$NCMP_BIN/producers/ncmp-loadgen" register -b "$bs" --handles "$_pm_handles" --dmi "$stub" -q ||
        die "registration failed"
    _wait_all_ready "$_pm_handles" "$t0" 1200 || die "handles not READY after 1200 s"
    sleep 2 # the last READY events reach the handle cache
    _pm_probe "$_pm_url"
    # the registration's writes settled, not measured with the requests
    pg_psql -qc "VACUUM ANALYZE" >/dev/null && pg_psql -qc "CHECKPOINT" >/dev/null

    load0=$(cut -d' ' -f1 /proc/loadavg)
    cal0=$(_calibrate)
    j="{\"scenario\": \"provmns\", \"handles\": $_pm_handles, \"seconds\": $_pm_secs, \"cores\": $(nproc),"
    printf '\n%-48s %7s %8s %8s %8s %8s %8s\n' "provmns, $_pm_handles handles, $_pm_secs s per run" ok \
        req/s "avg ms" "p50 ms" "p99 ms" "max ms"
    printf 'overhead = client time - the stub'"'"'s delay; "stub alone": the same requests straight to the stub\n'
    local dr dp kr kp
    _pm_kpi "$stub"
    kr=$_pm_kr kp=$_pm_kp dr=$_pm_dr dp=$_pm_dp
    j+=$(_pm_phase read_kpi_rate '"rate_per_s": 40, "delay_ms": 300' "$kr" "$dr")
    j+=$(_pm_phase patch_kpi_rate '"rate_per_s": 1, "delay_ms": 670' "$kp" "$dp")
    j+="\"passthrough_read_kpi_rate\": {\"rate_per_s\": 13, \"delay_ms\": 300, $(_pm_members "" "$_pm_ptr")},"
    j+="\"passthrough_write_kpi_rate\": {\"rate_per_s\": 5.2, \"delay_ms\": 670, $(_pm_members "" "$_pm_ptw")},"

    # 200 clients, each sending its next read when the last is answered:
    # started one after the other over the first 300 ms (as clients that
    # do not start in the same millisecond), then all started at once.
    # Against the stub's fixed delay, clients started at once stay
    # together: every 300 ms their 200 reads arrive within a few ms, a
    # burst the second run measures.
    local d c c200 d200 cs ds
    _pm_run d "read 200 concurrent (stub 300 ms), stub alone" provmns --url "$stub" --method GET \
        --concurrency 200 --delay-ms 300 --ramp-ms 300
    _pm_run c "read 200 concurrent (stub 300 ms), ncmpd" provmns --url "$_pm_url" --method GET \
        --concurrency 200 --delay-ms 300 --ramp-ms 300
    j+=$(_pm_phase read_200_concurrent '"concurrency": 200, "delay_ms": 300, "ramp_ms": 300' "$c" "$d")
    c200=$c d200=$d
    _pm_run ds "read 200 concurrent, started at once, stub alone" provmns --url "$stub" --method GET \
        --concurrency 200 --delay-ms 300
    _pm_run cs "read 200 concurrent, started at once, ncmpd" provmns --url "$_pm_url" --method GET \
        --concurrency 200 --delay-ms 300
    j+=$(_pm_phase read_200_concurrent_same_start '"concurrency": 200, "delay_ms": 300, "ramp_ms": 0' \
        "$cs" "$ds")

    _data_stub 0 0 --provmns-read-delay-ms 0 --provmns-write-delay-ms 0 --policy-decision allow \
        --policy-delay-ms 0
    _pm_run d "read 200 concurrent, zero-delay stub, stub alone" provmns --url "$stub" --method GET \
        --concurrency 200 --delay-ms 0
    # ncmpd's CPU time per request there: on a shared machine it holds when
    # the requests/s carry others' load
    local npid cpu0 cpu_us
    npid=$(cat "$NCMP_INSTANCE_DIR/ncmpd.pid")
    cpu0=$(_cpu_ticks "$npid")
    _pm_run c "read 200 concurrent, zero-delay stub, ncmpd" provmns --url "$_pm_url" --method GET \
        --concurrency 200 --delay-ms 0
    cpu_us=$(awk -v t="$(($(_cpu_ticks "$npid") - cpu0))" -v hz="$(getconf CLK_TCK)" \
        -v n="$(_pm_field ok "$c")" 'BEGIN { printf "%.1f", (n > 0 ? t * 1e6 / hz / n : 0) }')
    j+=$(_pm_phase read_zero_delay '"concurrency": 200, "delay_ms": 0, "ncmpd_cpu_us_per_request": '"$cpu_us" "$c" "$d")

    # the policy check: two ncmpd serving REST alone, the same but for it
    stop_pidfile "$NCMP_INSTANCE_DIR/ncmpd.pid" ncmpd 40
    NCMPD_NAME=ncmpd-policy-off ncmpd_start --roles=rest --http.host=127.0.0.1 --http.port="$port"
    NCMPD_NAME=ncmpd-policy-on ncmpd_start --roles=rest --http.host=127.0.0.1 --http.port="$port2" \
        --policy-executor.enabled=true --policy-executor.url="$stub"
    _pm_probe "$_pm_url"
    _pm_probe "http://127.0.0.1:$port2"
    local half=$((_pm_secs / 2)) off1 on1 on2 off2 pol _pm_run_secs
    _pm_run_secs=$half
    _pm_run off1 "patch 40/s, zero-delay stub, policy off (1)" provmns --url "$_pm_url" --method PATCH \
        --rate 40 --delay-ms 0
    _pm_run on1 "patch 40/s, zero-delay stub, policy on (1)" provmns --url "http://127.0.0.1:$port2" \
        --method PATCH --rate 40 --delay-ms 0
    _pm_run on2 "patch 40/s, zero-delay stub, policy on (2)" provmns --url "http://127.0.0.1:$port2" \
        --method PATCH --rate 40 --delay-ms 0
    _pm_run off2 "patch 40/s, zero-delay stub, policy off (2)" provmns --url "$_pm_url" --method PATCH \
        --rate 40 --delay-ms 0
    _pm_run pol "permission request 40/s, policy stub alone" policy --url "$stub" --rate 40 --delay-ms 0
    local onp offp ona offa added
    onp=$(_pm_mean2 "$(_pm_field p50 "$on1")" "$(_pm_field p50 "$on2")")
    offp=$(_pm_mean2 "$(_pm_field p50 "$off1")" "$(_pm_field p50 "$off2")")
    ona=$(_pm_mean2 "$(_pm_field avg "$on1")" "$(_pm_field avg "$on2")")
    offa=$(_pm_mean2 "$(_pm_field avg "$off1")" "$(_pm_field avg "$off2")")
    added=$(_pm_sub "$onp" "$offp")
    j+="\"policy\": {\"rate_per_s\": 40, \"delay_ms\": 0, \"seconds_per_round\": $half,"
    j+=" \"statistic\": \"median\", \"off_p50_ms\": $offp, \"on_p50_ms\": $onp,"
    j+=" \"added_p50_ms\": $added, \"off_avg_ms\": $offa, \"on_avg_ms\": $ona,"
    j+=" \"added_avg_ms\": $(_pm_sub "$ona" "$offa"),"
    j+=" \"rounds\": [{\"policy\": \"off\", $(_pm_members "" "$off1")}, {\"policy\": \"on\", $(_pm_members "" "$on1")},"
    j+=" {\"policy\": \"on\", $(_pm_members "" "$on2")}, {\"policy\": \"off\", $(_pm_members "" "$off2")}],"
    j+=" $(_pm_members direct_policy_ "$pol")},"
    load1=$(cut -d' ' -f1 /proc/loadavg)
    cal1=$(_calibrate)
    # the 1-minute load average, other work on the machine included
    j+="\"load_average_start\": $load0, \"load_average_end\": $load1,"
    j+="$(_calibration_json "$cal0" "$cal1"),"
    j+="\"policy_added_ms\": $added}"

    printf '\nwhat ncmpd adds to the stub alone: read 40/s %s ms avg, patch 1/s %s ms avg, ' \
        "$(_pm_sub "$(_pm_field avg "$kr")" "$(_pm_field avg "$dr")")" \
        "$(_pm_sub "$(_pm_field avg "$kp")" "$(_pm_field avg "$dp")")"
    printf 'read 200 concurrent %s ms p99 (started at once: %s ms)\n' \
        "$(_pm_sub "$(_pm_field p99 "$c200")" "$(_pm_field p99 "$d200")")" \
        "$(_pm_sub "$(_pm_field p99 "$cs")" "$(_pm_field p99 "$ds")")"
    printf 'zero-delay reads: ncmpd %s/s, the stub alone %s/s (%s); ncmpd CPU %s us per request\n' \
        "$(_pm_field rps "$c")" "$(_pm_field rps "$d")" \
        "$(_ratio "$(_pm_field rps "$c")" "$(_pm_field rps "$d")")" "$cpu_us"
    printf 'policy check (median of patches, on - off): %s ms; a permission request alone: %s ms median\n' \
        "$added" "$(_pm_field p50 "$pol")"
    printf 'machine: %s cores shared by ncmpd, the stub, the clients, PostgreSQL and Kafka; ' "$(nproc)"
    printf 'load average %s at the start, %s at the end\n' "$load0" "$load1"
    _calibration_line "$cal0" "$cal1"
    if [ -n "$json" ]; then
        printf '%s\n' "$j" >"$json"
        info "wrote $json"
    fi
}

# --- overload ---------------------------------------------------------------

# _ol_list: the overload's clients, one per line "name rate mode args":
# NCMP's KPI scenarios (WORKLOAD.md §1.5) by kind, the searches' five
# filters in turn.
_ol_list() {
    cat <<CLIENTS
pt_read 13 pt --method GET --delay-ms 300 --timeout-s 10
pt_write 5.2 pt --method POST --delay-ms 670 --timeout-s 10
provmns_read 40 provmns --method GET --delay-ms 300 --timeout-s 10
provmns_write 1 provmns --method PATCH --delay-ms 670 --timeout-s 10
id_search 0.9615 search --kind id --timeout-s 10
search 0.1042 search --kind full --timeout-s 30
datajob_small 2 datajob --ops 100 --timeout-s 10
datajob_large 0.016667 datajob --ops 100000 --timeout-s 60
batch_read 0.5 batch --bootstrap $(kafka_bootstrap) --topic bench-overload-batch --timeout-s 10
CLIENTS
}

# _ol_clients PHASE FACTOR SECS [LIST]: the clients of LIST (lines "name
# rate mode args"; default _ol_list) at FACTOR times their rates for SECS
# s, all at once, each an open-loop ncmp-bench-data writing its report to
# $_ol_dir/PHASE-NAME.json; NCMP's AVC background load (5,500 events/s)
# beside them. Waits for all of them.
_ol_clients() {
    local phase=$1 f=$2 secs=$3 list=${4:-$(_ol_list)} bin="$NCMP_BIN/tests/bench/ncmp-bench-data"
    local name mode args rate pids=() p common=(--handles "$_ol_handles" --seconds "$secs")
    while read -r name rate mode args; do
        # shellcheck disable=SC2086
        "$bin" $mode --url "$_ol_url" --rate "$(awk -v r="$rate" -v f="$f" 'BEGIN { print r * f }')" \
            "${common[@]}" $args --report "$_ol_dir/$phase-$name.json" \
            >>"$_ol_dir/clients.out" 2>>"$_ol_dir/clients.err" </dev/null &
        pids+=($!)
    done <<<"$list"
    "$NCMP_BIN/tests/bench/ncmp-bench-raw" publish-avc -b "$(kafka_bootstrap)" -t dmi-cm-events \
        -f "$_ol_avc" -n "$((5500 * f * secs))" -R "$((5500 * f))" \
        >"$_ol_dir/$phase-avc.out" 2>>"$_ol_dir/clients.err" </dev/null &
    pids+=($!)
    for p in "${pids[@]}"; do
        wait "$p" || die "bench: a load client of the $phase phase failed ($(tail -n 3 "$_ol_dir/clients.err"))"
    done
    # publish-avc <acked> <seconds> <per second> [late]: what the AVC
    # publisher managed of its schedule
    awk -v p="$phase" -v want="$((5500 * f * secs))" '{ printf "{\"phase\": \"%s\", \"scheduled\": %s, \"published\": %s, \"seconds\": %s, \"per_s\": %s}\n", p, want, $2, $3, $4 }' \
        "$_ol_dir/$phase-avc.out" >>"$_ol_dir/avc.json"
}

# _ol_metric TEXT SERIES: the value of SERIES (name and labels as
# rendered) in a Prometheus exposition, summed over its samples; 0 when
# absent, null when TEXT is empty (the scrape got no answer).
_ol_metric() {
    [ -n "$1" ] || { printf null; return; } # no scrape: unknown, not 0
    awk -v s="$2" 'index($0, s) == 1 { v += $NF } END { printf "%.0f", v }' <<<"$1"
}

# _ol_sampler PID: every 2 s until killed, one JSON line to
# $_ol_dir/samples.jsonl: ncmpd's RSS, open fds and threads, what its
# metrics say of its bounded queues, the AVC forwarder's lag and how long
# the liveness probe took (-1: no answer within 5 s).
_ol_sampler() {
    local pid=$1 t0 m probe rss fds threads
    t0=$(_now)
    while kill -0 "$pid" 2>/dev/null; do
        m=$(curl -s --max-time 5 "$_ol_url/actuator/prometheus" || true)
        probe=$(curl -s -o /dev/null --max-time 5 -w '%{time_total}' "$_ol_url/actuator/health/liveness" ||
            echo -1)
        rss=$(_vm_kb "$pid" VmRSS 2>/dev/null) threads=$(_vm_kb "$pid" Threads 2>/dev/null)
        fds=$(find "/proc/$pid/fd" -mindepth 1 2>/dev/null | wc -l)
        [ -n "$rss" ] && [ -n "$threads" ] || break
        printf '{"t": %s, "phase": "%s", "rss_mb": %s, "fds": %s, "threads": %s, "http_in_flight": %s, "dmi_in_flight": %s, "shed_http": %s, "shed_db": %s, "shed_dmi": %s, "avc_lag": %s, "probe_ms": %s}\n' \
            "$(_secs "$t0" "$(_now)")" "$(cat "$_ol_dir/phase" 2>/dev/null)" \
            "$(_mb "$rss")" "$fds" "$threads" "$(_ol_metric "$m" ncmp_http_requests_in_flight)" \
            "$(_ol_metric "$m" ncmp_dmi_requests_in_flight)" \
            "$(_ol_metric "$m" 'ncmp_shed_requests_total{reason="http-in-flight"}')" \
            "$(_ol_metric "$m" 'ncmp_shed_requests_total{reason="db"}')" \
            "$(_ol_metric "$m" 'ncmp_shed_requests_total{reason="dmi-in-flight"}')" \
            "$(_ol_metric "$m" 'ncmp_consumer_lag_records{role="avc-forward"')" \
            "$(awk -v s="$probe" 'BEGIN { printf "%.1f", (s < 0 ? -1 : s * 1000) }')" \
            >>"$_ol_dir/samples.jsonl"
        sleep 2
    done
}

# bench_overload [--handles N] [--minutes M] [--factor F] [--json FILE] [--plot PNG]:
# NCMP's KPI load (every scenario of its kpi profile at once, open loop,
# against the DMI stub with the reference delays) at 1x for 60 s, then at
# F times (10) for M minutes (3), then at 1x again for 60 s, on N handles
# (50,000) through one ncmpd with every role. What is judged: ncmpd stays
# up and answers its liveness probe; every request gets an answer in time
# (a refusal for load is a 503 or 429 with Retry-After, never a client
# timeout or a broken connection); the AVC forwarder's lag, grown under
# the load, comes back to 0 after it; the latency of the last phase is
# back to the first's; RSS and open files level off. Beside the figures,
# the raw limit of the machine in the same run: the clients' own CPU time.
bench_overload() {
    local json="" plot="" port=${NCMP_BENCH_HTTP_PORT:-28886} minutes=3 factor=10 bs dmi pid sampler
    local t0 tcatch catch_up lag settle=300 phase_secs=60 j
    _ol_handles=50000
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) _ol_handles=$2; shift 2 ;;
        --minutes) minutes=$2; shift 2 ;;
        --factor) factor=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        --plot) plot=$2; shift 2 ;;
        *) die "bench overload: unknown option '$1' (options: --handles N, --minutes M, --factor F, --json FILE, --plot PNG)" ;;
        esac
    done
    [[ "$_ol_handles" =~ ^[1-9][0-9]*$ && "$factor" =~ ^[1-9][0-9]*$ && "$minutes" =~ ^[0-9]*\.?[0-9]+$ ]] ||
        die "bench overload: --handles and --factor want positive integers, --minutes a positive number"
    _ol_avc=${NCMP_AVC_SAMPLE:-$NCMP_ROOT/tests/bench/data/avc-sample.json}
    port_in_use "$port" && die "bench overload: $(port_taken "$port") (NCMP_BENCH_HTTP_PORT)"
    NCMP_DMISTUB_PORT=${NCMP_BENCH_DMISTUB_PORT:-28993}
    export NCMP_DMISTUB_PORT
    services_up
    bs=$(kafka_bootstrap)
    _ol_dir="$NCMP_INSTANCE_DIR/overload"
    mkdir -p "$_ol_dir"
    rm -f "$_ol_dir"/*
    : >"$_ol_dir/avc.json"
    _ol_url="http://127.0.0.1:$port"
    _data_stub 300 670 --provmns-read-delay-ms 300 --provmns-write-delay-ms 670
    dmi="http://127.0.0.1:$NCMP_DMISTUB_PORT"
    ncmpd_start --http.host=127.0.0.1 --http.port="$port"
    ncmpd_wait_assigned registration
    pid=$(cat "$NCMP_INSTANCE_DIR/ncmpd.pid")
    # the legacy batch reads' client topic
    "$NCMP_BIN/workers/ncmpd" --ingest.topic=bench-overload-batch create-topics \
        >>"$NCMP_INSTANCE_DIR/setup.log" 2>&1 || die "bench overload: cannot create the batch topic"
    _register_ready "$_ol_handles" "$dmi"
    sleep 2 # the last READY events reach the handle map
    pg_psql -qc "VACUUM ANALYZE" >/dev/null && pg_psql -qc "CHECKPOINT" >/dev/null

    echo baseline >"$_ol_dir/phase"
    _ol_sampler "$pid" &
    sampler=$!
    info "overload: 1x NCMP's KPI load for $phase_secs s"
    _ol_clients baseline 1 "$phase_secs"
    echo overload >"$_ol_dir/phase"
    info "overload: ${factor}x for $minutes min"
    _ol_clients overload "$factor" "$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 + 0.5 }')"
    echo recovery >"$_ol_dir/phase"
    info "overload: 1x again for $phase_secs s"
    t0=$(_now)
    _ol_clients recovery 1 "$phase_secs"
    # the AVC forwarder's lag back to 0 (counted from the end of the overload)
    echo settle >"$_ol_dir/phase"
    catch_up=null
    while :; do
        lag=$(_ol_metric "$(curl -s --max-time 5 "$_ol_url/actuator/prometheus" || true)" \
            'ncmp_consumer_lag_records{role="avc-forward"')
        tcatch=$(_secs "$t0" "$(_now)")
        [ "$lag" = 0 ] && { catch_up=$tcatch; break; }
        awk -v a="$tcatch" -v s="$settle" 'BEGIN { exit !(a > s) }' && break
        sleep 1
    done
    kill "$sampler" 2>/dev/null
    wait "$sampler" 2>/dev/null

    j=$(_ol_json "$factor" "$minutes" "$phase_secs" "$catch_up" "$pid")
    _ol_table "$j"
    [ -n "$plot" ] && _ol_plot "$j" "$plot"
    if [ -n "$json" ]; then
        printf '%s\n' "$j" >"$json"
        info "wrote $json"
    fi
    [ "$(jq -r .passed <<<"$j")" = true ] || die "bench overload: not passed (see the table; logs in $NCMP_INSTANCE_DIR)"
}

# _ol_json FACTOR MINUTES PHASE_SECS CATCH_UP PID: the run as JSON, from
# the clients' reports ($_ol_dir/PHASE-NAME.json) and the samples.
_ol_json() {
    local alive=false
    kill -0 "$5" 2>/dev/null && alive=true
    jq -n --argjson factor "$1" --argjson minutes "$2" --argjson phase_secs "$3" \
        --argjson catch_up "$4" --argjson alive "$alive" --argjson handles "$_ol_handles" \
        --argjson cores "$(nproc)" --slurpfile samples "$_ol_dir/samples.jsonl" \
        --slurpfile avc "$_ol_dir/avc.json" '
        (reduce inputs as $r ({};
            (input_filename | split("/") | last | rtrimstr(".json") | split("-")) as $pn
            | .[$pn[0]][$pn[1:] | join("-")] = $r)) as $all |
        ($all | map_values(map_values(del(.timeline)))) as $rep |
        ($all | map_values(map_values([.timeline[] |
            [.t, .ok, .shed, .failed, .timeouts, .errors, .p50_ms, .p99_ms]]))) as $tl |
        def tot($p): ($rep[$p] // {}) | [.[]] as $c |
            {sent: ([$c[].sent] | add), ok: ([$c[].ok] | add), shed: ([$c[].shed] | add),
             failed: ([$c[].failed] | add), timeouts: ([$c[].timeouts] | add),
             errors: ([$c[].errors] | add),
             shed_without_retry_after: ([$c[].shed_without_retry_after] | add),
             client_cpu_s: ([$c[].client_cpu_s] | add)};
        def first_of($k): ($samples | map(select(.[$k] != null)) | .[0][$k]);
        def last_of($k): ($samples | map(select(.phase == "recovery" or .phase == "settle")) | .[-1][$k]);
        def max_of($k): ($samples | map(.[$k]) | max);
        {baseline: tot("baseline"), overload: tot("overload"), recovery: tot("recovery")} as $t |
        ($rep.baseline.pt_read.p50_ms // 0) as $b50 |
        ($rep.recovery.pt_read.p50_ms // 0) as $r50 |
        ($samples | map(select(.phase == "overload")) | map(.probe_ms) | max) as $probe_max |
        ($samples | map(select(.probe_ms < 0)) | length) as $probe_missed |
        ([$t[].timeouts] | add) as $timeouts | ([$t[].errors] | add) as $errors |
        ([$t[].shed_without_retry_after] | add) as $bare |
        {scenario: "overload", handles: $handles, cores: $cores, factor: $factor,
         overload_minutes: $minutes, phase_seconds: $phase_secs,
         totals: $t, timeouts: $timeouts, errors: $errors, shed: ([$t[].shed] | add),
         shed_without_retry_after: $bare,
         overload_answered_ratio: (if $t.overload.sent > 0 then (($t.overload.ok + $t.overload.shed + $t.overload.failed) / $t.overload.sent) else 0 end),
         overload_ok_ratio: (if $t.overload.sent > 0 then ($t.overload.ok / $t.overload.sent) else 0 end),
         baseline_pt_read_p50_ms: $b50, recovery_pt_read_p50_ms: $r50,
         recovered: ($r50 <= 2 * $b50 + 1),
         avc: $avc, avc_lag_max: max_of("avc_lag"),
         avc_catch_up_s: (if $catch_up == null then null else
             ($samples | map(select(.phase == "recovery" or .phase == "settle")) as $after |
              ($after | map(select(.avc_lag == 0)) | .[0].t // null) as $zero |
              if $zero == null then null else (($zero - $after[0].t) * 10 | round / 10) end) end),
         probe_ms_max_overload: $probe_max, probes_missed: $probe_missed,
         rss_mb_first: first_of("rss_mb"), rss_mb_max: max_of("rss_mb"), rss_mb_last: last_of("rss_mb"),
         fds_first: first_of("fds"), fds_max: max_of("fds"), fds_last: last_of("fds"),
         threads_first: first_of("threads"), threads_last: last_of("threads"),
         ncmpd_alive: $alive,
         passed: ($alive and $timeouts == 0 and $errors == 0 and $bare == 0
                  and ($r50 <= 2 * $b50 + 1) and $catch_up != null and $probe_missed == 0),
         clients: $rep,
         timeline_columns: ["t", "ok", "shed", "failed", "timeouts", "errors", "p50_ms", "p99_ms"],
         timelines: $tl, samples: $samples}' \
        "$_ol_dir"/baseline-*.json "$_ol_dir"/overload-*.json "$_ol_dir"/recovery-*.json
}

# _ol_plot JSON PNG: the run over time (gnuplot): every client's answers
# per second by kind, the latency of pass-through and ProvMnS reads and of
# id-searches, ncmpd's probe time and RSS, and the AVC forwarder's lag;
# the phases marked.
_ol_plot() {
    local d=$_ol_dir o
    deps_ensure report
    # a phase's seconds start where the phase before it ended
    o=$(jq -r '"\(.phase_seconds) \(.phase_seconds + (.overload_minutes * 60 | round))"' <<<"$1")
    jq -r --argjson o "[0, ${o% *}, ${o#* }]" '.timelines as $tl |
        [["baseline", 0], ["overload", 1], ["recovery", 2]][] as [$p, $k] |
        [($tl[$p] // {})[][]] | group_by(.[0])[] |
        [.[0][0] + $o[$k], (map(.[1]) | add), (map(.[2]) | add), (map(.[4] + .[5]) | add),
         (map(.[3]) | add)] | @tsv' <<<"$1" | sort -n >"$d/answers.dat"
    for c in pt_read provmns_read id_search; do
        jq -r --arg c "$c" --argjson o "[0, ${o% *}, ${o#* }]" '.timelines as $tl |
            [["baseline", 0], ["overload", 1], ["recovery", 2]][] as [$p, $k] |
            ($tl[$p][$c] // [])[] | select(.[1] > 0) | [.[0] + $o[$k], .[7]] | @tsv' <<<"$1" \
            >"$d/lat-$c.dat"
    done
    jq -r '.samples[] | [.t, (if .probe_ms < 0 then 5000 else .probe_ms end), .rss_mb,
        (.avc_lag // "NaN")] | @tsv' <<<"$1" >"$d/samples.dat"
    gnuplot <<GNUPLOT || die "bench overload: gnuplot failed"
set terminal pngcairo size 1100,1150 noenhanced font ",10"
set output "$2"
set multiplot layout 4,1
set grid
set xlabel "seconds into the run"
set xrange [0:$(jq '[.samples[].t] | max | ceil' <<<"$1")]
set arrow from ${o% *}, graph 0 to ${o% *}, graph 1 nohead lc rgb "#888888"
set arrow from ${o#* }, graph 0 to ${o#* }, graph 1 nohead lc rgb "#888888"
set label "10x" at ${o% *}, graph 0.95 offset 1,0
set label "1x" at ${o#* }, graph 0.95 offset 1,0
set title "answers per second, all clients"
set ylabel "requests/s"
plot "$d/answers.dat" using 1:2 with lines lw 2 title "ok", "" using 1:3 with lines lw 2 title "shed (503, Retry-After)", "" using 1:4 with lines lw 2 title "timed out or broken", "" using 1:5 with lines lw 1 title "failed"
set title "p99 of each second's ok answers (overhead: time less the stub's delay)"
set ylabel "ms"
set logscale y
plot "$d/lat-pt_read.dat" with lines title "pass-through read", "$d/lat-provmns_read.dat" with lines title "ProvMnS read", "$d/lat-id_search.dat" with lines title "id-search"
set title "ncmpd: liveness probe (5000: no answer) and resident memory"
set ylabel "probe ms"
set y2label "RSS MB"
set y2tics
plot "$d/samples.dat" using 1:2 with linespoints pt 7 ps 0.4 title "probe", "" using 1:3 axes x1y2 with lines lw 2 title "RSS"
unset y2label
unset y2tics
unset logscale y
set title "AVC forwarder: records on dmi-cm-events not forwarded yet (ncmp_consumer_lag_records)"
set ylabel "records"
plot "$d/samples.dat" using 1:4 with lines lw 2 title "lag"
unset multiplot
GNUPLOT
    info "bench overload: plot written to $2"
}

# _ol_table JSON: the table of a run.
_ol_table() {
    printf '\n%-15s %-9s %8s %8s %7s %7s %8s %7s %9s %9s\n' client phase sent ok shed failed timeouts errors \
        "p50 ms" "p99 ms"
    jq -r '.clients as $c | ["baseline", "overload", "recovery"][] as $p | ($c[$p] // {}) | to_entries[] |
        [.key, $p, .value.sent, .value.ok, .value.shed, .value.failed, .value.timeouts, .value.errors,
         .value.p50_ms, .value.p99_ms] | @tsv' <<<"$1" |
        awk -F'\t' '{ printf "%-15s %-9s %8s %8s %7s %7s %8s %7s %9.1f %9.1f\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
    jq -r '"\nncmpd alive: \(.ncmpd_alive); timeouts \(.timeouts), errors \(.errors), shed \(.shed) (without Retry-After \(.shed_without_retry_after))",
        "overload: \(.totals.overload.sent) requests, \((.overload_ok_ratio * 100 | floor))% ok, \((.overload_answered_ratio * 100 | floor))% answered; load clients used \(.totals.overload.client_cpu_s) s of CPU",
        "AVC published: \([.avc[] | "\(.phase) \(.published) of \(.scheduled) (\(.per_s)/s)"] | join(", "))",
        "AVC forwarder lag at most \(.avc_lag_max) records, back to 0 \(.avc_catch_up_s) s after the overload (by the 2 s samples)",
        "pass-through read p50: \(.baseline_pt_read_p50_ms) ms before, \(.recovery_pt_read_p50_ms) ms after (recovered: \(.recovered))",
        "liveness probe: at most \(.probe_ms_max_overload) ms under overload, \(.probes_missed) missed",
        "RSS \(.rss_mb_first) -> max \(.rss_mb_max) -> \(.rss_mb_last) MB; fds \(.fds_first) -> max \(.fds_max) -> \(.fds_last); threads \(.threads_first) -> \(.threads_last)",
        (.clients | to_entries[] | .key as $p | .value | to_entries[] |
         select((.value.first_error // "") != "") |
         "first error of \(.key) (\($p)): \(.value.first_error)"),
        "passed: \(.passed)"' <<<"$1"
}

# --- NCMP's KPI suite ---------------------------------------------------------

# _kpi_list: NCMP's kpi.json scenarios (WORKLOAD.md §1.5), one client each,
# at their rates and start times; k6's default request timeout (60 s).
_kpi_list() {
    local f t=(none module property cpspath trust) id_start=(133 600 1066 1533 2000)
    local full_start=(466 3533 6600 9666 12733) i
    cat <<CLIENTS
pt_read 13 pt --method GET --delay-ms 300 --start-ms 200 --timeout-s 60
pt_write 5.2 pt --method POST --delay-ms 670 --start-ms 600 --timeout-s 60
batch_read 0.5 batch --bootstrap $(kafka_bootstrap) --topic bench-kpi-batch --start-ms 66 --timeout-s 60
datajob_large 0.016667 datajob --ops 100000 --start-ms 800 --timeout-s 60
datajob_small 2 datajob --ops 100 --start-ms 866 --timeout-s 60
provmns_read 40 provmns --method GET --delay-ms 300 --start-ms 933 --timeout-s 60
provmns_write 1 provmns --method PATCH --delay-ms 670 --start-ms 1000 --timeout-s 60
CLIENTS
    for i in 0 1 2 3 4; do
        f=${t[$i]}
        printf 'id_search_%s 0.192308 search --kind id --filter %s --start-ms %s --timeout-s 60\n' \
            "$f" "$f" "${id_start[$i]}"
        printf 'search_%s 0.020833 search --kind full --filter %s --start-ms %s --timeout-s 60\n' \
            "$f" "$f" "${full_start[$i]}"
    done
}

# bench_kpi [--handles N] [--minutes M] [--stub-busy-s S] [--note TEXT] [--json FILE] [--plot PNG]:
# NCMP's KPI suite, side by side (WORKLOAD.md §1.3-1.8): register N
# handles (50,000) over REST in requests of 2,000 and time it as NCMP's
# setup does (an id-search for READY handles every 5 s until it holds
# them all); then every scenario of NCMP's kpi.json profile at once for M
# minutes (15), open loop, against the DMI stub with NCMP's reference
# delays (data 300/670 ms, modules 100/1000 ms, busy for S s (180) after
# a tag's first request): the ten searches, pass-through and ProvMnS
# reads and writes, legacy batch reads of 200 handles with their events
# counted on the client topic, small and large write data jobs, and the
# AVC background of 5,500 events/s; then the deregistration, timed as
# NCMP's teardown. Each KPI is computed as NCMP computes it (averages;
# overhead = time less the stub's delay; a search answer counts only if
# it holds every handle) and printed beside NCMP's limit and its current
# expectation, with pass or fail; failed_request_ratio is over every
# HTTP request of the run. The load clients' CPU time and the machine's
# load average (start, end) are reported; --note says what else ran.
bench_kpi() {
    local json="" plot="" port=${NCMP_BENCH_HTTP_PORT:-28887} minutes=15 busy=180 dmi pid sampler note=""
    local load0 load1
    local t0 t1 line polls=0 reg dereg secs j e0 e1 published forwarded wait_end
    _ol_handles=50000
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) _ol_handles=$2; shift 2 ;;
        --minutes) minutes=$2; shift 2 ;;
        --stub-busy-s) busy=$2; shift 2 ;;
        --note) note=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        --plot) plot=$2; shift 2 ;;
        *) die "bench kpi: unknown option '$1' (options: --handles N, --minutes M, --stub-busy-s S, --note TEXT, --json FILE, --plot PNG)" ;;
        esac
    done
    [[ "$_ol_handles" =~ ^[1-9][0-9]*$ && "$busy" =~ ^[0-9]+$ && "$minutes" =~ ^[0-9]*\.?[0-9]+$ ]] ||
        die "bench kpi: --handles wants a positive integer, --stub-busy-s an integer, --minutes a positive number"
    secs=$(awk -v m="$minutes" 'BEGIN { s = int(m * 60 + 0.5); print (s < 1 ? 1 : s) }')
    _ol_avc=${NCMP_AVC_SAMPLE:-$NCMP_ROOT/tests/bench/data/avc-sample.json}
    port_in_use "$port" && die "bench kpi: $(port_taken "$port") (NCMP_BENCH_HTTP_PORT)"
    NCMP_DMISTUB_PORT=${NCMP_BENCH_DMISTUB_PORT:-28994}
    export NCMP_DMISTUB_PORT
    services_up
    _ol_dir="$NCMP_INSTANCE_DIR/kpi"
    mkdir -p "$_ol_dir"
    rm -f "$_ol_dir"/*
    : >"$_ol_dir/avc.json"
    _ol_url="http://127.0.0.1:$port"
    stop_pidfile "$NCMP_INSTANCE_DIR/dmistub.pid" ncmp-dmi-stub 10
    dmi=$(dmistub_start --read-delay-ms 300 --write-delay-ms 670 --provmns-read-delay-ms 300 \
        --provmns-write-delay-ms 670 --module-references-delay-ms 100 \
        --module-resources-delay-ms 1000 --busy-ms "$((busy * 1000))") || exit 1
    ncmpd_start --http.host=127.0.0.1 --http.port="$port"
    ncmpd_wait_assigned registration
    pid=$(cat "$NCMP_INSTANCE_DIR/ncmpd.pid")
    "$NCMP_BIN/workers/ncmpd" --ingest.topic=bench-kpi-batch create-topics \
        >>"$NCMP_INSTANCE_DIR/setup.log" 2>&1 || die "bench kpi: cannot create the batch topic"

    # KPI 1, as NCMP's setup: the requests one after the other, then every
    # 5 s an id-search for READY handles until it holds all of them
    info "kpi: registering $_ol_handles handles over REST (the stub busy for $busy s per tag)"
    t0=$(_now)
    reg=$("$NCMP_BIN/producers/ncmp-loadgen" register --rest "$_ol_url" --handles "$_ol_handles" \
        --dmi "$dmi" -q 2>>"$_ol_dir/clients.err") || die "bench kpi: registration failed: $reg"
    while :; do
        sleep 5
        polls=$((polls + 1))
        "$NCMP_BIN/tests/bench/ncmp-bench-data" search --url "$_ol_url" --kind id --filter cpspath \
            --handles "$_ol_handles" --rate 1 --seconds 1 --timeout-s 60 >/dev/null 2>&1 && break
        awk -v a="$t0" -v b="$(_now)" 'BEGIN { exit !(b - a > 3600) }' &&
            die "bench kpi: handles not READY after an hour"
    done
    t1=$(_now)
    info "kpi: $_ol_handles handles READY after $(_secs "$t0" "$t1") s ($polls polls)"
    printf '{"seconds": %s, "accept_seconds": %s, "requests": %s, "ok": %s, "polls": %s}\n' \
        "$(_secs "$t0" "$t1")" "$(awk '{ print $8 }' <<<"$reg")" "$(awk '{ print $2 }' <<<"$reg")" \
        "$(awk '{ print $4 }' <<<"$reg")" "$polls" >"$_ol_dir/registration.json"

    echo kpi >"$_ol_dir/phase"
    _ol_sampler "$pid" &
    sampler=$!
    e0=$("$NCMP_BIN/tests/bench/ncmp-bench-raw" end -b "$(kafka_bootstrap)" -t cm-events | awk '{ print $2 }')
    info "kpi: NCMP's kpi profile, every scenario at once, for $secs s"
    load0=$(awk '{ print $1 }' /proc/loadavg)
    _ol_clients kpi 1 "$secs" "$(_kpi_list)"
    load1=$(awk '{ print $1 }' /proc/loadavg)
    # KPI 12, as NCMP's check after k6: the forwarded count against the
    # published one, waiting up to 60 s for it
    published=$(jq -s 'map(.published) | add' "$_ol_dir/avc.json")
    wait_end=$(($(date +%s) + 60))
    while :; do
        e1=$("$NCMP_BIN/tests/bench/ncmp-bench-raw" end -b "$(kafka_bootstrap)" -t cm-events | awk '{ print $2 }')
        forwarded=$((e1 - e0))
        [ "$forwarded" -ge "$published" ] || [ "$(date +%s)" -ge "$wait_end" ] && break
        sleep 1
    done
    kill "$sampler" 2>/dev/null
    wait "$sampler" 2>/dev/null

    # KPI 2, as NCMP's teardown
    info "kpi: deregistering $_ol_handles handles over REST"
    dereg=$("$NCMP_BIN/producers/ncmp-loadgen" deregister --rest "$_ol_url" --handles "$_ol_handles" \
        --dmi "$dmi" -q 2>>"$_ol_dir/clients.err") || say "bench kpi: deregistration: $dereg"
    printf '{"seconds": %s, "requests": %s, "ok": %s, "handles": %s}\n' "$(awk '{ print $8 }' <<<"$dereg")" \
        "$(awk '{ print $2 }' <<<"$dereg")" "$(awk '{ print $4 }' <<<"$dereg")" \
        "$(awk '{ print $6 }' <<<"$dereg")" >"$_ol_dir/deregistration.json"

    j=$(_kpi_json "$minutes" "$published" "$forwarded" "$pid" |
        jq --arg note "$note" --argjson l0 "$load0" --argjson l1 "$load1" \
            '. + {loadavg_start: $l0, loadavg_end: $l1} + (if $note == "" then {} else {note: $note} end)') &&
        [ -n "$j" ] || die "bench kpi: cannot read the clients' reports (in $_ol_dir)"
    _kpi_table "$j"
    [ -n "$plot" ] && _kpi_plot "$j" "$plot"
    if [ -n "$json" ]; then
        printf '%s\n' "$j" >"$json"
        info "wrote $json"
    fi
}

# _kpi_json MINUTES PUBLISHED FORWARDED PID: the run as JSON: `kpis` (NCMP's
# table: id, name, unit, ncmp_limit, ncmp_expectation, ncmpd, pass,
# missing), failed_request_ratio, and what they come from.
_kpi_json() {
    local alive=false
    kill -0 "$4" 2>/dev/null && alive=true
    jq -n --argjson minutes "$1" --argjson published "$2" --argjson forwarded "$3" \
        --argjson alive "$alive" --argjson handles "$_ol_handles" --argjson cores "$(nproc)" \
        --slurpfile reg "$_ol_dir/registration.json" --slurpfile dereg "$_ol_dir/deregistration.json" \
        --slurpfile samples "$_ol_dir/samples.jsonl" '
        (reduce inputs as $r ({};
            (input_filename | split("/") | last | rtrimstr(".json") | ltrimstr("kpi-")) as $n
            | .[$n] = $r)) as $all |
        ($all | map_values(del(.timeline))) as $c |
        $reg[0] as $r | $dereg[0] as $d |
        def avg($n): if ($c[$n].ok // 0) > 0 then $c[$n].avg_ms else null end;
        # per minute of the run: the average of the ok answers that came in
        # that minute (those of the last requests, after the end, left out)
        def minutes($n): [($all[$n].timeline // []) | map(select(.t < $minutes * 60)) |
            group_by(.t / 60 | floor)[] |
            {m: (.[0].t / 60 | floor), ok: (map(.ok) | add), sum: (map(.sum_ms // 0) | add)} |
            if .ok > 0 then (.sum / .ok * 1000 | round / 1000) else null end];
        def row($id; $name; $unit; $limit; $exp; $v; $ge):
            {id: $id, name: $name, unit: $unit, ncmp_limit: $limit, ncmp_expectation: $exp,
             ncmpd: $v, missing: false,
             pass: (if $v == null then false elif $ge then $v >= $limit
                    elif $id == "0" then $v <= $limit else ($v > 0 and $v <= $limit) end)};
        ([$c[] | .sent] | add) as $sent | ([$c[] | .ok] | add) as $ok |
        ($sent + $r.requests + $r.polls + $d.requests) as $all_requests |
        (($sent - $ok) + ($r.requests - $r.ok) + ($d.requests - $d.ok)) as $all_failed |
        ($all_failed / $all_requests) as $failed_ratio |
        ($c.batch_read) as $b |
        [row("0"; "HTTP request failures, all tests"; "ratio"; 0.01; 0; $failed_ratio; false),
         row("1"; "Registration"; "CM-handles/s"; 22; 70;
             (if $r.seconds > 0 then ($handles / $r.seconds * 10 | round / 10) else null end); true),
         row("2"; "De-registration"; "CM-handles/s"; 22; 140;
             (if $d.seconds > 0 then ($d.handles / $d.seconds * 10 | round / 10) else null end); true),
         row("3a"; "ID search, no filter"; "ms"; 2600; 700; avg("id_search_none"); false),
         row("3b"; "ID search, module"; "ms"; 2600; 2000; avg("id_search_module"); false),
         row("3c"; "ID search, property"; "ms"; 2600; 1500; avg("id_search_property"); false),
         row("3d"; "ID search, cps path"; "ms"; 2600; 1600; avg("id_search_cpspath"); false),
         row("3e"; "ID search, trust level"; "ms"; 2600; 1400; avg("id_search_trust"); false),
         row("4a"; "search, no filter"; "ms"; 24000; 15000; avg("search_none"); false),
         row("4b"; "search, module"; "ms"; 24000; 15000; avg("search_module"); false),
         row("4c"; "search, property"; "ms"; 24000; 16000; avg("search_property"); false),
         row("4d"; "search, cps path"; "ms"; 24000; 16000; avg("search_cpspath"); false),
         row("4e"; "search, trust level"; "ms"; 24000; 16000; avg("search_trust"); false),
         row("5b"; "pass-through read overhead (alt id)"; "ms"; 40; 14; avg("pt_read"); false),
         row("6b"; "pass-through write overhead (alt id)"; "ms"; 40; 14; avg("pt_write"); false),
         row("7"; "legacy batch read"; "events per 2-s consume"; 150; 200;
             (if ($b.window_s // 0) > 0 then ($b.events / ($b.window_s / 2) | if . > 220 then 220 else . end | . * 10 | round / 10) else null end); true),
         row("8"; "write data job, small (100 ops)"; "ms"; 500; 20; avg("datajob_small"); false),
         row("9"; "write data job, large (100,000 ops)"; "ms"; 30000; 4200; avg("datajob_large"); false),
         row("10"; "ProvMnS read overhead"; "ms"; 100; 15; avg("provmns_read"); false),
         row("11"; "ProvMnS write overhead"; "ms"; 200; 15; avg("provmns_write"); false),
         row("12"; "AVC forwarded (Kafka verification)"; "%"; 98; 100;
             (if $published > 0 then ($forwarded / $published * 1000 | floor / 10) else null end); true)
        ] as $kpis |
        {scenario: "kpi", handles: $handles, cores: $cores, minutes: $minutes,
         kpis: $kpis, failed_request_ratio: $failed_ratio,
         http_requests: $all_requests, http_failed: $all_failed,
         passed: (([$kpis[].pass] | all) and $alive), ncmpd_alive: $alive,
         registration: $r, deregistration: $d,
         avc: {published: $published, forwarded: $forwarded},
         client_cpu_s: ([$c[].client_cpu_s] | add),
         per_minute: {"3a": minutes("id_search_none"), "3b": minutes("id_search_module"),
             "3c": minutes("id_search_property"), "3d": minutes("id_search_cpspath"),
             "3e": minutes("id_search_trust"), "4a": minutes("search_none"),
             "4b": minutes("search_module"), "4c": minutes("search_property"),
             "4d": minutes("search_cpspath"), "4e": minutes("search_trust"),
             "5b": minutes("pt_read"), "6b": minutes("pt_write"), "8": minutes("datajob_small"),
             "9": minutes("datajob_large"), "10": minutes("provmns_read"), "11": minutes("provmns_write")},
         clients: $c,
         rss_mb_first: ($samples | map(.rss_mb) | first), rss_mb_max: ($samples | map(.rss_mb) | max),
         rss_mb_last: ($samples | map(.rss_mb) | last), samples: $samples}' \
        "$_ol_dir"/kpi-*.json
}

# _kpi_table JSON: NCMP's KPI table of a run.
_kpi_table() {
    printf '\n%-4s %-38s %-24s %10s %12s %12s %5s\n' "#" KPI unit "NCMP limit" "NCMP expect." ncmpd pass
    jq -r '.kpis[] | [.id, .name, .unit, .ncmp_limit, .ncmp_expectation,
        (if .ncmpd == null then "-" elif .unit == "ratio" then (.ncmpd * 10000 | round / 10000)
         else (.ncmpd * 10 | round / 10) end), (if .pass then "yes" else "NO" end)] | @tsv' <<<"$1" |
        awk -F'\t' '{ printf "%-4s %-38s %-24s %10s %12s %12s %5s\n", $1, $2, $3, $4, $5, $6, $7 }'
    jq -r '"\n\(.http_requests) HTTP requests, \(.http_failed) failed (ratio \(.failed_request_ratio)); registration: \(.registration.requests) requests answered in \(.registration.accept_seconds) s, all READY after \(.registration.seconds) s (\(.registration.polls) polls)",
        "AVC: \(.avc.published) published, \(.avc.forwarded) forwarded; load clients used \(.client_cpu_s) s of CPU; ncmpd RSS \(.rss_mb_first) -> max \(.rss_mb_max) -> \(.rss_mb_last) MB",
        "machine load average \(.loadavg_start // "-") at the start, \(.loadavg_end // "-") at the end\(if .note then "; " + .note else "" end)",
        "passed: \(.passed)"' <<<"$1"
}

# _kpi_plot JSON PNG: each latency KPI's average per minute over the run.
_kpi_plot() {
    local d k
    deps_ensure report
    d=$(mktemp -d)
    for k in 3a 3b 3c 3d 3e 4a 4b 4c 4d 4e 5b 6b 8 9 10 11; do
        jq -r --arg k "$k" '.per_minute[$k] | to_entries[] | [.key + 1, (.value // "NaN")] | @tsv' \
            <<<"$1" >"$d/minute-$k.dat"
    done
    gnuplot <<GNUPLOT || { rm -rf "$d"; die "bench kpi: gnuplot failed"; }
set terminal pngcairo size 1100,1000 noenhanced font ",10"
set output "$2"
set multiplot layout 3,1
set grid
set xlabel "minute of the run"
set xrange [0.5:$(jq '[.per_minute[] | length] | max + 0.5' <<<"$1")]
set ylabel "ms (average of the minute)"
set key outside right
set title "id-searches over all handles (NCMP: limit 2,600 ms, expectation 700-2,000 ms)"
plot for [k in "3a 3b 3c 3d 3e"] "$d/minute-".k.".dat" with linespoints title k
set title "full searches over all handles (NCMP: limit 24,000 ms, expectation 15,000-16,000 ms)"
plot for [k in "4a 4b 4c 4d 4e"] "$d/minute-".k.".dat" with linespoints title k
set title "overhead of pass-through (5b read, 6b write) and ProvMnS (10 read, 11 write), data jobs (8 small, 9 large)"
set logscale y
plot for [k in "5b 6b 10 11 8 9"] "$d/minute-".k.".dat" with linespoints title k
unset multiplot
GNUPLOT
    rm -rf "$d"
    info "bench kpi: plot written to $2"
}

# --- scale ---------------------------------------------------------------------

# _scale_wait SQL SECONDS: poll SQL (true or false) every 0.2 s until true;
# fails after SECONDS.
_scale_wait() {
    local t0
    t0=$(_now)
    until [ "$(pg_psql -Atc "$1")" = t ]; do
        awk -v a="$t0" -v b="$(_now)" -v s="$2" 'BEGIN { exit !(b - a > s) }' && return 1
        sleep 0.2
    done
}

# _scale_measure N: one size on fresh services, as JSON on stdout (the
# progress on stderr): the raw COPY of the same rows; registration through
# Kafka until every handle is stored, and on until every one is READY
# (module sync, against the stub with small module delays); the ten
# searches (one request after the other for 5 s, their average) beside
# PostgreSQL returning the ids; pass-through reads at NCMP's rate;
# ncmpd's RSS per process (the pipeline roles in one, rest in another),
# the rest process's start-up with its handle map, the database's size;
# then the deregistration until no handle is left.
_scale_measure() {
    local n=$1 port=$2 raw data gen url="http://127.0.0.1:$port" dmi bs copy t0 t1 t2
    local k f line searches=() pt rss_pipe rss_rest start loaded index_ms index_mb i db_mb pg_ids ts deadline
    deadline=$((n / 20 + 600)) # seconds any one step may take
    services_up >&2
    raw="$NCMP_BIN/tests/bench/ncmp-bench-raw" data="$NCMP_BIN/tests/bench/ncmp-bench-data"
    gen="$NCMP_BIN/producers/ncmp-loadgen" bs=$(kafka_bootstrap)
    info "scale $n: raw limit, COPY of the same rows" >&2
    copy=$("$raw" copy-handles -d "$(pg_url)" -n "$n" | awk '{ print $4 }') || die "raw COPY failed"
    _data_stub 300 670 >&2
    dmi="http://127.0.0.1:$NCMP_DMISTUB_PORT"
    ncmpd_start --roles=ingest,registration,module-sync,trust,lcm-relay,avc-forward,async-forward >&2
    ncmpd_wait_assigned registration
    NCMPD_NAME=ncmpd-rest ncmpd_start --roles=rest --http.host=127.0.0.1 --http.port="$port" >&2

    info "scale $n: registration until stored, then until READY" >&2
    t0=$(_now)
    "$gen" register -b "$bs" --handles "$n" --dmi "$dmi" -q || die "publishing the registrations failed"
    _scale_wait "SELECT count(*) = $n FROM cm_handle" "$deadline" || die "handles not stored in time"
    t1=$(_now)
    _scale_wait "SELECT count(*) FILTER (WHERE state = 'READY') = $n AND NOT EXISTS (SELECT 1 FROM lcm_outbox) FROM cm_handle" \
        "$deadline" || die "handles not READY in time"
    t2=$(_now)
    sleep 2 # the last events reach the rest process's map
    pg_psql -qc "VACUUM ANALYZE" >/dev/null

    info "scale $n: the ten searches" >&2
    for k in id full; do
        for f in none module property cpspath trust; do
            line=$("$data" search --url "$url" --kind "$k" --filter "$f" --handles "$n" \
                --concurrency 1 --seconds 5 --timeout-s 600) || die "search $k $f failed: $line"
            searches+=("$(awk -v k="$k" -v f="$f" '{ printf "{\"kind\": \"%s\", \"filter\": \"%s\", \"ok\": %s, \"avg_ms\": %s}", k, f, $4, $8 }' <<<"$line")")
        done
    done
    ts=$(_now)
    pg_psql -qc "COPY (SELECT alternate_id FROM cm_handle) TO STDOUT" >/dev/null
    pg_ids=$(awk -v a="$ts" -v b="$(_now)" 'BEGIN { printf "%.1f", (b - a) * 1000 }')

    info "scale $n: pass-through reads at 13/s" >&2
    line=$("$data" pt --url "$url" --method GET --handles "$n" --rate 13 --seconds 20 --delay-ms 300) ||
        die "pass-through failed: $line"
    _pt_fields "$line"
    pt=$(printf '{"ok": %s, "avg_overhead_ms": %s, "p99_overhead_ms": %s}' "$_pt_ok" "$_pt_avg" "$_pt_p99")

    rss_pipe=$(_mb "$(_vm_kb "$(cat "$NCMP_INSTANCE_DIR/ncmpd.pid")" VmRSS)")
    rss_rest=$(_mb "$(_vm_kb "$(cat "$NCMP_INSTANCE_DIR/ncmpd-rest.pid")" VmRSS)")
    db_mb=$(pg_psql -Atc "SELECT round(pg_database_size(current_database()) / 1048576.0, 1)")
    info "scale $n: the rest process started again (its handle map loaded)" >&2
    stop_pidfile "$NCMP_INSTANCE_DIR/ncmpd-rest.pid" ncmpd 40
    mv "$NCMP_INSTANCE_DIR/ncmpd-rest.log" "$NCMP_INSTANCE_DIR/ncmpd-rest.log.1" # a fresh log to wait on
    ts=$(_now)
    NCMPD_NAME=ncmpd-rest ncmpd_start --roles=rest --http.host=127.0.0.1 --http.port="$port" >&2
    start=$(_secs "$ts" "$(_now)")
    loaded=$(grep -o '[0-9]* handles loaded in [0-9]* ms' "$NCMP_INSTANCE_DIR/ncmpd-rest.log" | tail -n 1 |
        awk '{ print $5 }')
    # the search index loads beside the start (searches read PostgreSQL until then)
    for ((i = 0; i < 1200; i++)); do
        index_ms=$(grep -o 'search-index\] [0-9]* handles and [0-9]* module sets loaded in [0-9]* ms' \
            "$NCMP_INSTANCE_DIR/ncmpd-rest.log" | tail -n 1 | awk '{ print $(NF - 1) }')
        [ -n "$index_ms" ] && break
        sleep 0.1
    done
    index_mb=$(curl -fsS "$url/metrics" | awk '$1 == "ncmp_search_index_bytes" { printf "%.1f", $2 / 1048576 }')

    info "scale $n: deregistration until no handle is left" >&2
    ts=$(_now)
    "$gen" deregister -b "$bs" --handles "$n" --dmi "$dmi" -q || die "publishing the deregistrations failed"
    _scale_wait "SELECT NOT EXISTS (SELECT 1 FROM cm_handle)" "$deadline" || die "handles left in time"
    jq -n --argjson n "$n" --argjson copy "$copy" --argjson reg "$(_secs "$t0" "$t1")" \
        --argjson ready "$(_secs "$t0" "$t2")" --argjson dereg "$(_secs "$ts" "$(_now)")" \
        --argjson searches "[$(IFS=,; printf '%s' "${searches[*]}")]" --argjson pg_ids "$pg_ids" \
        --argjson pt "$pt" --argjson rss_pipe "$rss_pipe" --argjson rss_rest "$rss_rest" \
        --argjson start "$start" --argjson loaded "${loaded:-null}" --argjson db "$db_mb" \
        --argjson index_ms "${index_ms:-null}" --argjson index_mb "${index_mb:-null}" \
        '{handles: $n, copy_rows_per_s: $copy, registration_seconds: $reg,
          registration_handles_per_s: ($n / $reg | round), registration_vs_copy: (($n / $reg) / $copy * 100 | round / 100),
          ready_seconds: $ready, deregistration_seconds: $dereg,
          deregistration_handles_per_s: ($n / $dereg | round),
          searches: $searches, pg_ids_ms: $pg_ids, pass_through: $pt,
          rss_mb: {pipeline: $rss_pipe, rest: $rss_rest},
          rest_kb_per_handle: ($rss_rest * 1024 / $n * 100 | round / 100),
          rest_start_seconds: $start, rest_map_load_ms: $loaded,
          rest_index_load_ms: $index_ms, rest_index_mb: $index_mb, database_mb: $db}'
    services_down >&2
}

# bench_scale [--handles N] [--base B] [--json FILE]: the system at N
# handles (1,000,000) beside B (50,000), each size on fresh services:
# registration (stored, then READY after module sync) with the raw COPY
# of the same rows, the ten searches with PostgreSQL returning the ids,
# pass-through reads at 13/s, the RSS of the pipeline and rest processes,
# the rest process's start-up (its handle map loaded; its search index
# loads beside, timed and sized too), the database's size,
# the deregistration. Judged: no per-handle cost at N above 1.2 times its
# cost at B, and the rest process up within 10 s.
bench_scale() {
    local handles=1000000 base=50000 json="" port=${NCMP_BENCH_HTTP_PORT:-28888} a b j
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        --base) base=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench scale: unknown option '$1' (options: --handles N, --base B, --json FILE)" ;;
        esac
    done
    [[ "$handles" =~ ^[1-9][0-9]*$ && "$base" =~ ^[1-9][0-9]*$ ]] ||
        die "bench scale: --handles and --base want positive integers"
    port_in_use "$port" && die "bench scale: $(port_taken "$port") (NCMP_BENCH_HTTP_PORT)"
    NCMP_DMISTUB_PORT=${NCMP_BENCH_DMISTUB_PORT:-28995}
    export NCMP_DMISTUB_PORT
    deps_ensure report
    a=$(_scale_measure "$base" "$port") || exit 1
    bench_fresh
    b=$(_scale_measure "$handles" "$port") || exit 1
    j=$(jq -n --argjson a "$a" --argjson b "$b" --argjson cores "$(nproc)" '
        def per($k): ($b[$k] / $b.handles) / ($a[$k] / $a.handles) * 100 | round / 100;
        ([range(0; $a.searches | length) as $i |
          {kind: $a.searches[$i].kind, filter: $a.searches[$i].filter,
           per_handle: (($b.searches[$i].avg_ms / $b.handles) / ($a.searches[$i].avg_ms / $a.handles) * 100 | round / 100)}]) as $s |
        {scenario: "scale", cores: $cores, base: $a, large: $b,
         per_handle_cost: {registration: per("registration_seconds"), ready: per("ready_seconds"),
                           deregistration: per("deregistration_seconds"), searches: $s,
                           rest_rss: (($b.rss_mb.rest / $b.handles) / ($a.rss_mb.rest / $a.handles) * 100 | round / 100)},
         passed: (([per("registration_seconds"), per("ready_seconds"), per("deregistration_seconds")] + [$s[].per_handle]
                   | all(. <= 1.2)) and $b.rest_start_seconds <= 10)}')
    printf '\n%-44s %14s %14s %10s\n' "" "$base handles" "$handles handles" "per handle"
    jq -r '. as $r | def row($l; $k; $p): [$l, ($r.base[$k] | tostring), ($r.large[$k] | tostring), ($p | tostring)];
        row("registration, s (stored)"; "registration_seconds"; .per_handle_cost.registration),
        row("registration and module sync, s (READY)"; "ready_seconds"; .per_handle_cost.ready),
        row("deregistration, s"; "deregistration_seconds"; .per_handle_cost.deregistration),
        row("raw COPY, rows/s"; "copy_rows_per_s"; "-"),
        row("registration vs COPY"; "registration_vs_copy"; "-"),
        (range(0; .base.searches | length) as $i |
            ["\(.base.searches[$i].kind)-search \(.base.searches[$i].filter), ms", (.base.searches[$i].avg_ms | tostring),
             (.large.searches[$i].avg_ms | tostring), (.per_handle_cost.searches[$i].per_handle | tostring)]),
        row("PostgreSQL returning the ids, ms"; "pg_ids_ms"; "-"),
        ["pass-through read overhead, ms (avg)", (.base.pass_through.avg_overhead_ms | tostring), (.large.pass_through.avg_overhead_ms | tostring), "-"],
        ["RSS rest process, MB", (.base.rss_mb.rest | tostring), (.large.rss_mb.rest | tostring), (.per_handle_cost.rest_rss | tostring)],
        ["RSS pipeline process, MB", (.base.rss_mb.pipeline | tostring), (.large.rss_mb.pipeline | tostring), "-"],
        row("rest process start-up, s"; "rest_start_seconds"; "-"),
        row("search index loaded after start, ms"; "rest_index_load_ms"; "-"),
        row("search index after that load, MB"; "rest_index_mb"; "-"),
        row("database, MB"; "database_mb"; "-") | @tsv' <<<"$j" |
        awk -F'\t' '{ printf "%-44s %14s %14s %10s\n", $1, $2, $3, $4 }'
    jq -r '"per-handle cost: the large size'"'"'s cost per handle over the base'"'"'s (target <= 1.2); passed: \(.passed)"' <<<"$j"
    if [ -n "$json" ]; then
        printf '%s\n' "$j" >"$json"
        info "wrote $json"
    fi
    [ "$(jq -r .passed <<<"$j")" = true ] || die "bench scale: not passed (see the table)"
}

# bench_data_sync [--handles N] [--json FILE]: NCMP's data sync. N
# handles registered through ncmpd against the DMI stub, which gives each
# the Open ROADM model (tests/data/openroadm) as its module set and one
# 86-node device as its data, until all are READY; then (in
# ncmp-bench-datasync) data sync turned on for all of them at once and
# timed until every one is SYNCHRONIZED, and the raw limit: COPY of the
# same fragment rows, in the same run; then AVC events applied to the
# caches (bench_avc_apply.c) and the CPS writes with data-updated events
# on against off (bench_notify.c).
bench_data_sync() {
    local handles=50000 json="" bs dmi data="$NCMP_ROOT/tests/data/openroadm" cal0 cal1
    local port=${NCMP_BENCH_HTTP_PORT:-28884}
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench data-sync: unknown option '$1' (options: --handles N, --json FILE)" ;;
        esac
    done
    services_up
    bs=$(kafka_bootstrap)
    dmi=$(dmistub_start --read-delay-ms 0 --module-references-delay-ms 10 \
        --module-resources-delay-ms 20 --threads 2 --data-model "$data/model.zip" \
        --data-tree "$data/device.json" \
        --data-root openroadm-devices-inventory-v2:openroadm-devices/openroadm-device) || exit 1
    port_in_use "$port" && die "bench data-sync: $(port_taken "$port") (set NCMP_BENCH_HTTP_PORT)"
    ncmpd_start --roles=registration,module-sync,lcm-relay,data-sync,cps,cps-relay,avc-apply \
        --http.host=127.0.0.1 --http.port="$port"
    ncmpd_wait_assigned registration
    _register_ready "$handles" "$dmi"
    info "data sync on for all of them"
    cal0=$(_calibrate)
    "$NCMP_BIN/tests/bench/ncmp-bench-datasync" --db "$(pg_url)" --handles "$handles" \
        --kafka "$bs" --http "http://127.0.0.1:$port" \
        ${json:+--json "$json"} || die "bench data-sync failed (see $NCMP_INSTANCE_DIR/ncmpd.log)"
    cal1=$(_calibrate)
    printf 'machine: %s cores shared by ncmpd, the stub, PostgreSQL and Kafka\n' "$(nproc)"
    _calibration_line "$cal0" "$cal1"
    if [ -n "$json" ]; then
        jq ". + {$(_calibration_json "$cal0" "$cal1")}" "$json" >"$json.tmp" && mv "$json.tmp" "$json" ||
            die "bench data-sync: cannot add the calibration to $json"
    fi
    [ -n "$json" ] && info "wrote $json"
    return 0
}

# bench_cps [--quick] [--devices N] [--seed-devices N] [--seed-anchors N]
# [--docs A,B] [--runs R] [--delta-only] [--json FILE]: CPS's own performance suite
# (its Write, Get, Query, Update, Delete and Delta tests) over CPS's REST API
# against ncmpd's CPS store (role cps), timed by the client beside CPS's
# expected seconds; in the same run the raw limits on the same rows and
# documents (COPY, PostgreSQL returning them, libyang parsing them), two
# streams of 269 KB documents with ncmpd's RSS, each beside the same rows
# by COPY (a transaction per document), and seed-sized anchors (by
# default 4 of 3,000 devices: about 1,000,000 nodes). The model and
# the sample device are the repository's (tests/data/openroadm). --quick:
# 100 devices per anchor, small seed and streams (a smoke run).
# --delta-only: the setup and the Delta scenarios (DeltaPerfTest) alone.
bench_cps() {
    local json="" port=${NCMP_BENCH_HTTP_PORT:-28884} args=() pid rc
    while [ $# -gt 0 ]; do
        case "$1" in
        --quick) args+=(--devices 100 --delete-devices 100 --seed-devices 300 --seed-anchors 2
            --docs 20,60 --runs 3); shift ;;
        --devices | --delete-devices | --seed-devices | --seed-anchors | --docs | --runs) args+=("$1" "$2"); shift 2 ;;
        --delta-only) args+=("$1"); shift ;;
        --json) json=$2; shift 2 ;;
        *) die "bench cps: unknown option '$1' (options: --quick, --devices N, --seed-devices N, --seed-anchors N, --docs A,B, --runs R, --delta-only, --json FILE)" ;;
        esac
    done
    services_up
    port_in_use "$port" && die "bench cps: $(port_taken "$port") (set NCMP_BENCH_HTTP_PORT)"
    # a 3,000-device document of CPS's sample is 32 MB
    ncmpd_start --roles=cps --http.host=127.0.0.1 --http.port="$port" --http.max-body-bytes=67108864
    pid=$(cat "$NCMP_INSTANCE_DIR/ncmpd.pid")
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = ncmpd ] || die "bench cps: pid $pid is not ncmpd"
    info "CPS's performance suite against ncmpd (role cps, port $port)"
    "$NCMP_BIN/tests/bench/ncmp-bench-cps" -u "http://127.0.0.1:$port" -d "$(pg_url)" \
        -D "$NCMP_ROOT/tests/data" -p "$pid" ${json:+-j "$json"} "${args[@]}"
    rc=$?
    printf 'machine: %s cores shared by ncmpd, PostgreSQL and the client\n' "$(nproc)"
    [ -n "$json" ] && [ -f "$json" ] && info "wrote $json"
    case $rc in
    0) return 0 ;;
    3) die "bench cps: some scenarios failed (see the table; ncmpd's log: $NCMP_INSTANCE_DIR/ncmpd.log)" ;;
    *) die "bench cps: the run failed (ncmpd's log: $NCMP_INSTANCE_DIR/ncmpd.log)" ;;
    esac
}

# _vm_kb PID FIELD: FIELD (VmRSS, VmHWM) of /proc/PID/status, in kB.
_vm_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# _cpu_ticks PID: the process's user + system CPU time, in clock ticks.
_cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# _cpu_ms_per TICKS SECONDS IDLE JOBS: CPU milliseconds per job, less what
# the process spends idle (IDLE ticks per second) over SECONDS.
_cpu_ms_per() {
    awk -v t="$1" -v s="$2" -v idle="$3" -v n="$4" -v hz="$(getconf CLK_TCK)" \
        'BEGIN { t -= idle * s; printf "%.1f", (n > 0 && t > 0 ? t * 1000 / hz / n : 0) }'
}

# _mb KB: kB as MB (MiB, one decimal).
_mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# _dj_client NAME ARGS...: `ncmp-bench-data datajob` against ncmpd, its
# line into $NCMP_INSTANCE_DIR/datajob-NAME.out (errors: .err).
_dj_client() {
    local name=$1
    shift
    "$NCMP_BIN/tests/bench/ncmp-bench-data" datajob --url "$_dj_url" "$@" \
        >"$NCMP_INSTANCE_DIR/datajob-$name.out" 2>"$NCMP_INSTANCE_DIR/datajob-$name.err"
}

# _dj_line NAME: the line of a client run (empty if it printed none).
_dj_line() { cat "$NCMP_INSTANCE_DIR/datajob-$1.out" 2>/dev/null; }

# _dj_get LINE KEY: one figure of a `datajob` line ("jobs": the count of
# jobs sent), null when missing.
_dj_get() {
    awk -v k="$2" 'BEGIN { v = "null" }
        { if (k == "jobs") v = $2; else for (i = 1; i < NF; i++) if ($i == k) v = $(i + 1) }
        END { print v }' <<<"$1"
}

# _dj_row LABEL LINE: a table row.
_dj_row() {
    local n ok jps ops avg p50 p99 max
    read -r _ n _ ok _ jps _ ops _ avg _ p50 _ p99 _ max _ <<<"$2"
    printf '%-48s %6s %6s %8s %9s %9s %9s %9s %9s\n' "$1" "${n:-0}" "${ok:-0}" "${jps:--}" \
        "${ops:--}" "${avg:--}" "${p50:--}" "${p99:--}" "${max:--}"
}

# _dj_json LINE KEY...: those figures of a `datajob` line as JSON members
# (avg, p50, p99 and max as <key>_ms).
_dj_json() {
    local line=$1 k sep=""
    shift
    for k in "$@"; do
        case $k in
        avg | p50 | p99 | max) printf '%s"%s_ms": %s' "$sep" "$k" "$(_dj_get "$line" "$k")" ;;
        *) printf '%s"%s": %s' "$sep" "$k" "$(_dj_get "$line" "$k")" ;;
        esac
        sep=", "
    done
}

# bench_datajobs [--handles N] [--minutes M] [--saturation-seconds S]
# [--json FILE]: NCMP's write data jobs (the KPI suite's tests 8 and 9).
# N handles with alternate ids (the reference workload) registered against
# one DMI stub (answering cmwriteJob at once) until READY; then, as the
# suite runs them together, the 100-operation job at 2/s and the
# 100,000-operation job every 60 s for M minutes (decimals allowed); then
# each alone at saturation for S seconds: the small one from 10 concurrent
# clients (the suite's 10 VUs), the large one back to back (its 1 VU).
# The jobs go to an ncmpd restarted with the rest role alone once the
# handles are READY. A job's time is the client's (k6's
# timings.duration); ok is NCMP's check (200, an array of one sub-job).
# In the same run: the raw limit, json-c parsing the same large body
# (median of 5 runs); ncmpd's memory: VmRSS before the first job, and
# VmHWM over the mixed phase and over the large jobs alone, the
# high-water mark reset to the current RSS before each
# (/proc/PID/clear_refs); ncmpd's CPU time per job in each phase alone,
# less what it spends idle (measured while the parse runs), against the
# parse's (on a shared machine the CPU times hold when the wall times
# carry others' load); and the DMI stub's count of operations
# received against the operations of the jobs answered ok.
bench_datajobs() {
    local handles=50000 minutes=3 sat=20 json="" port=${NCMP_BENCH_HTTP_PORT:-28885}
    local dmi t0 pid secs every=60 small_ops=100 large_ops=100000 raw raw_ms raw_bytes
    local rss0 mixed_hwm large_rss large_hwm reset=true stub_ops want_ops failed=() name
    local raw_cpu_ms cpu0 small_cpu large_cpu load0 load1 idle
    local small_mix large_mix small_alone large_alone body_mb growth sep="" i
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        --minutes) minutes=$2; shift 2 ;;
        --saturation-seconds) sat=$2; shift 2 ;;
        --json) json=$2; shift 2 ;;
        *) die "bench datajobs: unknown option '$1' (options: --handles N, --minutes M, --saturation-seconds S, --json FILE)" ;;
        esac
    done
    [[ "$handles" =~ ^[1-9][0-9]*$ && "$sat" =~ ^[1-9][0-9]*$ && "$minutes" =~ ^[0-9]*\.?[0-9]+$ ]] ||
        die "bench datajobs: --handles and --saturation-seconds want positive integers, --minutes a positive number"
    secs=$(awk -v m="$minutes" 'BEGIN { s = int(m * 60 + 0.5); print (s < 1 ? 1 : s) }')
    services_up
    NCMP_DMISTUB_PORT=${NCMP_BENCH_DMISTUB_PORT:-28992}
    export NCMP_DMISTUB_PORT
    port_in_use "$port" && die "bench datajobs: $(port_taken "$port") (set NCMP_BENCH_HTTP_PORT)"
    dmi=$(dmistub_start --module-references-delay-ms 10 --module-resources-delay-ms 20) || exit 1
    ncmpd_start --roles=registration,module-sync,lcm-relay
    ncmpd_wait_assigned registration
    _register_ready "$handles" "$dmi"
    # the jobs go to ncmpd with the rest role alone, so that its memory is
    # the role's (the handle map, then the jobs) and not what registration
    # and module sync left to the allocator
    stop_pidfile "$NCMP_INSTANCE_DIR/ncmpd.pid" ncmpd 40
    mv "$NCMP_INSTANCE_DIR/ncmpd.log" "$NCMP_INSTANCE_DIR/ncmpd-setup.log"
    ncmpd_start --roles=rest --http.host=127.0.0.1 --http.port="$port"
    pid=$(cat "$NCMP_INSTANCE_DIR/ncmpd.pid")
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = ncmpd ] || die "bench datajobs: pid $pid is not ncmpd"
    for ((i = 0; i < 600; i++)); do
        grep -q "\[handle-cache\] $handles handles loaded" "$NCMP_INSTANCE_DIR/ncmpd.log" && break
        sleep 0.1
    done
    [ "$i" -lt 600 ] || die "bench datajobs: ncmpd's handle map did not load the $handles handles"
    wait_port "$port" 30 "$NCMP_INSTANCE_DIR/ncmpd.pid" || die "bench datajobs: ncmpd does not listen on $port"

    info "raw limit: json-c parsing the large job's body (median of 5)"
    # ncmpd is idle meanwhile: what it spends so is not the jobs'
    cpu0=$(_cpu_ticks "$pid") t0=$(_now)
    raw=$("$NCMP_BIN/tests/bench/ncmp-bench-raw" datajob-parse -n "$large_ops" -H "$handles" -r 5) ||
        die "the raw parse failed"
    idle=$(awk -v t="$(($(_cpu_ticks "$pid") - cpu0))" -v s="$(_secs "$t0" "$(_now)")" \
        'BEGIN { printf "%.3f", t / s }')
    raw_ms=$(awk '{ printf "%.1f", $3 * 1000 }' <<<"$raw")
    raw_bytes=$(awk '{ print $6 }' <<<"$raw")
    raw_cpu_ms=$(awk '{ printf "%.1f", $8 * 1000 }' <<<"$raw")

    _dj_url="http://127.0.0.1:$port"
    load0=$(cut -d' ' -f1 /proc/loadavg)
    echo 5 2>/dev/null >"/proc/$pid/clear_refs" || reset=false
    rss0=$(_vm_kb "$pid" VmRSS)
    info "both together for $secs s: $small_ops operations at 2/s, $large_ops every $every s"
    _dj_client large-mixed --ops "$large_ops" --handles "$handles" --every "$every" --seconds "$secs" &
    local lpid=$!
    # the small job's bodies: 16 draws, sent in turn
    _dj_client small-mixed --ops "$small_ops" --handles "$handles" --rate 2 --seconds "$secs" \
        --variants 16 || failed+=("small, mixed")
    wait "$lpid" || failed+=("large, mixed")
    mixed_hwm=$(_vm_kb "$pid" VmHWM)

    info "the small job alone, 10 concurrent clients, $sat s"
    cpu0=$(_cpu_ticks "$pid") t0=$(_now)
    _dj_client small-alone --ops "$small_ops" --handles "$handles" --concurrency 10 --seconds "$sat" \
        --variants 16 || failed+=("small, alone")
    small_cpu="$(($(_cpu_ticks "$pid") - cpu0)) $(_secs "$t0" "$(_now)")"

    info "the large job alone, one after another, $sat s"
    $reset && echo 5 >"/proc/$pid/clear_refs"
    large_rss=$(_vm_kb "$pid" VmRSS)
    cpu0=$(_cpu_ticks "$pid") t0=$(_now)
    _dj_client large-alone --ops "$large_ops" --handles "$handles" --concurrency 1 --seconds "$sat" ||
        failed+=("large, alone")
    large_cpu="$(($(_cpu_ticks "$pid") - cpu0)) $(_secs "$t0" "$(_now)")"
    large_hwm=$(_vm_kb "$pid" VmHWM)
    load1=$(cut -d' ' -f1 /proc/loadavg)
    stub_ops=$(curl -fsS "$dmi/stub/stats" | sed -n 's/.*"datajobOperations":\([0-9]*\).*/\1/p')
    small_mix=$(_dj_line small-mixed) large_mix=$(_dj_line large-mixed)
    small_alone=$(_dj_line small-alone) large_alone=$(_dj_line large-alone)
    want_ops=0
    for name in "$small_mix" "$small_alone"; do
        want_ops=$((want_ops + small_ops * $(_dj_get "$name" ok | sed 's/null/0/')))
    done
    for name in "$large_mix" "$large_alone"; do
        want_ops=$((want_ops + large_ops * $(_dj_get "$name" ok | sed 's/null/0/')))
    done
    body_mb=$(awk -v b="$raw_bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
    growth=$(awk -v a="$large_hwm" -v b="$rss0" 'BEGIN { printf "%.1f", (a - b) / 1024 }')

    printf '\n%-48s %6s %6s %8s %9s %9s %9s %9s %9s\n' "datajobs, $handles handles" jobs ok jobs/s \
        ops/s "avg ms" "p50 ms" "p99 ms" "max ms"
    _dj_row "small (100 ops) at 2/s, with the large" "$small_mix"
    _dj_row "large (100,000 ops) every ${every} s, with the small" "$large_mix"
    _dj_row "small alone, 10 concurrent" "$small_alone"
    _dj_row "large alone, one after another" "$large_alone"
    printf 'raw limit: json-c parses the large body (%s bytes) in %s ms; large job (mixed) / raw parse: %s\n' \
        "$raw_bytes" "$raw_ms" "$(_ratio "$(_dj_get "$large_mix" avg)" "$raw_ms")"
    # shellcheck disable=SC2086 # "<ticks> <seconds>"
    small_cpu=$(_cpu_ms_per $small_cpu "$idle" "$(_dj_get "$small_alone" jobs)")
    # shellcheck disable=SC2086
    large_cpu=$(_cpu_ms_per $large_cpu "$idle" "$(_dj_get "$large_alone" jobs)")
    printf 'CPU time (less ncmpd idle, %s ticks/s): ncmpd %s ms per large job alone, %s ms per small job alone;\n' \
        "$idle" "$large_cpu" "$small_cpu"
    printf '  json-c parse %s ms: ncmpd / parse %s\n' "$raw_cpu_ms" "$(_ratio "$large_cpu" "$raw_cpu_ms")"
    printf 'ncmpd RSS: %s MB before the first job; peak %s MB with both jobs, %s MB (from %s MB) with the large alone;\n' \
        "$(_mb "$rss0")" "$(_mb "$mixed_hwm")" "$(_mb "$large_hwm")" "$(_mb "$large_rss")"
    printf '  peak - RSS before the first job = %s MB = %s x the large body (%s MB)%s\n' "$growth" \
        "$(_ratio "$growth" "$body_mb")" "$body_mb" "$($reset || echo '; the peaks are since ncmpd started (no clear_refs)')"
    printf 'DMI stub: %s operations received, %s in the jobs answered ok; %s s mixed, %s s alone\n' \
        "$stub_ops" "$want_ops" "$secs" "$sat"
    printf 'machine: %s cores, load average (1 min) %s before the jobs, %s after\n' "$(nproc)" "$load0" "$load1"
    if [ -n "$json" ]; then
        local lat="jobs ok avg p50 p99 max" all="jobs ok jobs_per_s ops_per_s avg p50 p99 max"
        # shellcheck disable=SC2086 # the key lists are word lists
        cat >"$json" <<JSON
{"scenario": "datajobs", "handles": $handles, "mixed_seconds": $secs, "saturation_seconds": $sat,
 "small": {"ops": $small_ops, "body_bytes": $(_dj_get "$small_mix" body_bytes), "rate_per_s": 2,
  $(_dj_json "$small_mix" $lat), "ops_per_s": $(_dj_get "$small_alone" ops_per_s),
  "mixed_jobs_per_s": $(_dj_get "$small_mix" jobs_per_s), "mixed_ops_per_s": $(_dj_get "$small_mix" ops_per_s),
  "alone": {"concurrency": 10, $(_dj_json "$small_alone" $all), "cpu_ms_per_job": $small_cpu}},
 "large": {"ops": $large_ops, "body_bytes": $raw_bytes, "every_s": $every,
  $(_dj_json "$large_mix" $lat), "ops_per_s": $(_dj_get "$large_alone" ops_per_s),
  "mixed_jobs_per_s": $(_dj_get "$large_mix" jobs_per_s), "mixed_ops_per_s": $(_dj_get "$large_mix" ops_per_s),
  "alone": {"concurrency": 1, $(_dj_json "$large_alone" $all), "cpu_ms_per_job": $large_cpu},
  "rss_before_mb": $(_mb "$rss0"), "mixed_peak_rss_mb": $(_mb "$mixed_hwm"),
  "alone_rss_before_mb": $(_mb "$large_rss"), "peak_rss_mb": $(_mb "$large_hwm"),
  "rss_growth_mb": $growth, "rss_growth_vs_body": $(_ratio "$growth" "$body_mb"),
  "peak_rss_vs_body": $(_ratio "$(_mb "$large_hwm")" "$body_mb"), "hwm_reset": $reset},
 "raw_parse_ms": $raw_ms, "raw_parse_cpu_ms": $raw_cpu_ms, "raw_parse_runs": 5,
 "ncmpd_idle_cpu_percent": $(awk -v i="$idle" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", i * 100 / hz }'),
 "large_cpu_vs_raw_parse_cpu": $(_ratio "$large_cpu" "$raw_cpu_ms"),
 "large_vs_raw_parse": $(_ratio "$(_dj_get "$large_mix" avg)" "$raw_ms"),
 "stub_operations": ${stub_ops:-null}, "ok_operations": $want_ops,
 "load_average_1m": {"before": $load0, "after": $load1},
 "failed": [$(for name in "${failed[@]}"; do printf '%s"%s"' "${sep:-}" "$name"; sep=", "; done)],
 "cores": $(nproc)}
JSON
        info "wrote $json"
    fi
    [ ${#failed[@]} -eq 0 ] ||
        die "bench datajobs: jobs failed in: ${failed[*]} (see $NCMP_INSTANCE_DIR/datajob-*.err and ncmpd.log)"
    [ "$stub_ops" = "$want_ops" ] ||
        die "bench datajobs: the DMI stub received $stub_ops operations, the jobs answered ok hold $want_ops"
}

# _bench_quick_args SCENARIO: the smaller sizes of `bench all --quick`.
_bench_quick_args() {
    case "$1" in
    ingest) printf '%s\n' --events 20000 ;;
    registration) printf '%s\n' --handles 5000 ;;
    module-sync) printf '%s\n' --handles 2000 --busy-ms 5000 ;;
    avc) printf '%s\n' --events 50000 ;;
    search) printf '%s\n' --handles 2000 --runs 3 ;;
    data) printf '%s\n' --handles 1000 --seconds 5 ;;
    provmns) printf '%s\n' --handles 1000 --seconds 4 ;;
    cps) printf '%s\n' --quick ;;
    data-sync) printf '%s\n' --handles 2000 ;;
    datajobs) printf '%s\n' --handles 2000 --minutes 0.25 --saturation-seconds 5 ;;
    esac
}

# _bench_machine: the machine as JSON (cores, memory, kernel, CPU, date).
_bench_machine() {
    local kib cpu
    kib=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    jq -n --argjson cores "$(nproc)" --argjson kib "$kib" --arg kernel "$(uname -sr)" \
        --arg cpu "$cpu" --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        '{cores: $cores, memory_gib: (($kib / 1048576 * 10 | round) / 10), kernel: $kernel,
          cpu: $cpu, date: $date}'
}

# bench_all [--quick] --json FILE: every scenario of NCMP_BENCH_SCENARIOS,
# each as its own `./run bench` on fresh services, into one JSON:
# {"machine": {...}, "commands": [...], "scenarios": {name: <its JSON>},
# "failed": [names]}. --quick uses small sizes (a smoke test). Goes on
# after a failed scenario and fails at the end.
bench_all() {
    local json="" quick=0 dir s args cmds=() failed=() out
    while [ $# -gt 0 ]; do
        case "$1" in
        --quick) quick=1; shift ;;
        --json) json=$2; shift 2 ;;
        *) die "bench all: unknown option '$1' (options: --quick, --json FILE)" ;;
        esac
    done
    [ -n "$json" ] || die "bench all: --json FILE is required"
    deps_ensure report
    dir=$(mktemp -d)
    for s in "${NCMP_BENCH_SCENARIOS[@]}"; do
        args=()
        [ $quick -eq 1 ] && mapfile -t args < <(_bench_quick_args "$s")
        cmds+=("./run bench $s${args[*]:+ ${args[*]}} --json $s.json")
        info "bench all: ${cmds[-1]}"
        if ! (cd "$dir" && "$NCMP_ROOT/run" bench "$s" "${args[@]}" --json "$s.json") ||
            ! jq -e . "$dir/$s.json" >/dev/null 2>&1; then
            say "bench all: scenario $s failed"
            failed+=("$s")
            rm -f "$dir/$s.json"
        fi
    done
    out=$(jq -n --argjson machine "$(_bench_machine)" --argjson quick "$quick" \
        --argjson commands "$(printf '%s\n' "${cmds[@]}" | jq -R . | jq -s .)" \
        --argjson failed "$(printf '%s\n' "${failed[@]}" | jq -R 'select(. != "")' | jq -s .)" \
        '{machine: $machine, quick: ($quick == 1), commands: $commands, scenarios: {}, failed: $failed}')
    for s in "${NCMP_BENCH_SCENARIOS[@]}"; do
        [ -f "$dir/$s.json" ] || continue
        out=$(jq --arg name "$s" --slurpfile one "$dir/$s.json" '.scenarios[$name] = $one[0]' <<<"$out")
    done
    printf '%s\n' "$out" >"$json"
    rm -rf "$dir"
    info "wrote $json (${#failed[@]} failed)"
    [ ${#failed[@]} -eq 0 ] || die "bench all: failed: ${failed[*]}"
}
