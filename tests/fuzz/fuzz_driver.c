/*
 * ncmp-fuzz-<target> CORPUS_DIR [RUNS [SEED]]
 *
 * Replays every seed of CORPUS_DIR through the fuzz target it is linked
 * with (fuzz_common.h), then RUNS (default 10000) random mutations of them
 * (SEED: default 1, so a failure repeats). Exits 0 when nothing broke; a
 * broken invariant aborts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

/* Past the 4 KiB limit, so that mutations reach it. */
#define FUZZ_MAX_INPUT 4200

static int fuzz_run(const fuzz_corpus *corpus, unsigned long runs, uint64_t seed)
{
    static uint8_t buf[FUZZ_MAX_INPUT];
    unsigned long accepted = 0;
    fuzz_rng rng;

    for (size_t i = 0; i < corpus->n; i++) {
        uint8_t *in = malloc(corpus->inputs[i].len ? corpus->inputs[i].len : 1);
        if (!in)
            abort();
        memcpy(in, corpus->inputs[i].data, corpus->inputs[i].len);
        LLVMFuzzerTestOneInput(in, corpus->inputs[i].len);
        free(in);
    }
    fuzz_rng_seed(&rng, seed);
    for (unsigned long r = 0; r < runs; r++) {
        size_t len = fuzz_mutate(&rng, corpus, fuzz_target_tokens(), buf, sizeof(buf));
        /* a copy of the exact size, so that ASan sees a read past the end */
        uint8_t *in = malloc(len ? len : 1);

        if (!in)
            abort();
        memcpy(in, buf, len);
        accepted += (unsigned long)fuzz_target_run(in, len, r);
        free(in);
    }
    printf("fuzz %s: %zu seeds, %lu mutations (seed %llu), %lu accepted\n", fuzz_target_name,
           corpus->n, runs, (unsigned long long)seed, accepted);
    return 0;
}

int main(int argc, char **argv)
{
    fuzz_corpus corpus;
    unsigned long runs = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    int rc;

    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s CORPUS_DIR [RUNS [SEED]]\n", argv[0]);
        return 2;
    }
    if (fuzz_corpus_load(argv[1], &corpus) < 0) {
        fprintf(stderr, "%s: cannot read the corpus %s: %s\n", argv[0], argv[1], strerror(errno));
        return 2;
    }
    if (corpus.n == 0) {
        fprintf(stderr, "%s: the corpus %s is empty\n", argv[0], argv[1]);
        fuzz_corpus_free(&corpus);
        return 2;
    }
    rc = fuzz_run(&corpus, runs, seed);
    fuzz_corpus_free(&corpus);
    return rc;
}
