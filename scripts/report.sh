# shellcheck shell=bash
# ./run report: docs/performance.md from benchmark JSON.
#
# Reads the JSON of `./run bench all` (and of `./run bench
# registration-scale` if given) and fills the template
# docs/performance.md.in: every line that is only `@NAME@` becomes the
# generated block NAME (a table per area with ncmpd's figure, the raw limit
# measured in the same run, NCMP's published figures with their source and
# the ratios; the machine; the commands); every other line is copied, so
# the hand-written explanations survive a regeneration. The plots go to
# img/ beside the output file (gnuplot, PNG).

# NCMP's published figures (WORKLOAD.md §1.8, §5 and §8). "exp" is the
# NCMP team's current expectation of 2025-12-08 (cps
# k6-tests/ncmp/config/scenario-metadata.json, commit 1c7b56c18b, 50,000
# handles, 2 instances × 3 CPU), "best" the best figure of the ONAP wiki's
# registration parameters study (3 instances × 3 CPU, Xeon E5-2680 v2).
REPORT_NCMP_JSON='{
 "registration": {"exp": 70, "best": 118, "limit": 22},
 "deregistration": {"exp": 140, "best": 215, "limit": 22},
 "id-search": {"no-filter": [700, 838], "module": [2000, 220], "property": [1500, 1875],
               "cps-path": [1600, 1917], "trust-level": [1400, 11185]},
 "search": {"no-filter": [15000, 7025], "module": [15000, 8928], "property": [16000, 10600],
            "cps-path": [16000, 10628], "trust-level": [16000, 20412]},
 "read_overhead_ms": [14, 70], "write_overhead_ms": [14, 69],
 "provmns": {"read_limit_ms": 100, "write_limit_ms": 200, "exp_ms": 15},
 "legacy_batch": [200, 115], "avc_load_per_s": 5500,
 "dereg_by_size": [[1000, 86], [5000, 89], [10000, 65], [20000, 48]]
}'

# jq definitions shared by every block: number formats and ratios.
REPORT_JQ_DEFS='
def commas: if length <= 3 then . else (.[0:length-3] | commas) + "," + .[length-3:] end;
def n: if . == null then "n/a" elif . < 0 then "-" + ((- .) | round | tostring | commas)
       else (round | tostring | commas) end;
def d2: (. * 100 | round) as $c | ($c / 100 | floor | tostring) + "."
        + (($c % 100) | tostring | if length < 2 then "0" + . else . end);
def d1: (. * 10 | round) as $c | ($c / 10 | floor | tostring) + "." + (($c % 10) | tostring);
def ms: if . == null then "n/a" elif . >= 100 then n elif . >= 10 then d1 else d2 end;
def secs: if . == null then "n/a" elif . >= 10 then d1 elif . >= 1 then d2
          else (. * 1000 | round) as $m | "0." + ($m | tostring | if length < 3 then ("00" + .)[-3:] else . end) end;
def cell: tostring | gsub("\\|"; "/");
def ratio($a; $b): if $a == null or $b == null or $b == 0 then "n/a" else ($a / $b) | d2 end;
def times($a; $b): if $a == null or $b == null or $b == 0 then "n/a"
    else ($a / $b) as $x | (if $x >= 100 then ($x | n) elif $x >= 10 then ($x | round | tostring)
                            else ($x | d1) end) + "×" end;
'

# _report_jq FILTER [JQ ARGS...]: run FILTER on the bench-all JSON with the
# NCMP figures as $ncmp and the scaling JSON (or null) as $scale.
_report_jq() {
    local filter=$1
    shift
    jq -r --argjson ncmp "$REPORT_NCMP_JSON" --argjson scale "$_report_scale" "$@" \
        "$REPORT_JQ_DEFS $filter" "$_report_all"
}

_report_machine() {
    _report_jq '.machine | "\(.cores) cores (\(.cpu // "CPU not recorded")), \(.memory_gib) GiB of memory, \(.kernel), measured \(.date)."
        + "\n\nPostgreSQL 15 and one Kafka broker, started by the project'"'"'s scripts on loopback,"
        + " share those cores with ncmpd, the DMI stub and the load generators."'
    _report_jq 'if .quick then "\n**These are smoke-test sizes (`bench all --quick`)**: far smaller than"
        + " NCMP'"'"'s workload, dominated by start-up; do not compare them with NCMP'"'"'s figures." else empty end'
    _report_jq 'if (.failed | length) > 0 then "\nScenarios that failed in this run: "
        + (.failed | map("`\(.)`") | join(", ")) + "." else empty end'
}

_report_commands() {
    printf '```sh\n'
    _report_jq 'if .assembled then "# each scenario run on its own, the JSON files then put together as ./run bench all writes them:"
        elif .quick then "# ./run bench all --quick --json all.json ran:" else "# ./run bench all --json all.json ran:" end'
    _report_jq '.commands[]'
    local kpi_arg=""
    if [ -n "$_report_kpi" ]; then
        jq -r '"./run bench kpi" + (if .handles != 50000 then " --handles \(.handles)" else "" end)
            + (if .minutes != 15 then " --minutes \(.minutes)" else "" end) + " --json kpi.json"' "$_report_kpi"
        kpi_arg=" --kpi kpi.json"
    fi
    if _report_jq '.scale_commands' -e >/dev/null 2>&1; then
        _report_jq '.scale_commands[]'
        printf './run report --json all.json --scale scale.json%s --out docs/performance.md\n' "$kpi_arg"
    elif [ "$_report_scale" != null ]; then
        jq -r 'map(.handles | tostring) | "./run bench registration-scale --sizes \(join(",")) --json scale.json"' \
            <<<"$_report_scale"
        printf './run report --json all.json --scale scale.json%s --out docs/performance.md\n' "$kpi_arg"
    else
        printf './run report --json all.json%s --out docs/performance.md\n' "$kpi_arg"
    fi
    printf '```\n'
}

# _report_has NAME: true when the bench-all JSON holds scenario NAME.
_report_has() {
    jq -e --arg n "$1" '.scenarios[$n] != null' "$_report_all" >/dev/null
}

# _report_missing NAME: the line for a scenario that is not in the JSON.
_report_missing() {
    printf '_Not measured in this run (`./run bench %s`)._\n' "$1"
}

