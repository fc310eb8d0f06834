#!/usr/bin/env bash
# Tests of ./run report: the generator fills docs/performance.md.in from a
# fixed `bench all` JSON, a scaling JSON and a KPI JSON
# (tests/scripts/fixtures/), with
# the right rows, ratios and NCMP figures, keeps the hand-written text,
# draws the plots (when gnuplot is installed) and refuses bad input with a
# clear message. Needs jq; no services.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUN="$ROOT/run"
FIX="$ROOT/tests/scripts/fixtures"
# shellcheck source=tests/scripts/check_lib.sh
. "$ROOT/tests/scripts/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# has FILE LINE: FILE holds LINE exactly, as a whole line.
has() {
    grep -qxF -- "$2" "$1" || { echo "missing line: $2"; return 1; }
}

generate() {
    "$RUN" report --json "$FIX/bench-all.json" --scale "$FIX/scale.json" --kpi "$FIX/kpi.json" \
        --out "$scratch/full/performance.md" \
        >"$scratch/full.log" 2>&1 || { cat "$scratch/full.log"; return 1; }
}

registration_rows_and_ratios() {
    local f="$scratch/full/performance.md"
    has "$f" "| registration, handles/s (publish -> ADVISED event) | 7,000 | 35,000 | 0.20 | 70 | 100× | 118 | 59× |" &&
        has "$f" "| deregistration, handles/s (publish -> DELETED event) | 10,500 | 35,000 | 0.30 | 140 | 75× | 215 | 49× |" &&
        has "$f" "50,000 handles, batch size 8 requests, 2 workers."
}

module_sync_rows() {
    local f="$scratch/full/performance.md"
    has "$f" "| publish -> all READY, handles/s | 5,000 | 35,000 | 0.14 | 70 | 71× | 118 | 42× |" &&
        has "$f" "| publish -> all READY with the busy window, handles/s (NCMP's measure) | 250 | 35,000 | 0.01 | 70 | 3.6× | 118 | 2.1× |"
}

search_rows_lower_is_better() {
    local f="$scratch/full/performance.md"
    # for times, the ratio is NCMP's milliseconds over ncmpd's
    has "$f" "| id-search, no-filter | 70.0 | 35.0 | 2.00 | 700 | 10× | 838 | 12× |" &&
        has "$f" "| id-search, module | 100 | 50.0 | 2.00 | 2,000 | 20× | 220 | 2.2× |" &&
        has "$f" "| search, trust-level | 400 | 200 | 2.00 | 16,000 | 40× | 20,412 | 51× |"
}

avc_and_ingest_rows() {
    local f="$scratch/full/performance.md"
    has "$f" "| AVC events forwarded, events/s | 110,000 | 220,000 | 0.50 | 5,500 (at least 98 % forwarded) | 20× |" &&
        has "$f" "| pipeline (publish -> row) | 30,000 | 1.00 |" &&
        has "$f" "| raw COPY of the same rows | 100,000 | 0.30 |"
}

cps_rows_targets_and_limits() {
    local f="$scratch/full/performance.md"
    # CPS's expected seconds over ncmpd's; a failed scenario says why
    has "$f" "| Write | Writing 50 devices | 0.050 | 1.45 | 29× | 4,301 | 86,020 |" &&
        has "$f" "| Query | Query 1 anchor top element | failed: endpoint not available (HTTP 404) | 0.89 | n/a | 0 | - |" &&
        has "$f" "| every scenario faster than CPS's expected time | slowest: 10× (Read datatree with all descendants); 1 failed | ≥ 20× | **no** |" &&
        has "$f" "| store, validated nodes/s (3 anchors of 1,000 devices) | 120,000 | ≥ 100,000 (CPS ~3,000) | yes |" &&
        has "$f" "| read all 86,001 nodes of an anchor, ms | 200 (PostgreSQL alone: 160, ×1.25) | ≤ 1.5 × PostgreSQL | yes |" &&
        has "$f" "| leaf-condition query returning every device, ms | n/a (PostgreSQL alone: 180, ×n/a) | ≤ 1.5 × PostgreSQL | n/a |" &&
        has "$f" "| 500 documents of 269 KB, s | 12.5 | ≤ 15 | yes |" &&
        has "$f" "| COPY of one anchor's fragment rows into an empty copy of \`fragment\` | 86,001 | 150,000 | 0.80 |" &&
        has "$f" "| 500 | 1,075,000 | 12.5 | 86,000 | 80,000 | 172,000 | 160,000 | 70.0 → 71.0 | 75.0 → 75.0 |" &&
        has "$f" "The rate of the 3,000 documents against that of the 500: ncmpd 1.00, COPY of the same rows (one transaction per document, into an empty table like \`fragment_store\`) 0.94." &&
        has "$f" "| 2 | 258,001 | 774,005 | 2.58 | 100,000 | 10.0 |"
}

