# shellcheck shell=bash
# The whole system on loopback: PostgreSQL, Kafka and ncmpd, for one
# instance folder. Used by `up`/`down` and by demo, test and bench (each
# with its own instance folder and ports).

ncmpd_env() {
    export NCMP_DB_URL
    NCMP_DB_URL=$(pg_url)
    export NCMP_KAFKA_BOOTSTRAP_SERVERS
    NCMP_KAFKA_BOOTSTRAP_SERVERS=$(kafka_bootstrap)
    export NCMP_HTTP_PORT
}

# services_up: PostgreSQL and Kafka, topics and schema. On failure, stops
# what it started and exits.
services_up() {
    deps_ensure build services
    build_project release
    ( pg_start ) || { services_down; exit 1; }
    ( kafka_start ) || { services_down; exit 1; }
    ncmpd_env
    "$NCMP_BIN/workers/ncmpd" create-topics >>"$NCMP_INSTANCE_DIR/setup.log" 2>&1 ||
        { services_down; die "creating the Kafka topics failed (see $NCMP_INSTANCE_DIR/setup.log)"; }
    "$NCMP_BIN/workers/ncmpd" migrate >>"$NCMP_INSTANCE_DIR/setup.log" 2>&1 ||
        { services_down; die "database migration failed: $(tail -n 1 "$NCMP_INSTANCE_DIR/setup.log")"; }
}

# instance_fresh NAME PG_PORT BROKER_PORT CONTROLLER_PORT: use a fresh
# instance folder .local/NAME on those ports (stopping what a killed run of
# it may have left), and stop its services whatever way this shell exits.
# When it stops, also after a failure, ^C or SIGTERM, the databases'
# and the broker's data go (NCMP_KEEP_DATA=1 keeps them); logs stay in
# the folder. Clusters of instances that no longer exist are swept first.
instance_fresh() {
    local owner
    # another ./run on the same instance would have its services stopped
    # and its data removed under it: refuse, and say by whom
    owner=$(cat "$NCMP_LOCAL/$1.owner" 2>/dev/null)
    if [ -n "$owner" ] && [ "$owner" != "$$" ] && kill -0 "$owner" 2>/dev/null; then
        die "the $1 instance ($NCMP_LOCAL/$1) is in use by another ./run (pid $owner: $(tr '\0' ' ' </proc/"$owner"/cmdline 2>/dev/null | cut -c1-80)); wait for it to end"
    fi
    mkdir -p "$NCMP_LOCAL"
    printf '%s\n' "$$" >"$NCMP_LOCAL/$1.owner"
    export NCMP_INSTANCE_DIR="$NCMP_LOCAL/$1"
    export NCMP_PG_PORT=$2 NCMP_BROKER_PORT=$3 NCMP_BROKER_CONTROLLER_PORT=$4
    services_down 2>/dev/null
    rm -rf "$NCMP_INSTANCE_DIR" "$(pg_home_of "$NCMP_INSTANCE_DIR" 2>/dev/null || true)"
    pg_sweep
    mkdir -p "$NCMP_INSTANCE_DIR"
    trap 'instance_end' EXIT
    trap 'exit 130' INT TERM
}

instance_end() {
    services_down 2>/dev/null
    rm -f "$NCMP_LOCAL/$(basename "$NCMP_INSTANCE_DIR").owner"
    [ "${NCMP_KEEP_DATA:-0}" = 1 ] && return
    instance_purge
}

# instance_purge: the instance's services stopped and their data removed.
instance_purge() {
    pg_purge 2>/dev/null
    kafka_purge 2>/dev/null
}

services_down() {
    local f
    # ncmpd.pid, and those of further ncmpd of the instance (ncmpd_start)
    for f in "$NCMP_INSTANCE_DIR"/ncmpd*.pid; do
        [ -e "$f" ] && stop_pidfile "$f" ncmpd 40
    done
    stop_pidfile "$NCMP_INSTANCE_DIR/dmistub.pid" ncmp-dmi-stub 10
    kafka_stop
    pg_stop
}

# ncmpd_start [ARGS...]: the service in the background, logging to
# $NCMP_INSTANCE_DIR/ncmpd.log; waits until it runs. With NCMPD_NAME set
# (ncmpd-NAME), a further ncmpd of the instance: NAME.pid and NAME.log.
ncmpd_start() {
    local name=${NCMPD_NAME:-ncmpd} i from
    local pidfile="$NCMP_INSTANCE_DIR/$name.pid" log="$NCMP_INSTANCE_DIR/$name.log"
    ncmpd_env
    # the log is appended to: only this start's lines count (ncmpd_wait_assigned too)
    from=$(($(cat "$log" 2>/dev/null | wc -l) + 1))
    echo "$from" >"$NCMP_INSTANCE_DIR/$name.log-from"
    setsid "$NCMP_BIN/workers/ncmpd" "$@" >>"$log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    for ((i = 0; i < 300; i++)); do
        pid_alive "$pidfile" || break
        tail -n +"$from" "$log" 2>/dev/null | grep -q 'running (' && return 0
        sleep 0.1
    done
    die "ncmpd did not start: $(tail -n +"$from" "$log" | grep -m1 ' error ' || tail -n 1 "$log")"
}

