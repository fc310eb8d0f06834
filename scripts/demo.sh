# shellcheck shell=bash
# ./run demo: NCMP's reference registration workload through Kafka on real
# services, then a summary of what happened.

demo_main() {
    local handles=${NCMP_DEMO_HANDLES:-50000} t0 t1 secs events cpid bad_ce outcome
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        *) die "demo: unknown option '$1' (options: --handles N)" ;;
        esac
    done
    instance_fresh demo "${NCMP_DEMO_PG_PORT:-55832}" "${NCMP_DEMO_BROKER_PORT:-59492}" \
        "${NCMP_DEMO_BROKER_CONTROLLER_PORT:-59493}"

    services_up
    ncmpd_start
    ncmpd_wait_assigned registration
    local gen="$NCMP_BIN/producers/ncmp-loadgen" pub="$NCMP_BIN/producers/ncmp-publish"
    local raw="$NCMP_BIN/tests/bench/ncmp-bench-raw" bs
    bs=$(kafka_bootstrap)

    info "ncmpd running; registering $handles CM handles (NCMP's reference workload) through Kafka"
    "$raw" consume -b "$bs" -t ncmp-events -n "$handles" >"$NCMP_INSTANCE_DIR/events.txt" &
    cpid=$!
    t0=$(_now)
    "$gen" register -b "$bs" --handles "$handles" --print-ids "$NCMP_INSTANCE_DIR/requests.txt" ||
        die "publishing the registrations failed"
    _wait_consumer "$cpid" 600 || die "not every lifecycle event arrived (see $NCMP_INSTANCE_DIR/ncmpd.log)"
    t1=$(_now)
    secs=$(_secs "$t0" "$t1")

    info "and a request with mistakes in it, and one that is not JSON"
    bad_ce=demo-bad-request
    printf '%s\n' '{"dmiPlugin":"http://ncmp-dmi-plugin-demo-and-csit-stub:8092","createdCmHandles":[{"cmHandle":"ch-1"},{"cmHandle":"bad id!"},{"cmHandle":"new-1"}],"removedCmHandles":["no-such-handle"]}' |
        "$pub" -b "$bs" -t ncmp-dmi-registration -f - -q -k http://ncmp-dmi-plugin-demo-and-csit-stub:8092 \
            -H ce_id=$bad_ce -H ce_specversion=1.0 -H ce_type=org.onap.ncmp.dmi-plugin-registration
    printf '%s\n' 'this is not a registration' |
        "$pub" -b "$bs" -t ncmp-dmi-registration -f - -q -H ce_id=demo-garbage
    requests=$(($(wc -l <"$NCMP_INSTANCE_DIR/requests.txt") + 1))
    "$raw" consume -b "$bs" -t ncmp-dmi-registration-response -n "$requests" -p \
        2>"$NCMP_INSTANCE_DIR/outcomes.txt" >/dev/null || die "outcomes missing"
    sleep 1 # the relay publishes the last request's events
    outcome=$(grep -F '"cmHandle":"bad id!"' "$NCMP_INSTANCE_DIR/outcomes.txt" | head -n 1)
    events=$(grep -c '' "$NCMP_INSTANCE_DIR/events.txt" 2>/dev/null || true)

    cat <<SUMMARY

ncmpd demo: summary
  handles registered               $(pg_psql -Atc "SELECT count(*) FROM cm_handle WHERE id LIKE 'ch-%'") of $handles, in $(wc -l <"$NCMP_INSTANCE_DIR/requests.txt") requests
  first publish -> last ADVISED    $secs s ($(_rate "$handles" "$secs") handles/s; NCMP's reference: 70-118/s)
  handles by state                 $(pg_psql -Atc "SELECT string_agg(state || ' ' || n, ', ') FROM (SELECT state, count(*) n FROM cm_handle GROUP BY state) s")
  lifecycle events in the outbox   $(pg_psql -Atc "SELECT count(*) FROM lcm_outbox") (0: all published)
  outcomes on the response topic   $(grep -c '' "$NCMP_INSTANCE_DIR/outcomes.txt"), with failures: $(grep -c '"errorCode"' "$NCMP_INSTANCE_DIR/outcomes.txt")
  the request with mistakes        $(printf '%s' "$outcome" | grep -o '"cmHandle":"[^"]*","errorCode":"[0-9]*"' | tr '\n' ' ')
  not JSON: dead-lettered          $(grep -c 'rejected record' "$NCMP_INSTANCE_DIR/ncmpd.log") (ncmp-dmi-registration-dlq, with the reason)
SUMMARY
    info "stopping the services"
}