_report_registration() {
    _report_has registration || { _report_missing registration; return 0; }
    _report_jq '.scenarios.registration // empty |
        "\(.handles | n) handles, batch size \(.batch_size) requests, \(.workers) workers\(if .measured then " (measured \(.measured), later than the other scenarios)" else "" end).\n",
        "| metric | ncmpd | raw limit: COPY, same run | ncmpd / raw | NCMP 2025-12 expectation | ncmpd vs expectation | NCMP best published | ncmpd vs best |",
        "|---|---|---|---|---|---|---|---|",
        "| registration, handles/s (publish -> ADVISED event) | \(.registration_handles_per_s | n) | \(.copy_rows_per_s | n) | \(ratio(.registration_handles_per_s; .copy_rows_per_s)) | \($ncmp.registration.exp) | \(times(.registration_handles_per_s; $ncmp.registration.exp)) | \($ncmp.registration.best) | \(times(.registration_handles_per_s; $ncmp.registration.best)) |",
        "| deregistration, handles/s (publish -> DELETED event) | \(.deregistration_handles_per_s | n) | \(.copy_rows_per_s | n) | \(ratio(.deregistration_handles_per_s; .copy_rows_per_s)) | \($ncmp.deregistration.exp) | \(times(.deregistration_handles_per_s; $ncmp.deregistration.exp)) | \($ncmp.deregistration.best) | \(times(.deregistration_handles_per_s; $ncmp.deregistration.best)) |"'
}

_report_module_sync() {
    _report_has module-sync || { _report_missing module-sync; return 0; }
    _report_jq '.scenarios["module-sync"] // empty |
        "\(.handles | n) handles, \(.dmi_module_fetches) DMI module fetches (\(.dmi_module_reference_fetches) reference lists, \(.dmi_module_resource_fetches) source requests), batch \(.batch_size), \(.workers) workers\(if .busy_window_ms != 180000 then "; busy window \(.busy_window_ms | n) ms, NCMP'"'"'s is 180,000" else "" end).\n",
        "| metric | ncmpd | raw limit: COPY, same run | ncmpd / raw | NCMP 2025-12 expectation | ncmpd vs expectation | NCMP best published | ncmpd vs best |",
        "|---|---|---|---|---|---|---|---|",
        "| publish -> all READY, handles/s | \(.ready_handles_per_s | n) | \(.copy_rows_per_s | n) | \(ratio(.ready_handles_per_s; .copy_rows_per_s)) | \($ncmp.registration.exp) | \(times(.ready_handles_per_s; $ncmp.registration.exp)) | \($ncmp.registration.best) | \(times(.ready_handles_per_s; $ncmp.registration.best)) |",
        (if .busy_ready_handles_per_s != null then
        "| publish -> all READY with the busy window, handles/s (NCMP'"'"'s measure) | \(.busy_ready_handles_per_s | n) | \(.copy_rows_per_s | n) | \(ratio(.busy_ready_handles_per_s; .copy_rows_per_s)) | \($ncmp.registration.exp) | \(times(.busy_ready_handles_per_s; $ncmp.registration.exp)) | \($ncmp.registration.best) | \(times(.busy_ready_handles_per_s; $ncmp.registration.best)) |"
        else empty end)'
}