data_sync_rows_and_targets() {
    local f="$scratch/full/performance.md"
    has "$f" "| handles synced per second | 500 (43,500 nodes/s) | COPY of the same rows: 87,000 rows/s (1,000 handles/s); sync / COPY 0.50 | ≥ 2,000 | **no** |" &&
        has "$f" "| AVC changes applied per second | 25,000 (0 dead-lettered) | | ≥ 20,000 | yes |" &&
        has "$f" "| nodes written per second, data-updated events on / off | 3,000 / 4,000 = 0.75 | | ≥ 0.7 | yes |"
}

provmns_rows_targets_and_stub_alone() {
    local f="$scratch/full/performance.md"
    # beside each figure the same requests straight to the stub, what ncmpd
    # adds, the target met or not, NCMP's limit and expectation (15 ms over
    # ncmpd's average)
    has "$f" "| ProvMnS read overhead, 40/s (stub 300 ms), avg ms | 0.80 (p50 0.70, p99 2.50) | 0.30 (p50 0.25, p99 1.20) | +0.50 | ≤ 1 | yes | ≤ 100 | 15 | 19× |" &&
        has "$f" "| ProvMnS patch overhead, 1/s (stub 670 ms), avg ms | 1.50 (p50 1.20, p99 3.00) | 0.50 (p50 0.40, p99 1.00) | +1.00 | ≤ 1 | **no** | ≤ 200 | 15 | 10× |" &&
        has "$f" "| ProvMnS read overhead, 200 concurrent (stub 300 ms), p99 ms | 12.0 (avg 3.00, 640 reads/s) | 4.00 (avg 1.00, 660 reads/s) | +8.00 | ≤ 5 | **no** | - | - | - |" &&
        has "$f" "| ProvMnS reads/s, zero-delay stub, 200 concurrent | 2,500 | 10,000 | ncmpd / stub alone 0.25 | ≥ 5,000 | **no** | - | - | - |" &&
        has "$f" "| policy check added to a patch (40/s, zero-delay stub), median ms | +0.30 (1.50 on, 1.20 off) | a permission request alone: 0.40 | - | ≤ 0.5 | yes | - | - | - |" &&
        grep -qF "bench data's pass-through load through ncmpd: reads 13/s 1.10 ms average overhead (p99 4.50), writes 5.2/s 1.40 ms (p99 5.50)." "$f" &&
        grep -qF "The 1-minute load average, other work on the machine included, was 1.5 at the start and 2.25 at the end (2 cores)." "$f" &&
        grep -qF "The machine's calibration (CPU time of SHA-256 over 4 MB, \`ncmp-bench-raw calibrate\`) was 13.1 ms at the start and 14.5 ms at the end." "$f"
}

