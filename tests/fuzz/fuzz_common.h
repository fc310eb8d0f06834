/*
 * fuzz_common: what the CPS-path fuzz targets share: the seed corpus, a
 * small deterministic mutator (so that the targets also run without
 * libFuzzer), the checks of a translation's SQL, and the interface the
 * plain driver (fuzz_driver.c) calls.
 *
 * Each target has a check function in a library (the integration tests run
 * its accepted outputs on PostgreSQL) and, in a file of its own,
 * LLVMFuzzerTestOneInput and fuzz_target_run: libFuzzer's entry point, and
 * the driver's, linked into that target's programs only.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "ncmp_buf.h"
#include "ncmp_cpspath.h"
#include "ncmp_err.h"

/* libFuzzer's entry point: check one input; always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The driver's entry point: check mutation number `run` (which may choose
 * how parameters are numbered); 1 when the translator accepted it. */
int fuzz_target_run(const uint8_t *data, size_t size, unsigned long run);

/* The target's name, for the driver's summary line. */
extern const char fuzz_target_name[];

/* --- checks (each aborts with the path and the detail when broken) ------ */

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

/* --- seed corpus and mutations ------------------------------------------- */

typedef struct fuzz_input {
    uint8_t *data;
    size_t len;
} fuzz_input;

typedef struct fuzz_corpus {
    fuzz_input *inputs;
    size_t n;
} fuzz_corpus;

/* Read every regular file of `dir`, in name order. Returns 0, or -1 with
 * errno when the folder cannot be read. */
int fuzz_corpus_load(const char *dir, fuzz_corpus *corpus);
void fuzz_corpus_free(fuzz_corpus *corpus);

/* A deterministic generator: the same seed gives the same runs. */
typedef struct fuzz_rng {
    uint64_t state;
} fuzz_rng;

void fuzz_rng_seed(fuzz_rng *rng, uint64_t seed);
uint64_t fuzz_rng_next(fuzz_rng *rng);

/* Write into out (cap bytes) a random seed of `corpus` changed by one to
 * five random mutations (bit flips, CPS-path tokens inserted, ranges
 * deleted or repeated, splices with another seed). Returns the length. */
size_t fuzz_mutate(fuzz_rng *rng, const fuzz_corpus *corpus, uint8_t *out, size_t cap);

#endif
