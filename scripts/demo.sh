# shellcheck shell=bash
# ./run demo: the whole path on real services, start to end, then a summary.
#
# Today's demo is the platform's slice: events published to Kafka, stored
# by ncmpd's ingest workers in PostgreSQL, malformed ones dead-lettered.

demo_main() {
    local events=${NCMP_DEMO_EVENTS:-200000} stored=0 t0 t1 secs rejected bad
    while [ $# -gt 0 ]; do
        case "$1" in
        --events) events=$2; shift 2 ;;
        *) die "demo: unknown option '$1' (options: --events N)" ;;
        esac
    done
    export NCMP_INSTANCE_DIR="$NCMP_LOCAL/demo"
    export NCMP_PG_PORT=${NCMP_DEMO_PG_PORT:-55832}
    export NCMP_BROKER_PORT=${NCMP_DEMO_BROKER_PORT:-59492}
    export NCMP_BROKER_CONTROLLER_PORT=${NCMP_DEMO_BROKER_CONTROLLER_PORT:-59493}
    services_down 2>/dev/null
    rm -rf "$NCMP_INSTANCE_DIR" "$(readlink -f "$NCMP_INSTANCE_DIR/pg" 2>/dev/null || true)"
    mkdir -p "$NCMP_INSTANCE_DIR"
    trap 'services_down 2>/dev/null' EXIT
    trap 'exit 130' INT TERM

    services_up
    ncmpd_start
    info "ncmpd running; publishing $events events and 3 malformed ones to ncmp-ingest"
    t0=$(date +%s.%N)
    "$NCMP_BIN/producers/ncmp-publish" -b "$(kafka_bootstrap)" -t ncmp-ingest -n "$events" ||
        die "publishing failed"
    printf '%s\n' 'this is not JSON' '[1, 2, 3]' '{"truncated": ' |
        "$NCMP_BIN/producers/ncmp-publish" -b "$(kafka_bootstrap)" -t ncmp-ingest -f - -q ||
        die "publishing failed"
    while :; do
        stored=$(pg_psql -Atc "SELECT count(*) FROM ingest_event")
        if [ -t 2 ]; then printf '\rstored %s of %s' "$stored" "$events" >&2; fi
        [ "$stored" -ge "$events" ] && break
        t1=$(date +%s.%N)
        if awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a > 300) }'; then
            die "only $stored of $events events stored after 300 s (see $NCMP_INSTANCE_DIR/ncmpd.log)"
        fi
        sleep 0.2
    done
    t1=$(date +%s.%N)
    [ -t 2 ] && printf '\n' >&2
    sleep 1 # let the dead letters land
    rejected=$(grep -c 'rejected record' "$NCMP_INSTANCE_DIR/ncmpd.log")
    bad=$(pg_psql -Atc "SELECT count(*) FROM ingest_event WHERE body ? 'truncated'")
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    cat <<SUMMARY

ncmpd demo: summary
  events published            $events (+3 malformed)
  events stored               $stored (duplicates: $(pg_psql -Atc 'SELECT count(*) - count(DISTINCT (partition, "offset")) FROM ingest_event'))
  malformed, dead-lettered    $rejected (to ncmp-ingest-dlq, with the reason; stored by mistake: $bad)
  first publish -> all stored $secs s ($(awk -v n="$events" -v s="$secs" 'BEGIN { printf "%.0f", n / s }') events/s)
  workers                     $(grep -o 'ingest\] [0-9]* workers' "$NCMP_INSTANCE_DIR/ncmpd.log" | head -n 1 | awk '{print $2}') (batch $(grep -o 'batch [0-9]*' "$NCMP_INSTANCE_DIR/ncmpd.log" | head -n 1 | awk '{print $2}'))
SUMMARY
    info "stopping the services"
}