datajobs_rows_against_ncmp_and_targets() {
    local f="$scratch/full/performance.md"
    # NCMP's expected ms over ncmpd's; the large job against the raw parse
    # of the same run; memory as the growth against the body
    grep -qF "then each alone for 20 s. A job's time is the client's, as k6's. The machine's load average (1 minute) was 1.5 before the jobs and 2.25 after them." "$f" ||
        { echo "the datajobs intro lacks the load average"; return 1; }
    has "$f" "| small (100 operations, 21.5 KB), with the large | 1.50 (p50 1.20, p99 4.00) | 500 | 20 | 13× | ≤ 2 | yes |" &&
        has "$f" "| large (100,000 operations, 22.0 MB), with the small | 800 (p50 780, p99 850) | 30,000 | 4,200 | 5.3× | ≤ 400 | **no** |" &&
        has "$f" "| large job with the small, avg ms | 800 | json-c parsing the same body: 500 | 1.60 | ≤ 2 × the parse | yes |" &&
        has "$f" "| the same in CPU time: ncmpd's per large job alone (less its idle), ms | 1,000 | json-c's for the parse: 400 | 2.50 | ≤ 2 × the parse | **no** |" &&
        has "$f" "| ncmpd's peak RSS with the large job alone, MB | 171 (120 before the first job: +50.5) | the body: 21.0 | growth 2.41 | growth ≤ 2 × the body | **no** |" &&
        has "$f" "| small | 10 | 4,000 of 4,000 | 200 | 20,000 | 50.0 | 45.0 | 120 |" &&
        has "$f" "| large | 1 | 38 of 38 | 1.25 | 125,000 | 800 | 790 | 900 |"
}

missing_and_failed_scenarios_said() {
    local f="$scratch/full/performance.md"
    has "$f" "_Not measured in this run (\`./run bench data\`)._" &&
        has "$f" "Scenarios that failed in this run: \`data\`."
}

scaling_rows_sorted_with_linearity() {
    local f="$scratch/full/performance.md" rows
    rows=$(grep -E '^\| [0-9,]+ \| [0-9,]+ \| [0-9,]+ \| [0-9,]+ \|' "$f" | cut -d'|' -f2 | tr -d ' ' | paste -sd' ')
    [ "$rows" = "1,000 10,000 100,000" ] || { echo "scaling rows: $rows"; return 1; }
    has "$f" "| 100,000 | 5,000 | 8,000 | 40,000 | 0.13 | 0.20 | 200 |" &&
        grep -qF "From 1,000 to 100,000 handles (100× the work) registration took 40× the time and deregistration 50×" "$f"
}

machine_and_commands() {
    local f="$scratch/full/performance.md"
    has "$f" "2 cores (Test CPU), 23.5 GiB of memory, Linux 6.1.0, measured 2026-12-02T10:00:00Z." &&
        has "$f" "./run bench registration --json registration.json" &&
        has "$f" "./run bench registration-scale --sizes 1000,10000,100000 --json scale.json"
}

template_text_kept_and_filled() {
    local f="$scratch/full/performance.md"
    grep -q '^Where the time goes (CPU time of each process' "$f" || { echo "hand-written text lost"; return 1; }
    ! grep -qE '^@[A-Z_]+@$' "$f" || { echo "a block was not filled"; return 1; }
    # every non-empty line of the template that is not a block is in the
    # output, in order
    local text="$scratch/template-text"
    grep -vE '^(@[A-Z_]+@)?$' "$ROOT/docs/performance.md.in" >"$text"
    diff "$text" <(grep -xF -f "$text" "$f") || { echo "template lines missing or reordered"; return 1; }
}

plots_appear() {
    if ! command -v gnuplot >/dev/null; then
        echo "skip: gnuplot is not installed (Debian: gnuplot-nox), the plot files are not checked"
        return 0
    fi
    local p
    for p in registration-scale.png registration-scale-time.png cps-nodes-per-s.png kpi.png; do
        [ "$(head -c 4 "$scratch/full/img/$p" 2>/dev/null | od -An -c | tr -d ' ')" = "211PNG" ] ||
            { echo "$p is not a PNG"; return 1; }
        grep -qF "(img/$p)" "$scratch/full/performance.md" || { echo "$p not referenced"; return 1; }
    done
}

kpi_table_against_ncmp_limits() {
    local f="$scratch/full/performance.md"
    has "$f" "| 0 | HTTP request failures, all tests | ratio | ≤ 0.01 | 0 | 0 | yes |" &&
        has "$f" "| 1 | Registration | CM-handles/s | ≥ 22 | 70 | 101 | yes |" &&
        has "$f" "| 3a | ID search, no filter | ms | ≤ 2,600 | 700 | 34.6 | yes |" &&
        has "$f" "| 4b | search, module | ms | ≤ 24,000 | 15,000 | 25,000 | **no** |" &&
        has "$f" "| 7 | legacy batch read | events per 2-s consume | ≥ 150 | 200 | 200 | yes |" &&
        has "$f" "| 12 | AVC forwarded (Kafka verification) | % | ≥ 98 | 100 | 100 | yes |" &&
        has "$f" "./run bench kpi --json kpi.json" &&
        has "$f" "./run report --json all.json --scale scale.json --kpi kpi.json --out docs/performance.md"
}

