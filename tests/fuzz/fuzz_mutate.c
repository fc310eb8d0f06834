#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "ncmp_buf.h"

void fuzz_fail(const char *what, const char *input, const char *detail)
{
    fprintf(stderr, "fuzz: %s\n  input: %s\n  %s\n", what, input, detail);
    abort();
}

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = ncmp_xmalloc(size + 1);

    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

void fuzz_check_reject(const char *input, const ncmp_err *err)
{
    if (err->cls != NCMP_ERR_REJECT)
        fuzz_fail("a refusal that is not REJECT", input, err->msg);
    if (!err->msg[0])
        fuzz_fail("a refusal without a message", input, "");
}

void fuzz_rng_seed(fuzz_rng *rng, uint64_t seed)
{
    rng->state = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

/* xorshift64* */
uint64_t fuzz_rng_next(fuzz_rng *rng)
{
    uint64_t x = rng->state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return x * 0x2545f4914f6cdd1dULL;
}

static size_t fuzz_below(fuzz_rng *rng, size_t n)
{
    return n ? (size_t)(fuzz_rng_next(rng) % n) : 0;
}

/* Insert `len` bytes at `at` when they fit. */
static size_t fuzz_insert(uint8_t *buf, size_t len, size_t cap, size_t at, const void *what,
                          size_t n)
{
    if (len + n > cap)
        return len;
    memmove(buf + at + n, buf + at, len - at);
    memcpy(buf + at, what, n);
    return len + n;
}

static size_t fuzz_mutate_once(fuzz_rng *rng, const fuzz_corpus *corpus, const fuzz_dict *dict,
                               uint8_t *buf, size_t len, size_t cap)
{
    size_t at = fuzz_below(rng, len + 1);
    const char *tok;
    size_t from, n;

    switch (fuzz_below(rng, 7)) {
    case 0: /* flip a bit */
        if (len)
            buf[fuzz_below(rng, len)] ^= (uint8_t)(1u << fuzz_below(rng, 8));
        return len;
    case 1: /* any byte */
        if (len)
            buf[fuzz_below(rng, len)] = (uint8_t)fuzz_rng_next(rng);
        return len;
    case 2: /* a token of the input's language */
    case 3:
        if (!dict || dict->n == 0)
            return len;
        tok = dict->tokens[fuzz_below(rng, dict->n)];
        return fuzz_insert(buf, len, cap, at, tok, strlen(tok));
    case 4: /* delete a range */
        n = fuzz_below(rng, len - (at < len ? at : len) + 1);
        memmove(buf + at, buf + at + n, len - at - n);
        return len - n;
    case 5: /* repeat a range, sometimes many times (limits) */
        if (!len)
            return len;
        from = fuzz_below(rng, len);
        n = 1 + fuzz_below(rng, len - from < 16 ? len - from : 16);
        for (size_t k = fuzz_below(rng, 4) ? 1 : 1 + fuzz_below(rng, 300); k > 0; k--) {
            uint8_t piece[16];
            memcpy(piece, buf + from, n);
            len = fuzz_insert(buf, len, cap, at, piece, n);
        }
        return len;
    default: { /* splice: our head, another seed's tail */
        const fuzz_input *other = &corpus->inputs[fuzz_below(rng, corpus->n)];
        size_t tail = fuzz_below(rng, other->len + 1);
        n = other->len - tail;
        if (at + n > cap)
            n = cap - at;
        memcpy(buf + at, other->data + tail, n);
        return at + n;
    }
    }
}

size_t fuzz_mutate(fuzz_rng *rng, const fuzz_corpus *corpus, const fuzz_dict *dict, uint8_t *out,
                   size_t cap)
{
    const fuzz_input *seed;
    size_t len, rounds = 1 + fuzz_below(rng, 5);

    if (corpus->n == 0 || cap == 0)
        return 0;
    seed = &corpus->inputs[fuzz_below(rng, corpus->n)];
    len = seed->len < cap ? seed->len : cap;
    memcpy(out, seed->data, len);
    while (rounds-- > 0)
        len = fuzz_mutate_once(rng, corpus, dict, out, len, cap);
    return len;
}

static int fuzz_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int fuzz_read_file(const char *path, fuzz_input *in)
{
    FILE *f = fopen(path, "rb");
    ncmp_buf b = NCMP_BUF_INIT;
    char chunk[4096];
    size_t n;

    if (!f)
        return -1;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        ncmp_buf_append(&b, chunk, n);
    fclose(f);
    in->len = b.len;
    in->data = b.data ? (uint8_t *)b.data : ncmp_xcalloc(1, 1);
    return 0;
}

/* The names of the regular files of `dir`, sorted. */
static int fuzz_list(const char *dir, char ***names, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    *names = NULL;
    *n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        *names = ncmp_xrealloc(*names, (*n + 1) * sizeof(char *));
        (*names)[(*n)++] = ncmp_xstrdup(path);
    }
    closedir(d);
    if (*n)
        qsort(*names, *n, sizeof(char *), fuzz_name_cmp);
    return 0;
}

int fuzz_corpus_load(const char *dir, fuzz_corpus *corpus)
{
    char **names;
    size_t n;
    int rc = 0;

    memset(corpus, 0, sizeof(*corpus));
    if (fuzz_list(dir, &names, &n) < 0)
        return -1;
    corpus->inputs = ncmp_xcalloc(n ? n : 1, sizeof(fuzz_input));
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && fuzz_read_file(names[i], &corpus->inputs[corpus->n]) == 0)
            corpus->n++;
        else
            rc = -1;
        free(names[i]);
    }
    free(names);
    if (rc < 0)
        fuzz_corpus_free(corpus);
    return rc;
}

void fuzz_corpus_free(fuzz_corpus *corpus)
{
    if (!corpus)
        return;
    for (size_t i = 0; i < corpus->n; i++)
        free(corpus->inputs[i].data);
    free(corpus->inputs);
    memset(corpus, 0, sizeof(*corpus));
}
