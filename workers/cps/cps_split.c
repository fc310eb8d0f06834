/*
 * cps_split: a large JSON document parsed by libyang on two threads (see
 * cps_split.h).
 */
#include "cps_split.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ncmp_buf.h"
#include "ncmp_jscan.h"
#include "ncmp_log.h"
#include "ncmp_time.h"

static atomic_size_t min_bytes = 1024 * 1024;

void cps_split_configure(size_t bytes)
{
    atomic_store(&min_bytes, bytes);
}

/* Where the list is in the document, and where it is cut. */
typedef struct shape {
    size_t half;        /* the cut goes after the entry that ends past this */
    int levels;         /* objects around the list: 1 or 2 */
    size_t open;        /* just past the list's '[' */
    size_t close;       /* its ']' */
    size_t cut_end;     /* the end of the first half's last entry */
    size_t next_start;  /* the second half's first entry */
    size_t entries;     /* in the list */
    size_t last_end;    /* the end of the entry scanned last */
    int members, inner; /* members seen of the outer and inner object */
} shape;

#define NOT_THIS_SHAPE 1

static int entry(ncmp_jscan *sc, void *arg)
{
    shape *sh = arg;
    ncmp_jkind kind;
    ncmp_jtok tok;
    size_t start, end;

    if (ncmp_jscan_value(sc, &kind, &tok) != 0)
        return -1;
    if (kind != NCMP_J_OBJECT)
        return NOT_THIS_SHAPE;
    start = (size_t)(tok.p - sc->s);
    end = start + tok.n;
    if (!sh->cut_end && end >= sh->half)
        sh->cut_end = end;
    else if (sh->cut_end && !sh->next_start)
        sh->next_start = start;
    sh->entries++;
    sh->last_end = end;
    return 0;
}

static int list(ncmp_jscan *sc, shape *sh)
{
    int rc;

    if (ncmp_jscan_peek(sc) != '[')
        return NOT_THIS_SHAPE;
    sh->open = sc->i + 1;
    rc = ncmp_jscan_items(sc, entry, sh);
    if (rc != 0)
        return rc;
    sh->close = sh->last_end;
    while (sh->close < sc->i && sc->s[sh->close] != ']')
        sh->close++;
    return 0;
}

static int inner_member(ncmp_jscan *sc, const ncmp_jtok *name, void *arg)
{
    shape *sh = arg;

    (void)name;
    if (++sh->inner > 1)
        return NOT_THIS_SHAPE;
    return list(sc, sh);
}

static int outer_member(ncmp_jscan *sc, const ncmp_jtok *name, void *arg)
{
    shape *sh = arg;
    char c;

    (void)name;
    if (++sh->members > 1)
        return NOT_THIS_SHAPE;
    c = ncmp_jscan_peek(sc);
    if (c == '[') {
        sh->levels = 1;
        return list(sc, sh);
    }
    if (c != '{')
        return NOT_THIS_SHAPE;
    sh->levels = 2;
    return ncmp_jscan_members(sc, inner_member, sh);
}

/* Is `doc` one list (under at most one container) of two entries or
 * more, cut after the entry that ends past the middle? */
static int find_cut(const char *doc, size_t len, shape *sh)
{
    ncmp_jscan sc;
    ncmp_err err;

    memset(sh, 0, sizeof(*sh));
    sh->half = len / 2;
    ncmp_jscan_init(&sc, doc, len, &err);
    if (ncmp_jscan_peek(&sc) != '{' || ncmp_jscan_members(&sc, outer_member, sh) != 0 ||
        ncmp_jscan_end(&sc) != 0)
        return -1;
    return sh->members == 1 && sh->entries >= 2 && sh->cut_end && sh->next_start &&
                   sh->close < len && doc[sh->close] == ']'
               ? 0
               : -1;
}

typedef struct half {
    const struct ly_ctx *ctx;
    uint32_t options;
    ncmp_buf doc;
    struct lyd_node *tree;
    LY_ERR rc;
    double ms; /* the parse's own time */
} half;

static void *parse_half(void *arg)
{
    half *h = arg;
    struct ly_in *in = NULL;
    double t0 = ncmp_now_ms();

    h->rc = ly_in_new_memory(h->doc.data, &in);
    if (h->rc == LY_SUCCESS)
        h->rc = lyd_parse_data(h->ctx, NULL, in, LYD_JSON, h->options, 0, &h->tree);
    ly_in_free(in, 0);
    if (h->rc != LY_SUCCESS)
        ly_err_clean((struct ly_ctx *)h->ctx, NULL); /* this thread's: the whole parse tells */
    h->ms = ncmp_now_ms() - t0;
    return NULL;
}

/* The list's entries in a parsed half: the top-level nodes, or the
 * children of the one top-level container. */
static size_t entries_of(const struct lyd_node *tree, int levels)
{
    const struct lyd_node *n = levels == 1 ? tree : lyd_child(tree);
    size_t count = 0;

    for (; n; n = n->next)
        count++;
    return count;
}

int cps_split_parse(const struct ly_ctx *ctx, const char *doc, size_t len, uint32_t parse_options,
                    struct lyd_node **tree)
{
    half a = {ctx, parse_options, NCMP_BUF_INIT, NULL, LY_SUCCESS, 0};
    half b = {ctx, parse_options, NCMP_BUF_INIT, NULL, LY_SUCCESS, 0};
    pthread_t thread;
    size_t na, nb;
    shape sh;
    size_t least = atomic_load(&min_bytes);
    double t0, t1;
    int rc = -1;

    if (!least || len < least) /* every small write passes here: nothing more */
        return -1;
    t0 = ncmp_now_ms();
    if (find_cut(doc, len, &sh) != 0)
        return -1;
    t1 = ncmp_now_ms();
    ncmp_buf_append(&a.doc, doc, sh.cut_end);
    ncmp_buf_append(&a.doc, doc + sh.close, len - sh.close);
    ncmp_buf_append_char(&a.doc, '\0');
    ncmp_buf_append(&b.doc, doc, sh.open);
    ncmp_buf_append(&b.doc, doc + sh.next_start, len - sh.next_start);
    ncmp_buf_append_char(&b.doc, '\0');
    if (pthread_create(&thread, NULL, parse_half, &b) != 0)
        goto cleanup;
    parse_half(&a);
    pthread_join(thread, NULL);
    if (a.rc != LY_SUCCESS || b.rc != LY_SUCCESS || !a.tree || !b.tree)
        goto cleanup;
    na = entries_of(a.tree, sh.levels);
    nb = entries_of(b.tree, sh.levels);
    if (lyd_merge_siblings(&a.tree, b.tree, LYD_MERGE_DESTRUCT) != LY_SUCCESS) {
        b.tree = NULL; /* spent by the merge, whatever it did */
        ly_err_clean((struct ly_ctx *)ctx, NULL);
        goto cleanup;
    }
    b.tree = NULL;
    if (entries_of(a.tree, sh.levels) != na + nb) /* an entry in both halves: joined */
        goto cleanup;
    *tree = a.tree;
    a.tree = NULL;
    rc = 0;
cleanup:
    log_debug("cps",
              "%zu bytes, %zu entries %s two halves: cut found in %.1f ms, parsed in %.1f ms "
              "(the halves %.1f and %.1f ms)",
              len, sh.entries, rc == 0 ? "parsed in" : "not parsed in", t1 - t0, ncmp_now_ms() - t1,
              a.ms, b.ms);
    lyd_free_all(a.tree);
    lyd_free_all(b.tree);
    ncmp_buf_free(&a.doc);
    ncmp_buf_free(&b.doc);
    return rc;
}