same_input_same_output() {
    "$RUN" report --json "$FIX/bench-all.json" --scale "$FIX/scale.json" --kpi "$FIX/kpi.json" \
        --out "$scratch/again/performance.md" \
        >/dev/null 2>&1 || return 1
    cmp -s "$scratch/full/performance.md" "$scratch/again/performance.md"
}

without_scale_no_plot() {
    "$RUN" report --json "$FIX/bench-all.json" --out "$scratch/noscale/performance.md" >/dev/null 2>&1 || return 1
    grep -q "^_No scaling run in this report" "$scratch/noscale/performance.md" &&
        grep -q "^_No KPI run in this report" "$scratch/noscale/performance.md" &&
        [ ! -e "$scratch/noscale/img/registration-scale.png" ] && [ ! -e "$scratch/noscale/img/kpi.png" ]
}

bad_input_is_one_clear_error() {
    local out
    echo '{"scenario": "ingest"}' >"$scratch/one.json"
    out=$("$RUN" report --json "$scratch/one.json" --out "$scratch/bad/p.md" 2>&1) && return 1
    grep -q "is not the JSON of ./run bench all" <<<"$out" || { echo "$out"; return 1; }
    out=$("$RUN" report --json "$FIX/bench-all.json" --scale "$FIX/bench-all.json" --out "$scratch/bad/p.md" 2>&1) &&
        return 1
    grep -q "is not the JSON of ./run bench registration-scale" <<<"$out" || { echo "$out"; return 1; }
    out=$("$RUN" report --json "$FIX/bench-all.json" --kpi "$FIX/scale.json" --out "$scratch/bad/p.md" 2>&1) &&
        return 1
    grep -q "is not the JSON of ./run bench kpi" <<<"$out" || { echo "$out"; return 1; }
    printf '# x\n@NOPE@\n' >"$scratch/t.md.in"
    out=$("$RUN" report --json "$FIX/bench-all.json" --template "$scratch/t.md.in" --out "$scratch/bad/p.md" 2>&1) &&
        return 1
    grep -q "unknown block @NOPE@" <<<"$out" || { echo "$out"; return 1; }
    [ ! -e "$scratch/bad/p.md" ] || { echo "a failed report left an output file"; return 1; }
}

mkdir -p "$scratch/full" "$scratch/again" "$scratch/noscale" "$scratch/bad"
check "the report is generated from the fixtures" generate
check "registration rows and ratios" registration_rows_and_ratios
check "module-sync rows, with the busy window" module_sync_rows
check "search rows: NCMP's ms over ncmpd's" search_rows_lower_is_better
check "avc and ingest rows" avc_and_ingest_rows
check "cps rows, targets and raw limits" cps_rows_targets_and_limits
check "data-sync rows against its targets" data_sync_rows_and_targets
check "provmns rows: targets, the stub alone, NCMP's figures" provmns_rows_targets_and_stub_alone
check "datajobs rows against NCMP's figures and the targets" datajobs_rows_against_ncmp_and_targets
check "the KPI table against NCMP's limits and expectations" kpi_table_against_ncmp_limits
check "a missing and a failed scenario are said" missing_and_failed_scenarios_said
check "scaling rows sorted by size, with the linearity sentence" scaling_rows_sorted_with_linearity
check "machine and commands" machine_and_commands
check "the template's hand-written text is kept, every block filled" template_text_kept_and_filled
check "the plot files appear" plots_appear
check "the same input gives the same page" same_input_same_output
check "without a scaling JSON: no plot, and it says so" without_scale_no_plot
check "bad input is one clear error" bad_input_is_one_clear_error
check_summary "report"
