/*
 * fuzz_sql: the checks of a CPS-path translation's SQL, shared by the
 * cpspath and cps_query targets and the integration tests that run their
 * accepted outputs on PostgreSQL.
 */
#ifndef FUZZ_SQL_H
#define FUZZ_SQL_H

#include "fuzz_common.h"
#include "ncmp_buf.h"
#include "ncmp_cpspath.h"

/* The CPS-path grammar's tokens (the dictionary of both targets). */
extern const fuzz_dict fuzz_cpspath_dict;

/* Each aborts with the path and the detail when broken. */

/* Abort: a broken invariant is a crash, which is what fuzzers report. */
void fuzz_fail(const char *what, const char *path, const char *detail) __attribute__((noreturn));

/* Every $k in `sql` is in [first, first+n) or is `extra` (0: none); each of
 * them, and `extra`, is used. */
void fuzz_check_placeholders(const char *path, const char *sql, int first, size_t n, int extra);

/* Brackets balance outside quotes, and quotes close. */
void fuzz_check_shape(const char *path, const char *sql);

/* A refusal is a REJECT "Invalid CPS path at position N: ..." with N
 * inside the path, and the outputs kept their lengths. */
void fuzz_check_refusal(const char *path, const ncmp_err *err, const ncmp_buf *sql, size_t sql_len,
                        const ncmp_cpspath_params *params, size_t nparams);

#endif
