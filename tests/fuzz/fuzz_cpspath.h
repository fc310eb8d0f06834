/*
 * fuzz_cpspath: the fuzz target of ncmp_cpspath (the inventory's CPS-path
 * translator). fuzz_cpspath_main.c makes it a program: with clang and
 * -DNCMP_FUZZ=ON ncmp-fuzz-cpspath-libfuzzer; always ncmp-fuzz-cpspath,
 * the plain driver, which replays the seed corpus tests/fuzz/corpus/cpspath/
 * and N random mutations of it, so the normal test run exercises it under
 * ASan.
 */
#ifndef FUZZ_CPSPATH_H
#define FUZZ_CPSPATH_H

#include "fuzz_sql.h"

/* Translate `data` (cut at its first NUL) with parameters numbered from
 * first_param and check the result: on success every parameter
 * $first..$first+n-1 appears in the SQL and no other; on failure a REJECT
 * "Invalid CPS path at position N: ..." and untouched outputs. On success
 * the SQL and parameters are appended to *sql and *params (owned by the
 * caller) and 1 is returned, else 0. */
int fuzz_cpspath_check(const uint8_t *data, size_t size, int first_param, ncmp_buf *sql,
                       ncmp_cpspath_params *params);

#endif