_report_search() {
    _report_has search || { _report_missing search; return 0; }
    _report_jq '.scenarios.search // empty | ((.searches[0].without_index_median_ms // -1) >= 0) as $w |
        "\(.handles | n) handles in every answer, the median of \(.runs) runs each\(if .measured then " (measured \(.measured), later than the other scenarios)" else "" end).\(if $w then " Searches answered from the index: \(.searches_from_index | n), by PostgreSQL: \(.searches_from_database | n); the index held \(.index_handles | n) handles in \(.index_bytes / 1048576 | ms) MB, \(.index_bytes_per_handle | n) bytes per handle." else "" end)\n",
        "| search | ncmpd median, ms | raw limit: PostgreSQL, same rows, ms | ncmpd / raw |\(if $w then " ncmpd without the index, same run, ms |" else "" end) NCMP 2025-12 expectation, ms | ncmpd vs expectation | NCMP best published, ms | ncmpd vs best |",
        "|---|---|---|---|\(if $w then "---|" else "" end)---|---|---|---|",
        (.searches[] | . as $s | ($ncmp[$s.kind][$s.filter] // [null, null]) as $p |
        "| \($s.kind), \($s.filter) | \($s.median_ms | ms) | \($s.postgres_median_ms | ms) | \(ratio($s.median_ms; $s.postgres_median_ms)) |\(if $w then " \($s.without_index_median_ms | ms) |" else "" end) \($p[0] | n) | \(times($p[0]; $s.median_ms)) | \($p[1] | n) | \(times($p[1]; $s.median_ms)) |")'
}

_report_data() {
    _report_has data || { _report_missing data; return 0; }
    _report_jq '.scenarios.data // empty | . as $d |
        "\(.handles | n) handles, \(.seconds) s per run; overhead = client time - the stub'"'"'s delay.\n",
        "| metric | ncmpd | floor | NCMP 2025-12 expectation | ncmpd vs expectation | NCMP best published | ncmpd vs best |",
        "|---|---|---|---|---|---|---|",
        (def row($title; $r; $floor; $p): if $r == null then empty else
            "| \($title) | \($r.avg_overhead_ms | ms) (p50 \($r.p50_overhead_ms | ms), p99 \($r.p99_overhead_ms | ms)) | \($floor) | \($p[0]) | \(times($p[0]; $r.avg_overhead_ms)) | \($p[1]) | \(times($p[1]; $r.avg_overhead_ms)) |" end;
        row("pass-through read overhead, 13/s, ms"; $d.read_reference_rate; "stub 300 ms"; $ncmp.read_overhead_ms),
        row("pass-through write overhead, 5.2/s, ms"; $d.write_reference_rate; "stub 670 ms"; $ncmp.write_overhead_ms),
        row("pass-through read overhead, 200 concurrent\(if $d.read_200_concurrent.ramp_ms // 0 > 0 then " started over \($d.read_200_concurrent.ramp_ms) ms" else "" end), ms"; $d.read_200_concurrent; "stub 300 ms"; $ncmp.read_overhead_ms),
        row("pass-through write overhead, 200 concurrent\(if $d.write_200_concurrent.ramp_ms // 0 > 0 then " started over \($d.write_200_concurrent.ramp_ms) ms" else "" end), ms"; $d.write_200_concurrent; "stub 670 ms"; $ncmp.write_overhead_ms),
        row("the same reads, the 200 clients started at once, ms"; $d.read_200_concurrent_same_start; "stub 300 ms"; $ncmp.read_overhead_ms),
        row("the same writes, the 200 clients started at once, ms"; $d.write_200_concurrent_same_start; "stub 670 ms"; $ncmp.write_overhead_ms)),
        (if .batch then "| legacy batch read, events/s | \(.batch.events_per_s | n) | - | \($ncmp.legacy_batch[0]) | \(times(.batch.events_per_s; $ncmp.legacy_batch[0])) | \($ncmp.legacy_batch[1]) | \(times(.batch.events_per_s; $ncmp.legacy_batch[1])) |" else empty end),
        (if .read_zero_delay then "| pass-through reads, zero-delay stub, 200 concurrent, requests/s | \(.read_zero_delay.rps | n) | - | - | - | - | - |" else empty end)'
}

# ProvMnS's targets (the issue that asked for `bench provmns`).
REPORT_PROVMNS_TARGETS='{"kpi_avg_ms": 1, "p99_200_ms": 5, "zero_delay_rps": 5000, "policy_ms": 0.5}'

_report_provmns() {
    _report_has provmns || { _report_missing provmns; return 0; }
    _report_jq '.scenarios.provmns | . as $p |
        def yes($ok): if $ok == null then "n/a" elif $ok then "yes" else "**no**" end;
        def plus: if . == null then "n/a" elif . < 0 then "-" + ((- .) | ms) else "+" + ms end;
        def lat($r): "\($r.avg_overhead_ms | ms) (p50 \($r.p50_overhead_ms | ms), p99 \($r.p99_overhead_ms | ms))";
        def dlat($r): "\($r.direct_avg_overhead_ms | ms) (p50 \($r.direct_p50_overhead_ms | ms), p99 \($r.direct_p99_overhead_ms | ms))";
        "\(.handles | n) handles, \(.seconds) s per run and way. Overhead = client time - the stub'"'"'s delay, as NCMP computes it; \"the stub alone\" is the same requests sent straight to the DMI stub in the same run, and \"ncmpd adds\" the difference.\(if .load_average_start then " The 1-minute load average, other work on the machine included, was \(.load_average_start) at the start and \(.load_average_end) at the end (\(.cores) cores)." else "" end)\(if .calibration_cpu_ms then " The machine'"'"'s calibration (CPU time of SHA-256 over 4 MB, `ncmp-bench-raw calibrate`) was \(.calibration_cpu_ms.start) ms at the start and \(.calibration_cpu_ms.end) ms at the end." else "" end)\n",
        "| metric | ncmpd | the stub alone, same run | ncmpd adds | target | met | NCMP limit | NCMP 2025-12 expectation | ncmpd vs expectation |",
        "|---|---|---|---|---|---|---|---|---|",
        (.read_kpi_rate // empty | "| ProvMnS read overhead, 40/s (stub 300 ms), avg ms | \(lat(.)) | \(dlat(.)) | \(.added_avg_ms | plus) | ≤ \($t.kpi_avg_ms) | \(yes(.avg_overhead_ms <= $t.kpi_avg_ms)) | ≤ \($ncmp.provmns.read_limit_ms) | \($ncmp.provmns.exp_ms) | \(times($ncmp.provmns.exp_ms; .avg_overhead_ms)) |"),
        (.patch_kpi_rate // empty | "| ProvMnS patch overhead, 1/s (stub 670 ms), avg ms | \(lat(.)) | \(dlat(.)) | \(.added_avg_ms | plus) | ≤ \($t.kpi_avg_ms) | \(yes(.avg_overhead_ms <= $t.kpi_avg_ms)) | ≤ \($ncmp.provmns.write_limit_ms) | \($ncmp.provmns.exp_ms) | \(times($ncmp.provmns.exp_ms; .avg_overhead_ms)) |"),
        (.read_200_concurrent // empty | "| ProvMnS read overhead, 200 concurrent (stub 300 ms\(if .ramp_ms then ", started over \(.ramp_ms) ms" else "" end)), p99 ms | \(.p99_overhead_ms | ms) (avg \(.avg_overhead_ms | ms), \(.rps | n) reads/s) | \(.direct_p99_overhead_ms | ms) (avg \(.direct_avg_overhead_ms | ms), \(.direct_rps | n) reads/s) | \(.added_p99_ms | plus) | ≤ \($t.p99_200_ms) | \(yes(.p99_overhead_ms <= $t.p99_200_ms)) | - | - | - |"),
        (.read_200_concurrent_same_start // empty | "| the same, the 200 clients started at once, p99 ms | \(.p99_overhead_ms | ms) (avg \(.avg_overhead_ms | ms), \(.rps | n) reads/s) | \(.direct_p99_overhead_ms | ms) (avg \(.direct_avg_overhead_ms | ms), \(.direct_rps | n) reads/s) | \(.added_p99_ms | plus) | - | - | - | - | - |"),
        (.read_zero_delay // empty | "| ProvMnS reads/s, zero-delay stub, 200 concurrent | \(.rps | n) | \(.direct_rps | n) | ncmpd / stub alone \(.rps_vs_direct | d2) | ≥ \($t.zero_delay_rps | n) | \(yes(.rps >= $t.zero_delay_rps)) | - | - | - |"),
        (.policy // empty | "| policy check added to a patch (40/s, zero-delay stub), median ms | \($p.policy_added_ms | plus) (\(.on_p50_ms | ms) on, \(.off_p50_ms | ms) off) | a permission request alone: \(.direct_policy_p50_overhead_ms | ms) | - | ≤ \($t.policy_ms) | \(yes($p.policy_added_ms <= $t.policy_ms)) | - | - | - |"),
        "",
        ([.passthrough_read_kpi_rate, .passthrough_write_kpi_rate] | if .[0] and .[1] then
        "Beside the KPI-rate run, bench data'"'"'s pass-through load through ncmpd: reads 13/s \(.[0].avg_overhead_ms | ms) ms average overhead (p99 \(.[0].p99_overhead_ms | ms)), writes 5.2/s \(.[1].avg_overhead_ms | ms) ms (p99 \(.[1].p99_overhead_ms | ms))." else empty end),
        "",
        (.policy // empty | "The policy check: patches at \(.rate_per_s)/s through two ncmpd serving REST alone, the policy executor off and on, in rounds off, on, on, off of \(.seconds_per_round) s; the figure is the mean of the rounds'"'"' medians on minus off (averages: \(.on_avg_ms | ms) on, \(.off_avg_ms | ms) off, \(.added_avg_ms | plus) ms).")' \
        --argjson t "$REPORT_PROVMNS_TARGETS"
}

_report_avc() {
    _report_has avc || { _report_missing avc; return 0; }
    _report_jq '.scenarios.avc // empty |
        "\(.events | n) events; delivered \(.delivered | n), forwarded twice \(.duplicates | n), dead-lettered \(.dead_lettered | n); batch \(.batch_size), \(.workers) workers.\n",
        "| metric | ncmpd | raw limit: consume + produce, same run | ncmpd / raw | NCMP'"'"'s reference load | ncmpd vs load |",
        "|---|---|---|---|---|---|",
        "| AVC events forwarded, events/s | \(.forwarded_per_s | n) | \(.raw_consume_produce_per_s | n) | \(ratio(.forwarded_per_s; .raw_consume_produce_per_s)) | \($ncmp.avc_load_per_s | n) (at least 98 % forwarded) | \(times(.forwarded_per_s; $ncmp.avc_load_per_s)) |"'
}

_report_ingest() {
    _report_has ingest || { _report_missing ingest; return 0; }
    _report_jq '.scenarios.ingest // empty |
        "\(.events | n) events, batch \(.batch_size), \(.workers) workers, \(.duplicates) duplicates.\n",
        "| metric | events/s | pipeline / raw |",
        "|---|---|---|",
        "| pipeline (publish -> row) | \(.pipeline_events_per_s | n) | 1.00 |",
        "| raw produce (`ncmp-publish`) | \(.raw_produce_per_s | n) | \(ratio(.pipeline_events_per_s; .raw_produce_per_s)) |",
        "| raw consume (no group) | \(.raw_consume_per_s | n) | \(ratio(.pipeline_events_per_s; .raw_consume_per_s)) |",
        "| raw COPY of the same rows | \(.copy_rows_per_s | n) | \(ratio(.pipeline_events_per_s; .copy_rows_per_s)) |"'
}

# CPS's store targets (the issue that asked for `bench cps`).
REPORT_CPS_TARGETS='{"times_faster": 20, "store": 100000, "cps_store": 3000, "replace": 50000,
 "delete": 400000, "vs_postgres": 1.5, "docs500_s": 15}'

_report_cps() {
    _report_has cps || { _report_missing cps; return 0; }
    _report_jq '.scenarios.cps | . as $c |
        def rate: if .seconds != null and .seconds > 0 and .nodes > 0 then (.nodes / .seconds | n) else "-" end;
        def yes($ok): if $ok == null then "n/a" elif $ok then "yes" else "**no**" end;
        "\(.devices_per_anchor | n) devices per anchor (\(.devices_per_anchor * 86 + 1 | n) nodes), 3 anchors; reads are the median of \(.runs) runs, writes and deletes are timed once, as CPS times them. \"ncmpd vs CPS\" is CPS'"'"'s expected seconds over ncmpd'"'"'s.\n",
        "| test | scenario | ncmpd, s | CPS expected, s | ncmpd vs CPS | nodes | nodes/s |",
        "|---|---|---|---|---|---|---|",
        (.scenarios[] | "| \(.test) | \(.name | sub("^CPS: ?"; "") | cell) | \(if .seconds == null then "failed: " + (.error // "?" | cell) else (.seconds | secs) end) | \(.cps_expected_seconds) | \(times(.cps_expected_seconds; .seconds)) | \(.nodes | n) | \(rate) |"),
        "",
        "Targets (a 2-core machine):\n",
        "| target | measured | goal | met |",
        "|---|---|---|---|",
        ([.scenarios[] | select(.seconds != null and .seconds > 0) | {name, x: (.cps_expected_seconds / .seconds)}] | min_by(.x) as $w |
         ([$c.scenarios[] | select(.seconds == null)] | length) as $f |
         "| every scenario faster than CPS'"'"'s expected time | slowest: \(if $w then times($w.x; 1) + " (" + ($w.name | sub("^CPS: ?"; "") | cell) + ")" else "n/a" end)\(if $f > 0 then "; \($f) failed" else "" end) | ≥ \($t.times_faster)× | \(yes(if $w then ($w.x >= $t.times_faster and $f == 0) else null end)) |"),
        "| store, validated nodes/s (3 anchors of \(.devices_per_anchor | n) devices) | \(.store_nodes_per_s | n) | ≥ \($t.store | n) (CPS ~\($t.cps_store | n)) | \(yes(if .store_nodes_per_s then .store_nodes_per_s >= $t.store else null end)) |",
        "| replace node and descendants, nodes/s (\(.replace_nodes | n) nodes) | \(.replace_nodes_per_s | n) | ≥ \($t.replace | n) | \(yes(if .replace_nodes_per_s then .replace_nodes_per_s >= $t.replace else null end)) |",
        "| delete, nodes/s (a whole tree) | \(.delete_nodes_per_s | n) | ≥ \($t.delete | n) | \(yes(if .delete_nodes_per_s then .delete_nodes_per_s >= $t.delete else null end)) |",
        "| read all \(.read_all_nodes | n) nodes of an anchor, ms | \(.read_all_ms | ms) (PostgreSQL alone: \(.read_all_postgres_ms | ms), ×\(ratio(.read_all_ms; .read_all_postgres_ms))) | ≤ \($t.vs_postgres) × PostgreSQL | \(yes(if .read_all_ms and .read_all_postgres_ms then .read_all_ms <= $t.vs_postgres * .read_all_postgres_ms else null end)) |",
        "| leaf-condition query returning every device, ms | \(.query_leaf_condition_ms | ms) (PostgreSQL alone: \(.query_leaf_condition_postgres_ms | ms), ×\(ratio(.query_leaf_condition_ms; .query_leaf_condition_postgres_ms))) | ≤ \($t.vs_postgres) × PostgreSQL | \(yes(if .query_leaf_condition_ms and .query_leaf_condition_postgres_ms then .query_leaf_condition_ms <= $t.vs_postgres * .query_leaf_condition_postgres_ms else null end)) |",
        "| 500 documents of 269 KB, s | \(.docs269_500_seconds | secs) | ≤ \($t.docs500_s) | \(yes(if .docs269_500_seconds then .docs269_500_seconds <= $t.docs500_s else null end)) |",
        "| 3,000 documents of 269 KB, s | \(.docs269_3000_seconds | secs) | the rate of 500 (\(if .docs269_500_seconds then (.docs269_500_seconds * 6 | secs) else "n/a" end)) | \(yes(if .docs269_500_seconds and .docs269_3000_seconds then .docs269_3000_seconds <= 1.1 * 6 * .docs269_500_seconds else null end)) |",
        "| ncmpd'"'"'s RSS over the document streams, MB | \(.docs269_rss_start_mb | ms) → \(.docs269_rss_end_mb | ms) | flat | \(yes(if .docs269_rss_start_mb and .docs269_rss_end_mb then .docs269_rss_end_mb <= 1.2 * .docs269_rss_start_mb else null end)) |",
        "",
        "Raw limits, measured in the same run on the same rows and document:\n",
        "| limit | rows or nodes | per second | ncmpd'"'"'s store / limit |",
        "|---|---|---|---|",
        "| COPY of one anchor'"'"'s fragment rows into an empty copy of `fragment` | \(.copy_rows | n) | \(.copy_rows_per_s | n) | \(ratio(.store_nodes_per_s; .copy_rows_per_s)) |",
        "| libyang parsing the anchors'"'"' document (parse only, strict, as ncmpd) | \(.libyang_nodes | n) | \(.libyang_nodes_per_s | n) | \(ratio(.store_nodes_per_s; .libyang_nodes_per_s)) |",
        "",
        "Documents of 269 KB (25 devices, 2,150 nodes each) posted one after another as list elements of one anchor:\n",
        "| documents | nodes | seconds | nodes/s | slowest tenth, nodes/s | COPY of the same rows, rows/s | its slowest tenth | RSS start → end, MB | peak RSS start → end, MB |",
        "|---|---|---|---|---|---|---|---|---|",
        (.docs269[]? | "| \(.documents | n) | \(.nodes | n) | \(if .seconds then (.seconds | secs) else "failed: " + (.error // "?" | cell) end) | \(if .seconds then (.nodes / .seconds | n) else "-" end) | \([.tenths_nodes_per_s[] | select(. > 0)] | min | n) | \(if .copy_seconds then (.nodes / .copy_seconds | n) else "-" end) | \([.copy_tenths_rows_per_s[]? | select(. > 0)] | min | n) | \(.rss_start_mb | ms) → \(.rss_end_mb | ms) | \(.peak_rss_start_mb | ms) → \(.peak_rss_end_mb | ms) |"),
        "",
        (if .docs269_500_seconds and .docs269_3000_seconds and .docs269_copy_500_seconds and .docs269_copy_3000_seconds then
           "The rate of the 3,000 documents against that of the 500: ncmpd \(ratio(6 * .docs269_500_seconds; .docs269_3000_seconds)), COPY of the same rows (one transaction per document, into an empty table like `fragment_store`) \(ratio(6 * .docs269_copy_500_seconds; .docs269_copy_3000_seconds)).\n"
         else empty end),
        "Seed-sized anchors of \(.seed.devices | n) devices (\(.seed.devices * 86 + 1 | n) nodes), one after another:\n",
        "| anchor | nodes | nodes in the database after | seconds | nodes/s | µs per node |",
        "|---|---|---|---|---|---|",
        (.seed.runs | to_entries[] | "| \(.key + 1) | \(.value.nodes | n) | \(.value.database_nodes | n) | \(.value.seconds | secs) | \(.value.nodes_per_s | n) | \(if .value.nodes_per_s then (1000000 / .value.nodes_per_s | ms) else "n/a" end) |"),
        "",
        "Reading every node of the last seed anchor: \(.seed.read_all_ms | ms) ms (PostgreSQL alone returning its rows: \(.seed.read_all_postgres_ms | ms) ms, ×\(ratio(.seed.read_all_ms; .seed.read_all_postgres_ms)))."' \
        --argjson t "$REPORT_CPS_TARGETS" || return 1
    printf '\n'
    _report_cps_plot
}

# Data sync's targets (the issue that asked for `bench data-sync`).
REPORT_DATA_SYNC_TARGETS='{"synced": 2000, "avc": 20000, "notify": 0.7}'

_report_data_sync() {
    _report_has data-sync || { _report_missing data-sync; return 0; }
    _report_jq '.scenarios["data-sync"] |
        def yes($ok): if $ok == null then "n/a" elif $ok then "yes" else "**no**" end;
        "\(.handles | n) handles, \(.nodes | n) nodes; \(.avc_events | n) AVC events.\(if .calibration_cpu_ms then " The machine'"'"'s calibration (CPU time of SHA-256 over 4 MB, `ncmp-bench-raw calibrate`) was \(.calibration_cpu_ms.start) ms at the start and \(.calibration_cpu_ms.end) ms at the end." else "" end)\n",
        "| target | measured | raw limit, same run | goal | met |",
        "|---|---|---|---|---|",
        "| handles synced per second | \(.synced_handles_per_s | n) (\(.nodes_per_s | n) nodes/s) | COPY of the same rows: \(.copy_rows_per_s | n) rows/s (\(.copy_rows_per_s / (.nodes / .handles) | n) handles/s); sync / COPY \(.sync_vs_copy | ms) | ≥ \($t.synced | n) | \(yes(if .synced_handles_per_s then .synced_handles_per_s >= $t.synced else null end)) |",
        "| AVC changes applied per second | \(.avc_applied_per_s | n) (\(.avc_dead_lettered) dead-lettered) | | ≥ \($t.avc | n) | \(yes(if .avc_applied_per_s then .avc_applied_per_s >= $t.avc else null end)) |",
        "| nodes written per second, data-updated events on / off | \(.notify_on_nodes_per_s | n) / \(.notify_off_nodes_per_s | n) = \(.notify_on_vs_off | ms) | | ≥ \($t.notify) | \(yes(if .notify_on_vs_off then .notify_on_vs_off >= $t.notify else null end)) |"' \
        --argjson t "$REPORT_DATA_SYNC_TARGETS"
}

# NCMP's write data jobs (WORKLOAD.md §1.8 tests 8 and 9: the kpi.json
# limit and the 2025-12 expectation, ms) and the targets of the issue
# that asked for `bench datajobs`.
REPORT_DATAJOBS_NCMP='{"small": {"limit": 500, "exp": 20}, "large": {"limit": 30000, "exp": 4200}}'
REPORT_DATAJOBS_TARGETS='{"small_ms": 2, "large_ms": 400, "vs_raw": 2, "rss_vs_body": 2}'

_report_datajobs() {
    _report_has datajobs || { _report_missing datajobs; return 0; }
    _report_jq '.scenarios.datajobs | . as $j |
        def yes($ok): if $ok == null then "n/a" elif $ok then "yes" else "**no**" end;
        def lat($r): "\($r.avg_ms | ms) (p50 \($r.p50_ms | ms), p99 \($r.p99_ms | ms))";
        "\(.handles | n) READY handles with alternate ids, one DMI stub answering at once. Both jobs together for \(.mixed_seconds) s (the small one at \(.small.rate_per_s)/s, the large one every \(.large.every_s) s: \(.small.jobs | n) and \(.large.jobs | n) jobs), then each alone for \(.saturation_seconds) s. A job'"'"'s time is the client'"'"'s, as k6'"'"'s.\(if .load_average_1m then " The machine'"'"'s load average (1 minute) was \(.load_average_1m.before) before the jobs and \(.load_average_1m.after) after them." else "" end)\n",
        "| job | ncmpd, ms | NCMP limit, ms | NCMP 2025-12 expectation, ms | ncmpd vs expectation | target | met |",
        "|---|---|---|---|---|---|---|",
        "| small (\(.small.ops | n) operations, \(.small.body_bytes / 1000 | d1) KB), with the large | \(lat(.small)) | \($ncmp_dj.small.limit | n) | \($ncmp_dj.small.exp | n) | \(times($ncmp_dj.small.exp; .small.avg_ms)) | ≤ \($t.small_ms) | \(yes(if .small.avg_ms then .small.avg_ms <= $t.small_ms else null end)) |",
        "| large (\(.large.ops | n) operations, \(.large.body_bytes / 1000000 | d1) MB), with the small | \(lat(.large)) | \($ncmp_dj.large.limit | n) | \($ncmp_dj.large.exp | n) | \(times($ncmp_dj.large.exp; .large.avg_ms)) | ≤ \($t.large_ms) | \(yes(if .large.avg_ms then .large.avg_ms <= $t.large_ms else null end)) |",
        "",
        "| metric | ncmpd | raw limit, same run | ncmpd / raw | target | met |",
        "|---|---|---|---|---|---|",
        "| large job with the small, avg ms | \(.large.avg_ms | ms) | json-c parsing the same body: \(.raw_parse_ms | ms) | \(ratio(.large.avg_ms; .raw_parse_ms)) | ≤ \($t.vs_raw) × the parse | \(yes(if .large.avg_ms and .raw_parse_ms then .large.avg_ms <= $t.vs_raw * .raw_parse_ms else null end)) |",
        (if .large.alone.cpu_ms_per_job and .raw_parse_cpu_ms then "| the same in CPU time: ncmpd'"'"'s per large job alone (less its idle), ms | \(.large.alone.cpu_ms_per_job | ms) | json-c'"'"'s for the parse: \(.raw_parse_cpu_ms | ms) | \(ratio(.large.alone.cpu_ms_per_job; .raw_parse_cpu_ms)) | ≤ \($t.vs_raw) × the parse | \(yes(.large.alone.cpu_ms_per_job <= $t.vs_raw * .raw_parse_cpu_ms)) |" else empty end),
        "| ncmpd'"'"'s peak RSS with the large job alone, MB | \(.large.peak_rss_mb | ms) (\(.large.rss_before_mb | ms) before the first job: +\(.large.rss_growth_mb | ms)) | the body: \(.large.body_bytes / 1048576 | d1) | growth \(.large.rss_growth_vs_body | d2) | growth ≤ \($t.rss_vs_body) × the body | \(yes(if .large.rss_growth_vs_body then .large.rss_growth_vs_body <= $t.rss_vs_body else null end)) |",
        "",
        "Each job alone, at saturation:\n",
        "| job | clients | jobs | jobs/s | operations/s | avg ms | p50 ms | p99 ms |",
        "|---|---|---|---|---|---|---|---|",
        (["small", "large"][] as $k | $j[$k] as $r | $r.alone | "| \($k) | \(.concurrency) | \(.ok | n) of \(.jobs | n) | \(.jobs_per_s | if . >= 10 then n else d2 end) | \(.ops_per_s | n) | \(.avg_ms | ms) | \(.p50_ms | ms) | \(.p99_ms | ms) |"),
        "",
        "The DMI stub received \(.stub_operations | n) operations, the jobs answered ok hold \(.ok_operations | n)."' \
        --argjson t "$REPORT_DATAJOBS_TARGETS" --argjson ncmp_dj "$REPORT_DATAJOBS_NCMP"
}

# _report_cps_plot: nodes/s against nodes (writes by size, seed anchors by
# the nodes in the database, the document stream by the nodes in its
# anchor) into $_report_img; prints its Markdown.
_report_cps_plot() {
    local dir="$_report_img"
    if ! command -v gnuplot >/dev/null; then
        printf '_No plot: gnuplot was not installed when this report was made._\n'
        return 0
    fi
    mkdir -p "$dir"
    _report_jq '.scenarios.cps.scenarios[] | select(.test == "Write" and .seconds != null and .seconds > 0 and .nodes > 0) | "\(.nodes) \(.nodes / .seconds)"' >"$dir/cps-writes.dat"
    _report_jq '.scenarios.cps.seed.runs[] | select(.nodes_per_s != null) | "\(.database_nodes) \(.nodes_per_s)"' >"$dir/cps-seed.dat"
    # a blank line between the two streams: two lines in the plot
    _report_jq '.scenarios.cps.docs269[]? | select(.seconds != null) | . as $d |
        ([range(0; 10) as $i | select($d.tenths_nodes_per_s[$i] > 0) |
          "\(($i + 1) * $d.nodes / 10) \($d.tenths_nodes_per_s[$i])"] | join("\n")), ""' >"$dir/cps-docs.dat"
    gnuplot <<GNUPLOT || die "report: gnuplot failed"
set terminal pngcairo size 900,540 noenhanced font ",11"
set logscale x
set grid
set key bottom right
set xlabel "nodes (log scale): in the request / in the database / in the anchor"
set format x "%.0s%c"
set ylabel "nodes/s"
set yrange [0:*]
set output "$dir/cps-nodes-per-s.png"
set title "CPS store: nodes written per second against the number of nodes"
plot "$dir/cps-writes.dat" using 1:2 with points pt 7 ps 1.2 title "one write, by nodes in the request", \
     "$dir/cps-seed.dat" using 1:2 with linespoints lw 2 pt 5 title "seed anchors, by nodes in the database", \
     "$dir/cps-docs.dat" using 1:2 with linespoints lw 1 pt 1 title "269 KB documents (tenths), by nodes in the anchor"
GNUPLOT
    rm -f "$dir/cps-writes.dat" "$dir/cps-seed.dat" "$dir/cps-docs.dat"
    printf '![CPS store nodes/s against nodes](img/cps-nodes-per-s.png)\n'
}

# _report_plot: the two scaling plots into $_report_img; prints their
# Markdown. Without gnuplot, says so.
_report_plot() {
    local data="$_report_img/registration-scale.dat"
    if ! command -v gnuplot >/dev/null; then
        say "report: gnuplot is missing (Debian: gnuplot-nox); no plots"
        printf '_No plots: gnuplot was not installed when this report was made._\n'
        return 0
    fi
    mkdir -p "$_report_img"
    jq -r '.[] | "\(.handles) \(.registration_handles_per_s) \(.deregistration_handles_per_s) \(.copy_rows_per_s) \(.handles / .registration_handles_per_s) \(.handles / .deregistration_handles_per_s)"' \
        <<<"$_report_scale" >"$data"
    gnuplot <<GNUPLOT || die "report: gnuplot failed"
set terminal pngcairo size 900,540 noenhanced font ",11"
set logscale x
set grid
set key top right
set xlabel "handles registered, then deregistered (log scale)"
set format x "%.0s%c"
set output "$_report_img/registration-scale.png"
set ylabel "handles/s"
set yrange [0:*]
set title "Registration and deregistration throughput against the number of handles"
plot "$data" using 1:2 with linespoints lw 2 title "registration", \
     "$data" using 1:3 with linespoints lw 2 title "deregistration", \
     "$data" using 1:4 with linespoints dt 2 title "raw COPY of the same rows"
set output "$_report_img/registration-scale-time.png"
set logscale y
set yrange [*:*]
set ylabel "seconds (log scale)"
set title "Time against the number of handles (dotted: linear cost from the smallest size)"
first_n = real(system("head -n 1 '$data' | cut -d' ' -f1"))
first_t = real(system("head -n 1 '$data' | cut -d' ' -f5"))
plot "$data" using 1:5 with linespoints lw 2 title "registration", \
     "$data" using 1:6 with linespoints lw 2 title "deregistration", \
     first_t * x / first_n with lines dt 3 lc "black" title "linear from the smallest size"
GNUPLOT
    rm -f "$data"
    printf '![throughput against handles](img/registration-scale.png)\n\n'
    printf '![time against handles](img/registration-scale-time.png)\n'
}

_report_scaling() {
    if [ "$_report_scale" = null ]; then
        printf '_No scaling run in this report (`./run bench registration-scale --json scale.json`, then\n'
        printf '`./run report --json all.json --scale scale.json`)._\n'
        return 0
    fi
    jq -r "$REPORT_JQ_DEFS"'
        "Each size on fresh services (an empty inventory and empty topics).\n",
        "| handles | registration, handles/s | deregistration, handles/s | raw limit: COPY, rows/s | registration / COPY | deregistration / COPY | registration, µs per handle |",
        "|---|---|---|---|---|---|---|",
        (.[] | "| \(.handles | n) | \(.registration_handles_per_s | n) | \(.deregistration_handles_per_s | n) | \(.copy_rows_per_s | n) | \(ratio(.registration_handles_per_s; .copy_rows_per_s)) | \(ratio(.deregistration_handles_per_s; .copy_rows_per_s)) | \(1000000 / .registration_handles_per_s | ms) |"),
        "",
        (sort_by(.handles) | first as $a | last as $b | if ($a.handles == $b.handles) then empty else
        "From \($a.handles | n) to \($b.handles | n) handles (\($b.handles / $a.handles | n)× the work) registration took \(times($b.registration_seconds; $a.registration_seconds)) the time and deregistration \(times($b.deregistration_seconds; $a.deregistration_seconds)); a linear cost takes \($b.handles / $a.handles | n)×." end)' \
        <<<"$_report_scale"
    printf '\n'
    _report_plot
    printf '\nNCMP'"'"'s published deregistration against size (one instance on a laptop, 10 modules per\n'
    printf 'handle, ONAP wiki, WORKLOAD.md §8.2): %s. NCMP'"'"'s rate falls as the inventory grows.\n' \
        "$(jq -r "$REPORT_JQ_DEFS"'.dereg_by_size | map("\(.[0] | n) handles \(.[1]) handles/s") | join(", ")' \
            <<<"$REPORT_NCMP_JSON")"
}

# _report_kpi: NCMP's KPI table from `./run bench kpi`, with its plot.
_report_kpi() {
    if [ -z "$_report_kpi" ]; then
        printf '_No KPI run in this report (`./run bench kpi --json kpi.json`, then\n'
        printf '`./run report ... --kpi kpi.json`)._\n'
        return 0
    fi
    jq -r "$REPORT_JQ_DEFS"'
        def v: if .ncmpd == null then "n/a" elif .unit == "ratio" then (.ncmpd * 10000 | round / 10000 | tostring)
               elif .unit == "ms" then (.ncmpd | ms) elif (.unit | endswith("/s")) then (.ncmpd | n)
               else (.ncmpd * 10 | round / 10 | tostring) end;
        def num: if . < 1 then tostring else n end;
        def lim: (if .id == "0" or (.unit == "ms") then "≤ " else "≥ " end) + (.ncmp_limit | num);
        "\(.handles | n) handles, \(.minutes | n) minutes of NCMP'"'"'s kpi profile, \(.cores) cores; \(.http_requests | n) HTTP requests, \(.http_failed | n) failed; the load clients used \(.client_cpu_s | d1) s of CPU; ncmpd'"'"'s RSS \(.rss_mb_first | d1) → at most \(.rss_mb_max | d1) MB.\n",
        (if .note then "_\(.note)_\n" else empty end),
        (if .loadavg_start then "The machine'"'"'s load average: \(.loadavg_start) at the start of the scenarios, \(.loadavg_end) at their end (\(.cores) cores).\n" else empty end),
        "| # | KPI | unit | NCMP limit | NCMP expectation | ncmpd | passed |",
        "|---|---|---|---|---|---|---|",
        (.kpis[] | "| \(.id) | \(.name | cell) | \(.unit) | \(lim) | \(.ncmp_expectation | num) | \(if .missing then "missing" else v end) | \(if .pass then "yes" else "**no**" end) |"),
        "",
        "Registration: the \(.registration.requests) requests answered in \(.registration.accept_seconds | secs) s; every handle READY at id-search number \(.registration.polls) (one every 5 s, as NCMP polls), \(.registration.seconds | secs) s after the first request. AVC background: \(.avc.published | n) events published, \(.avc.forwarded | n) forwarded."' \
        "$_report_kpi"
    printf '\n'
    if command -v gnuplot >/dev/null; then
        mkdir -p "$_report_img"
        _kpi_plot "$(cat "$_report_kpi")" "$_report_img/kpi.png" >/dev/null
        printf '![each latency KPI, the average of each minute](img/kpi.png)\n'
    fi
}

# _report_block NAME: the generated block for a template line @NAME@.
_report_block() {
    case "$1" in
    MACHINE) _report_machine ;;
    COMMANDS) _report_commands ;;
    REGISTRATION) _report_registration ;;
    SCALING) _report_scaling ;;
    MODULE_SYNC) _report_module_sync ;;
    SEARCH) _report_search ;;
    DATA) _report_data ;;
    PROVMNS) _report_provmns ;;
    AVC) _report_avc ;;
    INGEST) _report_ingest ;;
    CPS) _report_cps ;;
    DATA_SYNC) _report_data_sync ;;
    DATAJOBS) _report_datajobs ;;
    KPI) _report_kpi ;;
    *) die "report: the template names an unknown block @$1@" ;;
    esac
}

