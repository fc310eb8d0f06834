/*
 * fuzz_common: what every fuzz target shares: the seed corpus, a small
 * deterministic mutator (so that the targets also run without libFuzzer),
 * the abort that reports a broken invariant, and the interface the plain
 * driver (fuzz_driver.c) calls.
 *
 * A target is a file of its own that calls the production code's decoder
 * and checks what it must promise; FUZZ_TARGET gives it libFuzzer's entry
 * point (LLVMFuzzerTestOneInput) and the driver's (fuzz_target_run). The
 * CPS-path targets keep their checks in a library (fuzz_sql.h), as the
 * integration tests run what they accept on PostgreSQL.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "ncmp_err.h"

/* libFuzzer's entry point: check one input; always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The driver's entry point: check mutation number `run` (which may choose
 * how parameters are numbered); 1 when the decoder accepted it. */
int fuzz_target_run(const uint8_t *data, size_t size, unsigned long run);

/* The target's name, for the driver's summary line. */
extern const char fuzz_target_name[];

/* Pieces of the target's input language that the mutator inserts, so that
 * mutations reach past the first syntax check. */
typedef struct fuzz_dict {
    const char *const *tokens;
    size_t n;
} fuzz_dict;

/* The target's tokens, for the driver's mutations. */
const fuzz_dict *fuzz_target_tokens(void);

/* JSON's own pieces, and values decoders trip on, for the JSON targets'
 * dictionaries. */
#define FUZZ_JSON_TOKENS                                                                           \
    "{", "}", "[", "]", "\"", ":", ",", "{}", "[]", "\"\"", "null", "true", "false", "0", "-1",    \
        "1.5e308", "1e999", "9223372036854775808", "-9223372036854775809", "\"\\u0000\"",          \
        "\"\\ud800\"", "\"\\\"", "\xc3\xa9", "\xff", "\"a\":", "\"a\":{}", "\"a\":[]", "[[[[[[[[", \
        "]]]]]]]]", "{\"a\":{\"a\":{\"a\":"

/* A target from `one`, which checks one input and returns 1 when the
 * decoder accepted it: its name, its dictionary (an array of strings) and
 * both entry points. */
#define FUZZ_TARGET(name, one, tokens)                                                             \
    const char fuzz_target_name[] = name;                                                          \
    const fuzz_dict *fuzz_target_tokens(void)                                                      \
    {                                                                                              \
        static const fuzz_dict dict = {tokens, sizeof(tokens) / sizeof((tokens)[0])};              \
        return &dict;                                                                              \
    }                                                                                              \
    int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)                                  \
    {                                                                                              \
        (void)one(bytes, size);                                                                    \
        return 0;                                                                                  \
    }                                                                                              \
    int fuzz_target_run(const uint8_t *bytes, size_t size, unsigned long run)                      \
    {                                                                                              \
        (void)run;                                                                                 \
        return one(bytes, size);                                                                   \
    }

/* Abort: a broken invariant is a crash, which is what fuzzers report. */
void fuzz_fail(const char *what, const char *input, const char *detail) __attribute__((noreturn));

/* The input as a NUL-terminated string (cut at its first NUL when it has
 * one); free() it. */
char *fuzz_text(const uint8_t *data, size_t size);

/* A refusal must be a REJECT with a message: abort otherwise. */
void fuzz_check_reject(const char *input, const ncmp_err *err);

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
 * five random mutations (bit flips, tokens of `dict` inserted, ranges
 * deleted or repeated, splices with another seed). Returns the length. */
size_t fuzz_mutate(fuzz_rng *rng, const fuzz_corpus *corpus, const fuzz_dict *dict, uint8_t *out,
                   size_t cap);

#endif
