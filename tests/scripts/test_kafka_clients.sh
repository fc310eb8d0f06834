#!/usr/bin/env bash
# Tests that every Kafka client is made by lib/ncmp_kafka.c: no other C
# file of the code or its tests calls rd_kafka_new or the legacy simple
# consumer (rd_kafka_consume_start*), lib/ncmp_kafka.h does not depend on
# the service config, and the tools, the DMI stub and the benchmarks make
# their clients without a fabricated ncmpd config. Needs no services.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/scripts/check_lib.sh
. "$ROOT/tests/scripts/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# calls_outside_wrapper DIR PATTERN: the C files under DIR's code folders,
# but lib/ncmp_kafka.c, that match PATTERN (an extended regex); prints
# them, and fails when there is one.
calls_outside_wrapper() {
    local dir=$1 pattern=$2 found
    found=$(cd "$dir" && grep -rlE --include='*.c' --include='*.h' "$pattern" \
        lib workers dmistub producers tests 2>/dev/null | grep -vx 'lib/ncmp_kafka.c')
    [ -z "$found" ] && return 0
    echo "$found" | sed 's/^/  calls it: /'
    return 1
}

NEW='\brd_kafka_new[[:space:]]*\('
LEGACY='\brd_kafka_consume_start(_queue)?[[:space:]]*\('

only_the_wrapper_makes_clients() {
    calls_outside_wrapper "$ROOT" "$NEW"
}

no_legacy_simple_consumer() {
    calls_outside_wrapper "$ROOT" "$LEGACY"
}

# The check itself finds a call: plant one in a copy of a small tree.
the_check_finds_a_planted_call() {
    mkdir -p "$scratch/tree/lib" "$scratch/tree/workers"
    printf 'rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, e, n);\n' \
        >"$scratch/tree/lib/ncmp_kafka.c"
    calls_outside_wrapper "$scratch/tree" "$NEW" >/dev/null || return 1
    printf 'static void f(void) { rk = rd_kafka_new (RD_KAFKA_PRODUCER, c, e, n); }\n' \
        >"$scratch/tree/workers/sneaky.c"
    ! calls_outside_wrapper "$scratch/tree" "$NEW" >/dev/null
}

wrapper_header_is_free_of_the_config() {
    ! grep -q '#include "ncmp_config.h"' "$ROOT/lib/ncmp_kafka.h" ||
        { echo "  lib/ncmp_kafka.h includes ncmp_config.h"; return 1; }
}

tools_make_clients_without_a_service_config() {
    local found
    found=$(cd "$ROOT" && grep -rl 'ncmp_config_new_defaults' dmistub producers tests/bench)
    [ -z "$found" ] || { echo "$found" | sed 's/^/  fabricates a config: /'; return 1; }
}

check "only lib/ncmp_kafka.c calls rd_kafka_new" only_the_wrapper_makes_clients
check "nothing uses the legacy simple consumer" no_legacy_simple_consumer
check "the check finds a call planted outside the wrapper" the_check_finds_a_planted_call
check "lib/ncmp_kafka.h does not include the service config" wrapper_header_is_free_of_the_config
check "tools, DMI stub and benchmarks use no ncmpd config" tools_make_clients_without_a_service_config
check_summary "kafka clients"