# report_main --json FILE [--scale FILE] [--kpi FILE] [--out FILE] [--template FILE]
report_main() {
    local all="" scale="" kpi="" out="$NCMP_ROOT/docs/performance.md" template="$NCMP_ROOT/docs/performance.md.in"
    local line tmp
    while [ $# -gt 0 ]; do
        case "$1" in
        --json) all=$2; shift 2 ;;
        --scale) scale=$2; shift 2 ;;
        --kpi) kpi=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --template) template=$2; shift 2 ;;
        *) die "report: unknown option '$1' (options: --json FILE, --scale FILE, --kpi FILE, --out FILE, --template FILE)" ;;
        esac
    done
    [ -n "$all" ] || die "report: --json FILE (from ./run bench all) is required"
    # jq for the tables, gnuplot for the plots: a report made without
    # gnuplot loses every plot of docs/performance.md, so root installs it;
    # another user gets the tables and a line saying the plots are missing
    if [ "$(id -u)" -eq 0 ]; then
        deps_ensure report
    else
        command -v jq >/dev/null || deps_ensure report
    fi
    [ -f "$all" ] || die "report: no such file: $all"
    jq -e '.machine and .commands and (.scenarios | type == "object")' "$all" >/dev/null 2>&1 ||
        die "report: $all is not the JSON of ./run bench all"
    _report_all=$all _report_scale=null
    if [ -n "$scale" ]; then
        [ -f "$scale" ] || die "report: no such file: $scale"
        jq -e 'type == "array" and length > 0 and all(.[]; .handles > 0 and
            .registration_handles_per_s > 0 and .deregistration_handles_per_s > 0)' "$scale" \
            >/dev/null 2>&1 || die "report: $scale is not the JSON of ./run bench registration-scale"
        _report_scale=$(jq -c 'sort_by(.handles)' "$scale")
    fi
    _report_kpi=""
    if [ -n "$kpi" ]; then
        [ -f "$kpi" ] || die "report: no such file: $kpi"
        jq -e '.scenario == "kpi" and (.kpis | type == "array" and length > 0)' "$kpi" >/dev/null 2>&1 ||
            die "report: $kpi is not the JSON of ./run bench kpi"
        _report_kpi=$kpi
    fi
    _report_img="$(dirname "$out")/img"
    [ -f "$template" ] || die "report: no template $template"
    tmp="$out.tmp"
    mkdir -p "$(dirname "$out")"
    (
        printf '<!-- Generated by ./run report from docs/performance.md.in: edit the template. -->\n'
        while IFS= read -r line || [ -n "$line" ]; do
            if [[ "$line" =~ ^@([A-Z_]+)@$ ]]; then
                _report_block "${BASH_REMATCH[1]}" || exit 1
            else
                printf '%s\n' "$line"
            fi
        done <"$template"
    ) >"$tmp" || { rm -f "$tmp"; die "report: $out not written"; }
    mv "$tmp" "$out"
    info "wrote $out"
}
