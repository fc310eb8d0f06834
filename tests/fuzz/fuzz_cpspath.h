/*
 * fuzz_cpspath: the fuzz target of ncmp_cpspath, and a small mutator so
 * that it also runs without libFuzzer.
 *
 * LLVMFuzzerTestOneInput is libFuzzer's entry point: built with clang and
 * -DNCMP_FUZZ=ON it becomes ncmp-fuzz-cpspath-libfuzzer. The plain driver
 * ncmp-fuzz-cpspath (always built) replays the seed corpus
 * tests/fuzz/corpus/cpspath/ and N random mutations of it through the same
 * entry point, so the normal test run exercises it under ASan. Any broken
 * invariant aborts the process (a crash is what fuzzers report).
 */
#ifndef FUZZ_CPSPATH_H
#define FUZZ_CPSPATH_H

#include <stddef.h>
#include <stdint.h>

#include "ncmp_buf.h"
#include "ncmp_cpspath.h"

/* Translate `data` (cut at its first NUL) and check the result: on
 * success every parameter $first..$first+n-1 appears in the SQL and no
 * other; on failure a REJECT "Invalid CPS path at position N: ..." and
 * untouched outputs. Always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same check with a chosen first parameter number; on success the
 * SQL and parameters are appended to *sql and *params (owned by the
 * caller) and 1 is returned, else 0. */
int fuzz_cpspath_check(const uint8_t *data, size_t size, int first_param, ncmp_buf *sql,
                       ncmp_cpspath_params *params);

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
