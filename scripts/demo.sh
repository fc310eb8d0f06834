# shellcheck shell=bash
# ./run demo: NCMP's reference registration workload through Kafka on real
# services, against the project's DMI stub, until every handle is READY;
# then a search over REST and a summary of what happened.

demo_main() {
    local handles=${NCMP_DEMO_HANDLES:-50000} t0 t1 t2 secs secs_ready events cpid bad_ce outcome
    local http_port=${NCMP_DEMO_HTTP_PORT:-28883} dmi ready found
    while [ $# -gt 0 ]; do
        case "$1" in
        --handles) handles=$2; shift 2 ;;
        *) die "demo: unknown option '$1' (options: --handles N)" ;;
        esac
    done
    instance_fresh demo "${NCMP_DEMO_PG_PORT:-25832}" "${NCMP_DEMO_BROKER_PORT:-29492}" \
        "${NCMP_DEMO_BROKER_CONTROLLER_PORT:-29493}"

    services_up
    NCMP_DMISTUB_PORT=${NCMP_DEMO_DMISTUB_PORT:-28092}
    export NCMP_DMISTUB_PORT
    dmi=$(dmistub_start) || exit 1
    info "DMI stub at $dmi (NCMP's reference delays: module references 100 ms, resources 1,000 ms)"
    ncmpd_start --http.port="$http_port"
    ncmpd_wait_assigned registration
    ncmpd_wait_assigned module-sync
    local gen="$NCMP_BIN/producers/ncmp-loadgen" pub="$NCMP_BIN/producers/ncmp-publish"
    local raw="$NCMP_BIN/tests/bench/ncmp-bench-raw" bs
    bs=$(kafka_bootstrap)

    info "ncmpd running; registering $handles CM handles (NCMP's reference workload) through Kafka"
    # a create and a READY event per handle
    "$raw" consume -b "$bs" -t ncmp-events -n $((2 * handles)) >"$NCMP_INSTANCE_DIR/events.txt" &
    cpid=$!
    t0=$(_now)
    "$gen" register -b "$bs" --handles "$handles" --dmi "$dmi" \
        --print-ids "$NCMP_INSTANCE_DIR/requests.txt" || die "publishing the registrations failed"
    t1=$(_now)
    info "published; module sync takes the handles from ADVISED to READY"
    while kill -0 "$cpid" 2>/dev/null; do
        ready=$(pg_psql -Atc "SELECT count(*) FILTER (WHERE state = 'READY') || ' READY, ' || count(*) FILTER (WHERE state = 'ADVISED') || ' ADVISED, ' || count(*) FILTER (WHERE state = 'LOCKED') || ' LOCKED' FROM cm_handle")
        [ -t 2 ] && printf '\r  %s of %s   ' "$ready" "$handles" >&2
        awk -v a="$t0" -v b="$(_now)" 'BEGIN { exit !(b - a > 900) }' && break
        sleep 0.5
    done
    [ -t 2 ] && printf '\n' >&2
    _wait_consumer "$cpid" 1 || die "not every lifecycle event arrived (see $NCMP_INSTANCE_DIR/ncmpd.log)"
    t2=$(_now)
    secs=$(_secs "$t0" "$t1")
    secs_ready=$(_secs "$t0" "$t2")
    found=$(curl -fsS -X POST -H 'Content-Type: application/json' \
        -d '{"cmHandleQueryParameters":[{"conditionName":"hasAllModules","conditionParameters":[{"moduleName":"module0"}]},{"conditionName":"cmHandleWithCpsPath","conditionParameters":[{"cpsPath":"//state[@cm-handle-state='"'"'READY'"'"']"}]}]}' \
        "http://127.0.0.1:$http_port/ncmp/v1/ch/id-searches" | grep -o '"' | wc -l)

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
  first publish -> all published    $secs s
  first publish -> all READY       $secs_ready s ($(_rate "$handles" "$secs_ready") handles/s; NCMP's reference: about 70/s)
  handles by state                 $(pg_psql -Atc "SELECT string_agg(state || ' ' || n, ', ') FROM (SELECT state, count(*) n FROM cm_handle GROUP BY state) s")
  module sets, YANG sources        $(pg_psql -Atc "SELECT count(*) FROM module_set"), $(pg_psql -Atc "SELECT count(*) FROM yang_resource") (each tag fetched from the DMI once: $(for t in tagA tagB tagC tagD tagE; do printf '%s ' "$(dmistub_stat moduleReferences $t)"; done))
  REST id-search                   $((found / 2)) handles READY with module0 (POST /ncmp/v1/ch/id-searches on port $http_port)
  lifecycle events in the outbox   $(pg_psql -Atc "SELECT count(*) FROM lcm_outbox") (0: all published)
  outcomes on the response topic   $(grep -c '' "$NCMP_INSTANCE_DIR/outcomes.txt"), with failures: $(grep -c '"errorCode"' "$NCMP_INSTANCE_DIR/outcomes.txt")
  the request with mistakes        $(printf '%s' "$outcome" | grep -o '"cmHandle":"[^"]*","errorCode":"[0-9]*"' | tr '\n' ' ')
  not JSON: dead-lettered          $(grep -c 'rejected record' "$NCMP_INSTANCE_DIR/ncmpd.log") (ncmp-dmi-registration-dlq, with the reason)
SUMMARY
    info "stopping the services"
}