# dmistub_start [ARGS...]: the DMI stub in the background on
# $NCMP_DMISTUB_PORT (8092 by default), logging to
# $NCMP_INSTANCE_DIR/dmistub.log; waits until it listens. Prints its URL.
dmistub_start() {
    local pidfile="$NCMP_INSTANCE_DIR/dmistub.pid" log="$NCMP_INSTANCE_DIR/dmistub.log"
    local port=${NCMP_DMISTUB_PORT:-8092}
    port_in_use "$port" && die "DMI stub: $(port_taken "$port") (set NCMP_DMISTUB_PORT)"
    setsid "$NCMP_BIN/dmistub/ncmp-dmi-stub" --port "$port" --kafka "$(kafka_bootstrap)" "$@" \
        >>"$log" 2>&1 </dev/null &
    echo $! >"$pidfile"
    wait_port "$port" 20 "$pidfile" || die "the DMI stub did not start: $(tail -n 1 "$log")"
    printf 'http://127.0.0.1:%s\n' "$port"
}

# dmistub_stat KEY TAG: a per-tag counter of the stub (GET /stub/stats).
dmistub_stat() {
    curl -fsS "http://127.0.0.1:${NCMP_DMISTUB_PORT:-8092}/stub/stats" |
        sed -n "s/.*\"$1\":{[^}]*\"$2\":\([0-9]*\).*/\1/p"
}

# ncmpd_wait_assigned ROLE: wait (30 s at most) until the role's consumers
# have their partitions, so that a measurement does not time the group join.
ncmpd_wait_assigned() {
    local i log="$NCMP_INSTANCE_DIR/ncmpd.log" from
    from=$(cat "$NCMP_INSTANCE_DIR/ncmpd.log-from" 2>/dev/null || echo 1)
    for ((i = 0; i < 300; i++)); do
        # this start's lines only: an earlier run's assignment says nothing
        tail -n +"$from" "$log" 2>/dev/null | grep -q "group-$1#consumer.* assigned:" && return 0
        pid_alive "$NCMP_INSTANCE_DIR/ncmpd.pid" ||
            die "ncmpd stopped before its $1 workers got partitions (see $log)"
        sleep 0.1
    done
    die "ncmpd's $1 workers got no partitions within 30 s (see $log)"
}

system_up() {
    pg_sweep
    services_up
    if pid_alive "$NCMP_INSTANCE_DIR/ncmpd.pid"; then
        info "ncmpd already running (pid $(cat "$NCMP_INSTANCE_DIR/ncmpd.pid"))"
    else
        ( ncmpd_start ) || { services_down; exit 1; }
        info "ncmpd running (pid $(cat "$NCMP_INSTANCE_DIR/ncmpd.pid"))"
    fi
    local dmi="(not started: port ${NCMP_DMISTUB_PORT:-8092} is taken)"
    if pid_alive "$NCMP_INSTANCE_DIR/dmistub.pid"; then
        dmi="http://127.0.0.1:${NCMP_DMISTUB_PORT:-8092}"
    elif ! port_in_use "${NCMP_DMISTUB_PORT:-8092}"; then
        dmi=$(dmistub_start) || dmi="(failed: see $NCMP_INSTANCE_DIR/dmistub.log)"
    fi
    cat <<ENDPOINTS
PostgreSQL  $(pg_url)
Kafka       $(kafka_bootstrap)
ncmpd       REST http://127.0.0.1:$NCMP_HTTP_PORT (metrics: /metrics), log $NCMP_INSTANCE_DIR/ncmpd.log
DMI stub    $dmi
Try:        $NCMP_BIN/producers/ncmp-loadgen register -b $(kafka_bootstrap) --handles 10000 --dmi ${dmi%% *}
            curl -s -X POST -H 'Content-Type: application/json' -d '{}' http://127.0.0.1:$NCMP_HTTP_PORT/ncmp/v1/ch/id-searches
Stop with:  ./run down
ENDPOINTS
}

# system_down [--purge]: stop what `up` started; the data stays for the
# next `up` unless --purge.
system_down() {
    local home
    case "${1:-}" in
    "") ;;
    --purge) ;;
    *) die "down: unknown option '$1' (options: --purge)" ;;
    esac
    services_down
    if [ "${1:-}" = --purge ]; then
        instance_purge
        info "stopped; data removed"
        return
    fi
    info "stopped"
    home=$(pg_home_of "$NCMP_INSTANCE_DIR")
    if [ -n "$home" ] || [ -d "$NCMP_INSTANCE_DIR/kafka/data" ]; then
        info "data kept for the next 'up': ${home:+PostgreSQL in $home}${home:+, }Kafka in $NCMP_INSTANCE_DIR/kafka/data ('./run down --purge' removes it)"
    fi
}

system_status() {
    local name
    for name in ncmpd dmistub kafka pg; do
        if pid_alive "$NCMP_INSTANCE_DIR/$name.pid"; then
            printf '%-6s running (pid %s)\n' "$name" "$(cat "$NCMP_INSTANCE_DIR/$name.pid")"
        else
            printf '%-6s stopped\n' "$name"
        fi
    done
}
