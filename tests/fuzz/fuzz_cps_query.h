/*
 * fuzz_cps_query: the fuzz target of workers/cps/cps_query (CPS paths over
 * any model, to SQL on the fragment table). fuzz_cps_query_main.c makes it
 * the programs ncmp-fuzz-cps-query (the plain driver over
 * tests/fuzz/corpus/cps_query/, run by ./run test) and, with -DNCMP_FUZZ=ON,
 * ncmp-fuzz-cps-query-libfuzzer.
 */
#ifndef FUZZ_CPS_QUERY_H
#define FUZZ_CPS_QUERY_H

#include "cps_query.h"
#include "fuzz_sql.h"

/* Translate `data` (cut at its first NUL) with the anchors as
 * $anchors_param and values from first_param, and check the result: on
 * success the SQL is one SELECT that uses the anchors' parameter and every
 * value parameter, no other, with balanced brackets and quotes, and *kind
 * is a leaf query exactly when a leaf name came back; on failure a REJECT
 * with a position inside the path and untouched outputs. On success the
 * SQL and parameters are appended to *sql and *params (owned by the
 * caller), *kind is set and 1 is returned, else 0. */
int fuzz_cps_query_check(const uint8_t *data, size_t size, int anchors_param, int first_param,
                         ncmp_buf *sql, ncmp_cpspath_params *params, cps_query_kind *kind);

#endif
