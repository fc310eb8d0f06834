/*
 * CPS's delta reports (DeltaRestController): the delta between two
 * anchors, between an anchor and a payload, and a report applied to an
 * anchor.
 *
 * A delta is a merge of two streams of rows in key order: the source's
 * and the target's fragment rows under the xpath, each read through a
 * cursor of its own in blocks, in one transaction. The fragment key puts
 * a node right before its subtree (0008), so one pass over the two
 * streams sees every node of either tree once, in the order of a
 * depth-first walk, and the report is written out while the rows arrive:
 * memory stays flat with the size of the trees.
 *
 * Without grouping each node is one entry: remove (only in the source),
 * create (only in the target), replace (in both, leaves differing: the
 * leaves that differ, and a list entry's keys).
 *
 * With grouping (CPS's GroupedDeltaReportGenerator) the children of each
 * node in both trees make, in this order: one remove entry holding every
 * child only in the source with its subtree, then for each child in both
 * its replace entry followed by its children's entries, then one create
 * entry holding every child only in the target with its subtree. The
 * xpath of a remove or create entry is the parent's (the first node's own
 * when the nodes are top-level). The walk keeps a stack of the nodes in
 * both trees it is inside of. A remove entry comes before the node's
 * children's entries, so the nodes that have children only in the source
 * are known ahead of the walk:
 *  - with every descendant, one merge of the two trees' paths (no
 *    leaves) finds the roots of the subtrees only one side has; their
 *    paths are kept (not their subtrees), and the walk then reads only
 *    the rows around those subtrees: the nodes in both trees;
 *  - bounded in depth, when both anchors' rows within the depth come
 *    whole in their cursors' first blocks (cps.delta-memory-rows or fewer
 *    each: memory stays bounded), they are kept in memory and compared
 *    there as a payload's rows are (below), each row read once;
 *  - bounded in depth and larger, a third cursor reads, in the walk's
 *    order, the nodes with children only in the source (one probe of the
 *    other anchor per row), and each remove or create entry reads its
 *    rows with one probe each.
 * The data of a remove or create entry is read by a cursor of its own
 * while the walk waits, and written by cps_read.c's tree writer.
 *
 * The payload's delta parses the payload as a write under its parent
 * would (cps_store_payload_rows: the same parsing and checks as the data
 * API) and holds its rows in memory in key order as the target's stream.
 * Nothing is written. A create entry of a grouped report is written from
 * the payload's rows the walk passed over.
 * The application of a report is one transaction: a refused entry rolls
 * back the whole report.
 *
 * Where this differs from CPS: without grouping, entries come in key
 * order (CPS lists removes and replaces, then creates, each in hash
 * order); a replace entry is applied as a merge of its target leaves and
 * the removal of the leaves only its source has (CPS replaces the node).
 */
#include "cps_delta.h"

#include <libyang/libyang.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cps_internal.h"
#include "cps_path.h"
#include "cps_xml.h"
#include "ncmp_buf.h"
#include "ncmp_json.h"
#include "ncmp_log.h"
#include "ncmp_multipart.h"
#include "ncmp_pgarray.h"
#include "ncmp_time.h"

#define DELTA_BLOCK     2000
#define DELTA_MAX_DEPTH 128
#define DELTA_OUT_BLOCK (64 * 1024)

/* --- pure parts ------------------------------------------------------------ */

int cps_delta_path_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);

    if (c)
        return c;
    return alen < blen ? -1 : alen > blen ? 1 : 0;
}

void cps_delta_leaves_diff(json_object *src, json_object *tgt, json_object **src_out,
                           json_object **tgt_out)
{
    json_object *so = NULL, *to = NULL, *other;

    if (src && json_object_is_type(src, json_type_object)) {
        json_object_object_foreach(src, k, v)
        {
            int found = tgt && json_object_object_get_ex(tgt, k, &other);
            if (found && json_object_equal(v, other))
                continue;
            if (!so)
                so = json_object_new_object();
            json_object_object_add(so, k, json_object_get(v));
            if (found) {
                if (!to)
                    to = json_object_new_object();
                json_object_object_add(to, k, json_object_get(other));
            }
        }
    }
    if (tgt && json_object_is_type(tgt, json_type_object)) {
        json_object_object_foreach(tgt, k, v)
        {
            if (src && json_object_object_get_ex(src, k, &other))
                continue;
            if (!to)
                to = json_object_new_object();
            json_object_object_add(to, k, json_object_get(v));
        }
    }
    *src_out = so;
    *tgt_out = to;
}

int cps_delta_key_leaves(const char *path, size_t len, json_object *obj)
{
    size_t i = len, start;
    ncmp_buf name = NCMP_BUF_INIT, value = NCMP_BUF_INIT;
    json_object *keys = json_object_new_object();
    int n = 0, rc = -1;

    while (i > 0 && path[i - 1] != CPS_PATH_SEP)
        i--;
    start = i;
    while (i < len && path[i] != '[')
        i++;
    if (i == len || i == start) {
        rc = 0;
        goto cleanup;
    }
    i++; /* '[' */
    for (;;) {
        if (i >= len || path[i] != '@')
            goto cleanup;
        ncmp_buf_reset(&name);
        for (i++; i < len && path[i] != '='; i++)
            ncmp_buf_append_char(&name, path[i]);
        if (i + 1 >= len || path[i + 1] != '\'' || name.len == 0)
            goto cleanup;
        ncmp_buf_reset(&value);
        for (i += 2;; i++) {
            if (i >= len)
                goto cleanup;
            if (path[i] == '\'') {
                if (i + 1 < len && path[i + 1] == '\'') {
                    ncmp_buf_append_char(&value, '\'');
                    i++;
                    continue;
                }
                break;
            }
            ncmp_buf_append_char(&value, path[i]);
        }
        i++; /* the closing quote */
        ncmp_buf_append_char(&name, '\0');
        json_object_object_add(
            keys, name.data,
            json_object_new_string_len(value.data ? value.data : "", (int)value.len));
        n++;
        if (i < len && path[i] == ']' && i + 1 == len)
            break;
        if (len - i > 5 && memcmp(path + i, " and ", 5) == 0) {
            i += 5;
            continue;
        }
        goto cleanup;
    }
    json_object_object_foreach(keys, k, v)
    {
        json_object_object_add(obj, k, json_object_get(v));
    }
    rc = n;
cleanup:
    json_object_put(keys);
    ncmp_buf_free(&name);
    ncmp_buf_free(&value);
    return rc;
}

/* --- cursors --------------------------------------------------------------- */

/* A payload's rows (the target of its delta), in key order: the stored
 * path, depth and leaves of each, as the store would write them. */
typedef struct mem_row {
    size_t path, attrs; /* offsets in mem_rows.text */
    size_t plen, alen;
    int depth;
} mem_row;

typedef struct mem_rows {
    ncmp_buf text;
    mem_row *row;
    size_t n, cap;
    int unsorted; /* a row came before the one made ahead of it */
} mem_rows;

static void mem_add(void *arg, const char *path, size_t plen, int depth, const char *attrs,
                    size_t alen)
{
    mem_rows *m = arg;
    mem_row *r;

    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 1024;
        m->row = ncmp_xrealloc(m->row, m->cap * sizeof(*m->row));
    }
    r = &m->row[m->n];
    r->path = m->text.len;
    r->plen = plen;
    ncmp_buf_append(&m->text, path, plen);
    r->attrs = m->text.len;
    r->alen = alen;
    ncmp_buf_append(&m->text, attrs, alen);
    r->depth = depth;
    if (m->n > 0 && cps_delta_path_cmp(m->text.data + m->row[m->n - 1].path, m->row[m->n - 1].plen,
                                       path, plen) >= 0)
        m->unsorted = 1;
    m->n++;
}

static const char *mem_path(const mem_rows *m, size_t i, size_t *len)
{
    *len = m->row[i].plen;
    return m->text.data + m->row[i].path;
}

static int mem_row_cmp(const void *a, const void *b, void *arg)
{
    const mem_rows *m = arg;
    const mem_row *x = a, *y = b;

    return cps_delta_path_cmp(m->text.data + x->path, x->plen, m->text.data + y->path, y->plen);
}

/* Put the rows in key order; -1 when two have one path. */
static int mem_sort(mem_rows *m)
{
    if (m->unsorted)
        qsort_r(m->row, m->n, sizeof(*m->row), mem_row_cmp, m);
    for (size_t i = 1; i < m->n; i++)
        if (mem_row_cmp(&m->row[i - 1], &m->row[i], m) == 0)
            return -1;
    return 0;
}

/* The first row at or after `path`. */
static size_t mem_lower(const mem_rows *m, const char *path, size_t len)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, ml;
        const char *mp = mem_path(m, mid, &ml);
        if (cps_delta_path_cmp(mp, ml, path, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void mem_free(mem_rows *m)
{
    if (!m)
        return;
    ncmp_buf_free(&m->text);
    free(m->row);
    free(m);
}

/* A cursor of the delta's transaction, read a block at a time; or, with
 * `mem`, the rows of a payload within the ranges and the depth (row the
 * index of the row at hand). */
typedef struct cursor {
    char name[16];
    PGresult *res;
    int row, n;
    int last; /* the block held is the last one */
    int open;
    int closing; /* closed but for its CLOSE, sent with its next DECLARE */
    const mem_rows *mem;
    const cps_path_ranges *rg;
    int maxdepth;
    PGresult *next; /* the next block, fetched ahead */
} cursor;

/* The connection the cursors are read on. While the rows of one block
 * are compared and written out, the next block of that cursor is
 * fetched (`inflight`): the server makes it meanwhile. Anything else
 * sent on the connection first takes that block in (fetch_drain). */
typedef struct fetch_link {
    ncmp_db *db;
    cursor *inflight;
} fetch_link;

/* Take the block in flight into its cursor's `next`. */
static int fetch_drain(fetch_link *l, ncmp_err *err)
{
    cursor *c = l->inflight;

    if (!c)
        return 0;
    l->inflight = NULL;
    return ncmp_db_receive(l->db, &c->next, err);
}

/* Is row i of c's payload within its ranges ([lo1, hi1) and [lo2, hi2)
 * but the gap [hi1, lo2)) and its depth? */
static int mem_within(const cursor *c, size_t i)
{
    size_t len;
    const char *p = mem_path(c->mem, i, &len);
    const cps_path_ranges *rg = c->rg;

    if (c->mem->row[i].depth > c->maxdepth)
        return 0;
    if (cps_delta_path_cmp(p, len, rg->hi1.data, strlen(rg->hi1.data)) < 0)
        return 1;
    return cps_delta_path_cmp(p, len, rg->lo2.data, strlen(rg->lo2.data)) >= 0 &&
           cps_delta_path_cmp(p, len, rg->hi2.data, strlen(rg->hi2.data)) < 0;
}

static void mem_cursor_open(cursor *c, const mem_rows *m, const cps_path_ranges *rg, int maxdepth)
{
    memset(c, 0, sizeof(*c));
    c->mem = m;
    c->rg = rg;
    c->maxdepth = maxdepth;
    c->n = (int)m->n;
    c->row = (int)mem_lower(m, rg->lo1.data, strlen(rg->lo1.data));
}

/* A cursor for cursors_open: its name, query and parameters. */
typedef struct cursor_spec {
    cursor *c;
    const char *name, *sql;
    int nparams;
    const char *const *params;
    int first; /* rows of the first block, 0: DELTA_BLOCK (at least that) */
} cursor_spec;

#define DELTA_OPEN_MAX 3 /* cursors opened at once */

/* Open the k cursors of specs, each with its first block, all in one
 * round trip (with the CLOSE of a retired cursor of the same name). */
static int cursors_open(fetch_link *l, const cursor_spec *specs, size_t k, ncmp_err *err)
{
    ncmp_buf declare[DELTA_OPEN_MAX];
    ncmp_db_step steps[3 * DELTA_OPEN_MAX];
    char fetch[DELTA_OPEN_MAX][64], close[DELTA_OPEN_MAX][48];
    size_t n = 0;
    int rc;

    if (k > DELTA_OPEN_MAX)
        return ncmp_err_set(err, NCMP_ERR_FATAL, "%zu cursors opened at once", k);
    if (fetch_drain(l, err) != 0)
        return -1;
    for (size_t i = 0; i < k; i++) {
        cursor *c = specs[i].c;
        if (c->closing) { /* the name's last cursor goes in the same round trip */
            snprintf(close[i], sizeof(close[i]), "CLOSE %s", c->name);
            steps[n++] = (ncmp_db_step){close[i], 0, NULL, NULL, NULL};
            c->closing = 0;
        }
        snprintf(c->name, sizeof(c->name), "%s", specs[i].name);
        declare[i] = (ncmp_buf)NCMP_BUF_INIT;
        ncmp_buf_appendf(&declare[i], "DECLARE %s NO SCROLL CURSOR FOR ", specs[i].name);
        ncmp_buf_append_str(&declare[i], specs[i].sql);
        /* the first block comes with the DECLARE */
        snprintf(fetch[i], sizeof(fetch[i]), "FETCH %d FROM %s",
                 specs[i].first > DELTA_BLOCK ? specs[i].first : DELTA_BLOCK, specs[i].name);
        PQclear(c->next);
        c->next = NULL;
        steps[n++] = (ncmp_db_step){declare[i].data, specs[i].nparams, specs[i].params, NULL, NULL};
        steps[n++] = (ncmp_db_step){fetch[i], 0, NULL, &c->next, NULL};
    }
    rc = ncmp_db_pipeline(l->db, steps, n, NULL, err);
    for (size_t i = 0; i < k; i++)
        ncmp_buf_free(&declare[i]);
    if (rc != 0)
        return -1;
    for (size_t i = 0; i < k; i++) {
        cursor *c = specs[i].c;
        c->open = 1;
        c->row = c->n = c->last = 0;
    }
    return 0;
}

static int cursor_open(fetch_link *l, cursor *c, const char *name, const char *sql, int nparams,
                       const char *const *params, ncmp_err *err)
{
    const cursor_spec one = {c, name, sql, nparams, params, 0};

    return cursors_open(l, &one, 1, err);
}

/* 1 when a row is at c->row, 0 at the end, -1 on failure. */
static int cursor_peek(fetch_link *l, cursor *c, ncmp_err *err)
{
    char sql[64];

    if (c->mem) {
        while (c->row < c->n && !mem_within(c, (size_t)c->row)) {
            size_t len;
            const char *p = mem_path(c->mem, (size_t)c->row, &len);
            if (cps_delta_path_cmp(p, len, c->rg->hi2.data, strlen(c->rg->hi2.data)) >= 0)
                c->row = c->n; /* past the ranges */
            else
                c->row++;
        }
        return c->row < c->n;
    }
    if (c->row < c->n)
        return 1;
    if (!c->open || c->last)
        return 0;
    PQclear(c->res);
    c->res = NULL;
    snprintf(sql, sizeof(sql), "FETCH %d FROM %s", DELTA_BLOCK, c->name);
    if (l->inflight == c) {
        l->inflight = NULL;
        if (ncmp_db_receive(l->db, &c->res, err) != 0)
            return -1;
    } else if (c->next) {
        c->res = c->next;
        c->next = NULL;
    } else if (fetch_drain(l, err) != 0 || ncmp_db_query(l->db, sql, 0, NULL, &c->res, err) != 0) {
        return -1;
    }
    c->n = PQntuples(c->res);
    c->row = 0;
    c->last = c->n < DELTA_BLOCK;
    if (!c->last && !l->inflight) { /* the next block, made while this one is read */
        if (ncmp_db_send(l->db, sql, err) != 0)
            return -1;
        l->inflight = c;
    }
    return c->n > 0;
}

static void cursor_forget(cursor *c)
{
    PQclear(c->res);
    PQclear(c->next);
    c->res = c->next = NULL;
    c->row = c->n = 0;
    c->mem = NULL;
}

/* Close c; with l NULL only its memory is freed (the transaction's end
 * closes it). */
static void cursor_close(fetch_link *l, cursor *c)
{
    char sql[48];
    ncmp_err err;

    if (l && fetch_drain(l, &err) != 0)
        l = NULL; /* the connection failed: the transaction ends with it */
    cursor_forget(c);
    if ((c->open || c->closing) && l) {
        snprintf(sql, sizeof(sql), "CLOSE %s", c->name);
        ncmp_db_query(l->db, sql, 0, NULL, NULL, &err);
    }
    c->open = c->closing = 0;
}

/* Close c, to be opened again: its CLOSE goes with its next DECLARE (or
 * with cursor_close), not in a round trip of its own. */
static void cursor_retire(cursor *c)
{
    cursor_forget(c);
    c->closing = c->open;
    c->open = 0;
}

static const char *col(const cursor *c, int i, size_t *len)
{
    if (c->mem) {
        const mem_row *r = &c->mem->row[c->row];
        *len = i == 0 ? r->plen : i == 2 ? r->alen : 0;
        return i == 0 ? c->mem->text.data + r->path : i == 2 ? c->mem->text.data + r->attrs : NULL;
    }
    if (PQgetisnull(c->res, c->row, i)) {
        *len = 0;
        return NULL;
    }
    *len = (size_t)PQgetlength(c->res, c->row, i);
    return PQgetvalue(c->res, c->row, i);
}

/* --- the report's text ------------------------------------------------------ */

/* Append a JSON value as XML elements: an object's members side by side,
 * an array's items as repeated elements. */
static void xml_of(ncmp_buf *out, const char *name, json_object *v)
{
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            xml_of(out, name, json_object_array_get_idx(v, i));
        return;
    }
    if (name)
        ncmp_buf_appendf(out, "<%s>", name);
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, m)
        {
            xml_of(out, k, m);
        }
    } else if (v && !json_object_is_type(v, json_type_null)) {
        const char *t = json_object_get_string(v);
        cps_xml_text(out, t, strlen(t));
    }
    if (name)
        ncmp_buf_appendf(out, "</%s>", name);
}

/* --- the delta ------------------------------------------------------------- */

/* A node in both trees the walk is inside of. */
typedef struct gframe {
    size_t len;        /* its stored path: the first len bytes of delta.path */
    int added;         /* a child only in the target was seen */
    int virtual;       /* the parent of the top nodes (the xpath's range) */
    size_t added_base; /* a payload's: its children only in the target from delta.added[here] */
} gframe;

/* A node only on one side whose parent is in both trees (or which is a
 * top node: parent ""): the root of a subtree a grouped report's remove
 * or create entry holds. Offsets in roots.text. */
typedef struct one_root {
    size_t parent, plen, child, clen;
} one_root;

/* Such nodes of one side, sorted by parent, then by path. */
typedef struct roots {
    ncmp_buf text;
    one_root *v;
    size_t n, cap;
} delta_roots;

static void roots_add(delta_roots *r, const char *path, size_t len, size_t plen)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->v = ncmp_xrealloc(r->v, r->cap * sizeof(*r->v));
    }
    r->v[r->n].parent = r->text.len;
    r->v[r->n].plen = plen;
    ncmp_buf_append(&r->text, path, plen);
    r->v[r->n].child = r->text.len;
    r->v[r->n].clen = len;
    ncmp_buf_append(&r->text, path, len);
    r->n++;
}

static int root_cmp(const void *a, const void *b, void *arg)
{
    const char *t = arg;
    const one_root *x = a, *y = b;
    int c = cps_delta_path_cmp(t + x->parent, x->plen, t + y->parent, y->plen);

    return c ? c : cps_delta_path_cmp(t + x->child, x->clen, t + y->child, y->clen);
}

static void roots_sort(delta_roots *r)
{
    if (r->n > 1)
        qsort_r(r->v, r->n, sizeof(*r->v), root_cmp, r->text.data);
}

/* The first root whose parent is at or after `parent`. */
static size_t roots_lower(const delta_roots *r, const char *parent, size_t len)
{
    size_t lo = 0, hi = r->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cps_delta_path_cmp(r->text.data + r->v[mid].parent, r->v[mid].plen, parent, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int roots_parent_is(const delta_roots *r, size_t i, const char *parent, size_t len)
{
    return i < r->n && r->v[i].plen == len &&
           memcmp(r->text.data + r->v[i].parent, parent, len) == 0;
}

static void roots_free(delta_roots *r)
{
    ncmp_buf_free(&r->text);
    free(r->v);
}

typedef struct delta {
    rest_pool *pool;
    ncmp_db *db;
    int grouped, xml;
    char src[24], tgt[24], maxdepth[16];
    int fetch, top_depth;
    cps_path_ranges rg;
    cursor s, t, r, aux;
    fetch_link link; /* d->db, for the cursors */
    /* grouping */
    gframe stack[DELTA_MAX_DEPTH + 2];
    int nstack;
    ncmp_buf path; /* the innermost frame's stored path */
    ncmp_buf skip; /* inside this subtree (only on one side): nothing to compare */
    int skipping;
    /* the remove or create entry being written from d->aux */
    int aux_on, aux_rows, aux_remove, aux_virtual;
    ncmp_buf aux_xpath;
    cps_tree_writer *tw;
    /* the answer */
    ncmp_buf pending;
    size_t sent;
    int entries, done;
    ncmp_buf scratch;
    /* the target is a payload's rows (no target anchor, no probe of it in
     * SQL): the removals are found ahead, the create entries' roots kept
     * as the walk passes them */
    mem_rows *mem;
    /* grouped and bounded in depth, both anchors small enough
     * (memory_rows): the source's rows, and the target's in mem, both read
     * once; the remove entries are written from smem */
    mem_rows *smem;
    int memory_rows;
    size_t *rm_rows; /* the rows of smem where the roots of a remove entry start */
    /* with every descendant, or a payload: the one-sided roots found
     * ahead (rm the source's, ad the target's; ad not for a payload) */
    int ahead;
    delta_roots rm, ad;
    size_t rm_next, rm_hit, rm_end;
    size_t *added;
    size_t nadded, added_cap;
    int aux_mem;            /* the entry is written from mem (smem), not d->aux */
    size_t aux_i, aux_iend; /* the roots delta.added (rm_rows)[aux_i..aux_iend) */
    size_t aux_row;         /* the row at hand, SIZE_MAX: the next root's first */
} delta;

static void delta_free(void *arg)
{
    delta *d = arg;

    if (!d)
        return;
    if (d->db && d->link.inflight) {
        ncmp_err err;
        fetch_drain(&d->link, &err);
    }
    cursor_close(NULL, &d->s);
    cursor_close(NULL, &d->t);
    cursor_close(NULL, &d->r);
    cursor_close(NULL, &d->aux);
    if (d->db) {
        ncmp_db_rollback(d->db);
        rest_pool_put(d->pool, d->db);
    }
    cps_path_ranges_free(&d->rg);
    cps_tree_writer_free(d->tw);
    ncmp_buf_free(&d->path);
    ncmp_buf_free(&d->skip);
    ncmp_buf_free(&d->aux_xpath);
    ncmp_buf_free(&d->pending);
    ncmp_buf_free(&d->scratch);
    mem_free(d->mem);
    mem_free(d->smem);
    free(d->rm_rows);
    roots_free(&d->rm);
    roots_free(&d->ad);
    free(d->added);
    free(d);
}

static void entry_open(delta *d, const char *action, const char *xpath, size_t xlen)
{
    ncmp_buf *o = &d->pending;

    if (d->xml) {
        ncmp_buf_appendf(o, "<deltaReport><action>%s</action><xpath>", action);
        cps_xml_text(o, xpath, xlen);
        ncmp_buf_append_str(o, "</xpath>");
    } else {
        if (d->entries)
            ncmp_buf_append_char(o, ',');
        ncmp_buf_appendf(o, "{\"action\":\"%s\",\"xpath\":", action);
        ncmp_buf_reset(&d->scratch);
        ncmp_buf_append(&d->scratch, xpath, xlen);
        ncmp_buf_append_char(&d->scratch, '\0');
        ncmp_buf_append_json_string(o, d->scratch.data);
    }
    d->entries++;
}

static void entry_open_path(delta *d, const char *action, const char *path, size_t len)
{
    ncmp_buf x = NCMP_BUF_INIT;

    cps_path_decode(path, len, &x);
    entry_open(d, action, x.data, x.len);
    ncmp_buf_free(&x);
}

static void entry_close(delta *d)
{
    ncmp_buf_append_str(&d->pending, d->xml ? "</deltaReport>" : "}");
}

static void data_open(delta *d, const char *key)
{
    if (d->xml)
        ncmp_buf_appendf(&d->pending, "<%s>", key);
    else
        ncmp_buf_appendf(&d->pending, ",\"%s\":", key);
}

static void data_close(delta *d, const char *key)
{
    if (d->xml)
        ncmp_buf_appendf(&d->pending, "</%s>", key);
}

/* The data of one node alone: {name: leaves} or {name: [leaves]}; the
 * leaves as JSON text (json) or an object (obj). */
static void node_data(delta *d, const char *key, const char *path, size_t len, const char *json,
                      size_t jlen, json_object *obj)
{
    const char *name;
    size_t nlen;
    int entry = cps_path_is_list_entry(path, len);
    ncmp_buf *o = &d->pending;

    cps_path_last_name(path, len, &name, &nlen);
    data_open(d, key);
    if (d->xml) {
        json_object *parsed = NULL;
        ncmp_err err;
        ncmp_buf_append_char(o, '<');
        ncmp_buf_append(o, name, nlen);
        ncmp_buf_append_char(o, '>');
        if (!obj && ncmp_json_parse(json, jlen, &parsed, &err) == 0)
            obj = parsed;
        if (obj)
            xml_of(o, NULL, obj);
        json_object_put(parsed);
        ncmp_buf_append_str(o, "</");
        ncmp_buf_append(o, name, nlen);
        ncmp_buf_append_char(o, '>');
    } else {
        ncmp_buf_append_char(o, '{');
        ncmp_buf_append_char(o, '"');
        ncmp_buf_append(o, name, nlen);
        ncmp_buf_append_str(o, entry ? "\":[" : "\":");
        if (obj)
            ncmp_buf_append_str(o,
                                json_object_to_json_string_ext(
                                    obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        else
            ncmp_buf_append(o, json, jlen);
        ncmp_buf_append_str(o, entry ? "]}" : "}");
    }
    data_close(d, key);
}

/* A node only on one side, without grouping: its leaves. */
static void single_entry(delta *d, int remove, const char *path, size_t len, const char *attrs,
                         size_t alen)
{
    entry_open_path(d, remove ? "remove" : "create", path, len);
    node_data(d, remove ? "sourceData" : "targetData", path, len, attrs, alen, NULL);
    entry_close(d);
}

/* A node in both trees: a replace entry when its leaves differ. */
static void replace_entry(delta *d, const char *path, size_t len, const char *sa, size_t sal,
                          const char *ta, size_t tal)
{
    json_object *so = NULL, *to = NULL, *sd = NULL, *td = NULL;
    ncmp_err err;

    if (sal == tal && memcmp(sa, ta, sal) == 0) /* jsonb's text is canonical */
        return;
    if (ncmp_json_parse(sa, sal, &so, &err) != 0 || ncmp_json_parse(ta, tal, &to, &err) != 0)
        goto cleanup;
    cps_delta_leaves_diff(so, to, &sd, &td);
    if (!sd && !td)
        goto cleanup;
    if (cps_path_is_list_entry(path, len)) {
        if (sd)
            cps_delta_key_leaves(path, len, sd);
        if (td)
            cps_delta_key_leaves(path, len, td);
    }
    entry_open_path(d, "replace", path, len);
    if (sd)
        node_data(d, "sourceData", path, len, NULL, 0, sd);
    if (td)
        node_data(d, "targetData", path, len, NULL, 0, td);
    entry_close(d);
cleanup:
    json_object_put(so);
    json_object_put(to);
    json_object_put(sd);
    json_object_put(td);
}

/* Whether anchor $7 has the node at `path`: one probe of the key per row.
 * Written as a scalar subquery, not EXISTS, which the planner may turn
 * into a hash anti-join reading every row of the other anchor (or a
 * sequential scan of the table) for a handful of rows: its estimates of
 * a range of the text key are poor (a grouped delta of one device took
 * 200 ms, of the direct children 4.5 s, once the table held a few
 * million rows). */
#define PROBE(path)                                                                                \
    "(SELECT 1 FROM fragment t WHERE t.anchor_id = $7 AND t.path = " path " LIMIT 1)"

/* The nodes that have children only in the source, parents of the
 * remove entries, in the walk's order ('' the parent of the top nodes),
 * from the rows of the source a read gives (CPS_SQL_READ_ALL or _WALK:
 * $1 source, $2 the deepest depth, $3..$6 the ranges); $7 target, $8 the
 * top nodes' depth. */
static const char SQL_REMOVED_PARENTS_HEAD[] =
    "SELECT DISTINCT (CASE WHEN s.depth = $8::int THEN ''"
    " ELSE substring(s.path from E'^(.*)\\x01') END) COLLATE \"C\" AS parent FROM (";
static const char SQL_REMOVED_PARENTS_TAIL[] =
    ") s WHERE " PROBE("s.path") " IS NULL"
                                 " AND (s.depth = $8::int OR " PROBE(
                                     "substring(s.path from E'^(.*)\\x01')") " IS NOT NULL)"
                                                                             " ORDER BY 1";

/* The rows of a remove (create) entry of a delta bounded in depth: the
 * children of a node only in anchor $1, not in $7, each followed by its
 * subtree down to the depth, from cps_sql_read_bounded's read ($2 the deepest
 * depth, $3..$6 the node's ranges), which gives only the rows above the
 * bound: each is kept when its ancestor at the children's depth (its
 * first $8 - 1 steps) is not in $7. (With every descendant the children
 * are found ahead: SQL_GROUP_LISTED.) */
static const char SQL_GROUP_WALK_HEAD[] = "SELECT s.path, s.depth, s.attributes FROM (";
static const char SQL_GROUP_WALK_TAIL[] = ") s WHERE " PROBE(
    "array_to_string((string_to_array(s.path, E'\\x01'))[1:$8::int], E'\\x01')") " IS NULL"
                                                                                 " ORDER BY s.path";

/* The rows of a remove (create) entry with every descendant: the
 * children $2 (a text[] in key order, found ahead) of anchor $1, each
 * followed by its subtree down to depth $3: one range scan per child. */
static const char SQL_GROUP_LISTED[] =
    "SELECT f.path, f.depth, f.attributes FROM (SELECT p COLLATE \"C\" AS path"
    " FROM unnest($2::text[]) AS u(p)) top"
    " JOIN LATERAL (SELECT f.path, f.depth, f.attributes FROM fragment f WHERE f.anchor_id = $1"
    " AND f.path >= top.path AND f.path < top.path || E'\\x02' AND f.depth <= $3::int"
    " ORDER BY f.path) f ON true";

/* head + read + tail, owned by the caller. */
static char *sql_around(const char *head, const char *read, const char *tail)
{
    ncmp_buf b = NCMP_BUF_INIT;

    ncmp_buf_append_str(&b, head);
    ncmp_buf_append_str(&b, read);
    ncmp_buf_append_str(&b, tail);
    return b.data;
}

/* Start the remove or create entry of the children of frame f. */
static int group_start(delta *d, int remove, const gframe *f, ncmp_err *err)
{
    cps_path_ranges own = {0};
    const cps_path_ranges *rg = &d->rg;
    char slice[16], slice_end[16]; /* the children's depth, and the steps of their paths + 1 */
    const char *params[8];
    char *sql;
    int rc;

    if (f->virtual) {
        snprintf(slice, sizeof(slice), "%d", d->top_depth);
    } else {
        const char *p = d->path.data;
        ncmp_buf_append(&own.lo1, p, f->len);
        ncmp_buf_append_char(&own.lo1, CPS_PATH_SEP);
        ncmp_buf_append_char(&own.lo1, '\0');
        ncmp_buf_append(&own.hi1, p, f->len);
        ncmp_buf_append_char(&own.hi1, CPS_PATH_SEP + 1);
        ncmp_buf_append_char(&own.hi1, '\0');
        ncmp_buf_append_str(&own.lo2, own.hi1.data);
        ncmp_buf_append_char(&own.lo2, '\0');
        ncmp_buf_append_str(&own.hi2, own.hi1.data);
        ncmp_buf_append_char(&own.hi2, '\0');
        rg = &own;
        snprintf(slice, sizeof(slice), "%d", cps_path_depth(p, f->len) + 1);
        ncmp_buf_reset(&d->aux_xpath);
        cps_path_decode(p, f->len, &d->aux_xpath);
    }
    if (d->ahead) { /* the children were found ahead */
        const delta_roots *set = remove ? &d->rm : &d->ad;
        size_t from = d->rm_hit, to = d->rm_end;
        cps_path_ranges_free(&own);
        if (!remove && !d->mem) {
            const char *fp = f->virtual ? "" : d->path.data;
            size_t fl = f->virtual ? 0 : f->len;
            from = roots_lower(&d->ad, fp, fl);
            for (to = from; roots_parent_is(&d->ad, to, fp, fl); to++)
                ;
        }
        if (remove && d->smem) { /* from the source's rows: where each root starts */
            d->rm_rows = ncmp_xrealloc(d->rm_rows, (to - from + 1) * sizeof(*d->rm_rows));
            for (size_t i = from; i < to; i++)
                d->rm_rows[i - from] =
                    mem_lower(d->smem, set->text.data + set->v[i].child, set->v[i].clen);
        } else if (remove || !d->mem) { /* read from their anchor, with their subtrees */
            ncmp_buf list = NCMP_BUF_INIT;
            ncmp_pgarray_begin(&list);
            for (size_t i = from; i < to; i++) {
                ncmp_buf_reset(&d->scratch);
                ncmp_buf_append(&d->scratch, set->text.data + set->v[i].child, set->v[i].clen);
                ncmp_buf_append_char(&d->scratch, '\0');
                ncmp_pgarray_add_text(&list, d->scratch.data);
            }
            ncmp_pgarray_end(&list);
            params[0] = remove ? d->src : d->tgt;
            params[1] = list.data;
            params[2] = d->maxdepth;
            rc = cursor_open(&d->link, &d->aux, "delta_g", SQL_GROUP_LISTED, 3, params, err);
            ncmp_buf_free(&list);
            if (rc != 0)
                return -1;
        }
        /* the payload's children (or the rows in memory): from its rows */
        d->aux_mem = remove ? d->smem != NULL : d->mem != NULL;
        d->aux_i = remove ? 0 : f->added_base;
        d->aux_iend = remove ? to - from : d->nadded;
        d->aux_row = SIZE_MAX;
        goto started;
    }
    params[0] = remove ? d->src : d->tgt;
    params[1] = slice;
    params[2] = rg->lo1.data;
    params[3] = rg->hi1.data;
    params[4] = rg->lo2.data;
    params[5] = rg->hi2.data;
    params[6] = remove ? d->tgt : d->src;
    params[7] = d->maxdepth;
    /* the subtrees bounded too: no range scan of whole subtrees */
    snprintf(slice_end, sizeof(slice_end), "%d", atoi(slice) + 1);
    params[1] = d->maxdepth;
    params[7] = slice_end;
    sql = sql_around(SQL_GROUP_WALK_HEAD, cps_sql_read_bounded(atoi(d->maxdepth)),
                     SQL_GROUP_WALK_TAIL);
    rc = cursor_open(&d->link, &d->aux, "delta_g", sql, 8, params, err);
    free(sql);
    cps_path_ranges_free(&own);
    if (rc != 0)
        return -1;
started:
    d->aux_on = 1;
    d->aux_rows = 0;
    d->aux_remove = remove;
    d->aux_virtual = f->virtual;
    cps_tree_writer_free(d->tw);
    d->tw = cps_tree_writer_new(d->xml);
    return 0;
}

/* Before the group entry's first row (stored path p): the entry's head. */
static void group_first(delta *d, const char *p, size_t len)
{
    if (d->aux_virtual) { /* the first node's parent, or the node when top-level */
        size_t plen = cps_path_parent_len(p, len);
        ncmp_buf_reset(&d->aux_xpath);
        cps_path_decode(p, plen ? plen : len, &d->aux_xpath);
    }
    entry_open(d, d->aux_remove ? "remove" : "create", d->aux_xpath.data, d->aux_xpath.len);
    data_open(d, d->aux_remove ? "sourceData" : "targetData");
    cps_tree_writer_head(d->tw, &d->pending);
}

/* After its last row: the entry's tail, when it had a row. */
static void group_end(delta *d)
{
    if (d->aux_rows) {
        cps_tree_writer_tail(d->tw, &d->pending);
        data_close(d, d->aux_remove ? "sourceData" : "targetData");
        entry_close(d);
    }
    d->aux_on = 0;
    d->aux_mem = 0;
}

static int inside(const char *path, size_t len, const char *p, size_t plen);

/* One block of a create entry written from the payload's rows (or of a
 * remove entry from the source's): the subtree of each root whose first
 * row d->added (d->rm_rows) gives. */
static int group_block_mem(delta *d)
{
    const mem_rows *m = d->aux_remove ? d->smem : d->mem;
    const size_t *starts = d->aux_remove ? d->rm_rows : d->added;
    int maxdepth = d->aux_remove ? d->s.maxdepth : d->t.maxdepth;
    int rows = 0;

    while (d->aux_i < d->aux_iend) {
        size_t first = starts[d->aux_i], rlen, len = 0;
        const char *rp = mem_path(m, first, &rlen), *p = NULL;
        if (d->aux_row == SIZE_MAX)
            d->aux_row = first;
        if (d->aux_row < m->n)
            p = mem_path(m, d->aux_row, &len);
        if (!p || (d->aux_row != first && !inside(p, len, rp, rlen))) {
            d->aux_i++;
            d->aux_row = SIZE_MAX;
            continue;
        }
        if (m->row[d->aux_row].depth <= maxdepth) {
            if (d->aux_rows++ == 0)
                group_first(d, p, len);
            cps_tree_writer_text(d->tw, p, len, m->text.data + m->row[d->aux_row].attrs,
                                 m->row[d->aux_row].alen, &d->pending);
        }
        d->aux_row++;
        if (++rows == DELTA_BLOCK)
            return 0; /* a block at a time: the answer goes out meanwhile */
    }
    group_end(d);
    return 0;
}

/* One block of the group entry's rows. */
static int group_block(delta *d, ncmp_err *err)
{
    int h;

    if (d->aux_mem)
        return group_block_mem(d);
    while ((h = cursor_peek(&d->link, &d->aux, err)) > 0) {
        if (d->aux_rows++ == 0) {
            size_t len;
            const char *p = col(&d->aux, 0, &len);
            group_first(d, p, len);
        }
        cps_tree_writer_row(d->tw, d->aux.res, d->aux.row, &d->pending);
        d->aux.row++;
        if (d->aux.row == d->aux.n)
            return 0; /* a block at a time: the answer goes out meanwhile */
    }
    if (h < 0)
        return -1;
    group_end(d);
    cursor_retire(&d->aux);
    return 0;
}

/* Is the row's path inside the node whose path is p[0..plen)? */
static int inside(const char *path, size_t len, const char *p, size_t plen)
{
    return len > plen && memcmp(path, p, plen) == 0 && path[plen] == CPS_PATH_SEP;
}

/* Has the node at path (len 0: the top nodes' parent) children only in
 * the source? d->r is read in the walk's order. */
static int removed_children(delta *d, const char *path, size_t len, ncmp_err *err)
{
    int h;

    if (d->ahead) { /* d->rm, sorted by parent */
        while (d->rm_next < d->rm.n) {
            const one_root *r = &d->rm.v[d->rm_next];
            int c = cps_delta_path_cmp(d->rm.text.data + r->parent, r->plen, path, len);
            if (c > 0)
                return 0;
            if (c < 0) {
                d->rm_next++;
                continue;
            }
            d->rm_hit = d->rm_next;
            while (roots_parent_is(&d->rm, d->rm_next, path, len))
                d->rm_next++;
            d->rm_end = d->rm_next;
            return 1;
        }
        return 0;
    }

    while ((h = cursor_peek(&d->link, &d->r, err)) > 0) {
        size_t plen;
        const char *p = col(&d->r, 0, &plen);
        int c = cps_delta_path_cmp(p, plen, path, len);
        if (c > 0)
            return 0;
        d->r.row++;
        if (c == 0)
            return 1;
    }
    return h;
}

static int frame_push(delta *d, const char *path, size_t len, int virtual, ncmp_err *err)
{
    gframe *f;
    int h;

    if (d->nstack == DELTA_MAX_DEPTH + 2) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "tree deeper than %d levels", DELTA_MAX_DEPTH);
        return -1;
    }
    f = &d->stack[d->nstack++];
    f->len = len;
    f->added = 0;
    f->virtual = virtual;
    f->added_base = d->nadded;
    if (d->ahead && !d->mem) /* its children only in the target are not in the walk */
        f->added = roots_parent_is(&d->ad, roots_lower(&d->ad, path, len), path, len);
    ncmp_buf_reset(&d->path);
    ncmp_buf_append(&d->path, path, len);
    h = removed_children(d, path, len, err);
    if (h < 0)
        return -1;
    return h ? group_start(d, 1, f, err) : 0;
}

static int frame_pop(delta *d, ncmp_err *err)
{
    gframe f = d->stack[d->nstack - 1];

    if (f.added) {
        d->stack[d->nstack - 1].added = 0;
        return group_start(d, 0, &f, err); /* popped when its rows are out */
    }
    d->nadded = f.added_base;
    d->nstack--;
    if (d->nstack > 0)
        d->path.len = d->stack[d->nstack - 1].len;
    return 0;
}

/* One unit of work: a block of a group entry, a row of the walk, a frame
 * closed, or the end. */
static int delta_step(delta *d, ncmp_err *err)
{
    int hs, ht, c;
    const cursor *from;
    const char *path, *sa = NULL, *ta = NULL;
    size_t len, sal = 0, tal = 0;

    if (d->aux_on)
        return group_block(d, err);
    if ((hs = cursor_peek(&d->link, &d->s, err)) < 0 ||
        (ht = cursor_peek(&d->link, &d->t, err)) < 0)
        return -1;
    if (!hs && !ht) {
        if (d->grouped && d->nstack > 0)
            return frame_pop(d, err);
        ncmp_buf_append_str(&d->pending, d->xml ? "</deltaReports>" : "]");
        d->done = 1;
        return 0;
    }
    if (hs && ht) {
        size_t l1, l2;
        const char *p1 = col(&d->s, 0, &l1), *p2 = col(&d->t, 0, &l2);
        c = cps_delta_path_cmp(p1, l1, p2, l2);
    } else {
        c = hs ? -1 : 1;
    }
    from = c <= 0 ? &d->s : &d->t;
    path = col(from, 0, &len);
    if (c <= 0)
        sa = col(&d->s, 2, &sal);
    if (c >= 0)
        ta = col(&d->t, 2, &tal);

    if (d->grouped) {
        gframe *top = &d->stack[d->nstack - 1];
        if (d->skipping && inside(path, len, d->skip.data, d->skip.len))
            goto consumed;
        d->skipping = 0;
        if (!top->virtual && !inside(path, len, d->path.data, top->len))
            return frame_pop(d, err); /* the row is looked at again */
        if (!ta || !sa) {
            if (!sa) {
                top->added = 1;
                if (d->mem) { /* its subtree is written from there at the frame's end */
                    if (d->nadded == d->added_cap) {
                        d->added_cap = d->added_cap ? d->added_cap * 2 : 64;
                        d->added = ncmp_xrealloc(d->added, d->added_cap * sizeof(*d->added));
                    }
                    d->added[d->nadded++] = (size_t)d->t.row;
                }
            }
            ncmp_buf_reset(&d->skip);
            ncmp_buf_append(&d->skip, path, len);
            d->skipping = 1;
            goto consumed;
        }
        replace_entry(d, path, len, sa, sal, ta, tal);
        if (frame_push(d, path, len, 0, err) != 0)
            return -1;
    } else if (!ta) {
        single_entry(d, 1, path, len, sa, sal);
    } else if (!sa) {
        single_entry(d, 0, path, len, ta, tal);
    } else {
        replace_entry(d, path, len, sa, sal, ta, tal);
    }
consumed:
    if (c <= 0)
        d->s.row++;
    if (c >= 0)
        d->t.row++;
    return 0;
}

/* The depth of the row at hand of a paths cursor (path, depth). */
static int row_depth(const cursor *c)
{
    return c->mem ? c->mem->row[c->row].depth : atoi(PQgetvalue(c->res, c->row, 1));
}

/* A grouped delta with every descendant (or a payload's): the roots of
 * the subtrees only on one side, found ahead of the walk by one merge of
 * the two sides' paths (the rows of `read` with `params`, $1 each side's
 * anchor): a row only on one side is a root unless it is inside the last
 * root of that side. The remove entries come before the walk reaches
 * their rows, so the walk needs them ahead; the create entries' roots
 * let their rows be read with their subtrees at once. Memory holds the
 * roots' paths only. A payload's create entries are written from its
 * rows, so its roots are not kept. */
static int roots_find(delta *d, const char *read, const char *const *params, ncmp_err *err)
{
    cursor s = {0}, t = {0};
    char *sql = sql_around("SELECT s.path, s.depth FROM (", read, ") s");
    const char *p6[6];
    ncmp_buf last_s = NCMP_BUF_INIT, last_t = NCMP_BUF_INIT; /* each side's last root */
    int hs = 0, ht = 0, rc = -1;

    memcpy(p6, params, sizeof(p6));
    p6[0] = d->src;
    if (d->smem)
        mem_cursor_open(&s, d->smem, &d->rg, atoi(d->maxdepth));
    else if (cursor_open(&d->link, &s, "delta_rs", sql, 6, p6, err) != 0)
        goto cleanup;
    if (d->mem) {
        mem_cursor_open(&t, d->mem, &d->rg, atoi(d->maxdepth));
    } else {
        p6[0] = d->tgt;
        if (cursor_open(&d->link, &t, "delta_rt", sql, 6, p6, err) != 0)
            goto cleanup;
    }
    for (;;) {
        size_t sl = 0, tl = 0;
        const char *sp = NULL, *tp = NULL;
        int c;
        if ((hs = cursor_peek(&d->link, &s, err)) < 0 || (ht = cursor_peek(&d->link, &t, err)) < 0)
            goto cleanup;
        if (!hs && !ht)
            break;
        if (hs)
            sp = col(&s, 0, &sl);
        if (ht)
            tp = col(&t, 0, &tl);
        c = hs && ht ? cps_delta_path_cmp(sp, sl, tp, tl) : hs ? -1 : 1;
        if (c != 0) {
            const cursor *one = c < 0 ? &s : &t;
            ncmp_buf *last = c < 0 ? &last_s : &last_t;
            const char *p = c < 0 ? sp : tp;
            size_t len = c < 0 ? sl : tl;
            if (!(last->len && inside(p, len, last->data, last->len))) {
                size_t plen = row_depth(one) == d->top_depth ? 0 : cps_path_parent_len(p, len);
                ncmp_buf_reset(last);
                ncmp_buf_append(last, p, len);
                if (c < 0 || !d->mem)
                    roots_add(c < 0 ? &d->rm : &d->ad, p, len, plen);
            }
        }
        if (c <= 0)
            s.row++;
        if (c >= 0)
            t.row++;
    }
    roots_sort(&d->rm);
    roots_sort(&d->ad);
    rc = 0;
cleanup:
    cursor_close(&d->link, &s);
    cursor_close(&d->link, &t);
    free(sql);
    ncmp_buf_free(&last_s);
    ncmp_buf_free(&last_t);
    return rc;
}

/* A read of every descendant (CPS_SQL_READ_ALL's rows) within the
 * intervals [$7[i], $8[i]) of the key, in key order: the rows of a side
 * but the subtrees only it has, which a grouped walk does not look at
 * (their entries are read by the group cursors). One range scan per
 * interval. */
static const char SQL_READ_BETWEEN[] =
    "SELECT f.path, f.depth, f.attributes FROM unnest($7::text[], $8::text[]) AS r(lo, hi)"
    " JOIN LATERAL (SELECT path, depth, attributes FROM fragment WHERE anchor_id = $1"
    " AND $2::int > 0 AND path >= $3 AND path < $6 AND (path < $4 OR path >= $5)"
    " AND path >= r.lo COLLATE \"C\" AND path < r.hi COLLATE \"C\" ORDER BY path) f ON true";

static int child_cmp(const void *a, const void *b, void *arg)
{
    const char *t = arg;
    const one_root *x = a, *y = b;

    return cps_delta_path_cmp(t + x->child, x->clen, t + y->child, y->clen);
}

/* The intervals of the key from `lo` to `hi` between the subtrees of the
 * roots in r, as two text[] literals (their lows and highs). */
static void intervals_between(const delta_roots *r, const char *lo, const char *hi, ncmp_buf *los,
                              ncmp_buf *his)
{
    one_root *v = ncmp_xcalloc(r->n ? r->n : 1, sizeof(*v));
    ncmp_buf from = NCMP_BUF_INIT, to = NCMP_BUF_INIT;

    if (r->n) {
        memcpy(v, r->v, r->n * sizeof(*v));
        qsort_r(v, r->n, sizeof(*v), child_cmp, r->text.data);
    }
    ncmp_pgarray_begin(los);
    ncmp_pgarray_begin(his);
    ncmp_buf_append_str(&from, lo);
    for (size_t i = 0; i <= r->n; i++) {
        ncmp_buf_reset(&to);
        if (i < r->n)
            ncmp_buf_append(&to, r->text.data + v[i].child, v[i].clen);
        else
            ncmp_buf_append_str(&to, hi);
        if (cps_delta_path_cmp(from.data, from.len, to.data, to.len) < 0) {
            ncmp_buf_append_char(&from, '\0');
            ncmp_buf_append_char(&to, '\0');
            ncmp_pgarray_add_text(los, from.data);
            ncmp_pgarray_add_text(his, to.data);
            to.len--;
        }
        if (i < r->n) { /* on after the root's subtree */
            ncmp_buf_reset(&from);
            ncmp_buf_append(&from, to.data, to.len);
            ncmp_buf_append_char(&from, CPS_PATH_SEP + 1);
        }
    }
    ncmp_pgarray_end(los);
    ncmp_pgarray_end(his);
    ncmp_buf_free(&from);
    ncmp_buf_free(&to);
    free(v);
}

/* Open the main cursor of one side (`name`, anchor params[0]): every row
 * of the read, or, with the roots of the subtrees only that side has,
 * the rows between them. */
static int side_open(delta *d, cursor *c, const char *name, const char *read, const char **params,
                     const delta_roots *skip, ncmp_err *err)
{
    ncmp_buf los = NCMP_BUF_INIT, his = NCMP_BUF_INIT;
    int rc;

    if (!skip)
        return cursor_open(&d->link, c, name, read, 6, params, err);
    intervals_between(skip, d->rg.lo1.data, d->rg.hi2.data, &los, &his);
    params[6] = los.data;
    params[7] = his.data;
    rc = cursor_open(&d->link, c, name, SQL_READ_BETWEEN, 8, params, err);
    ncmp_buf_free(&los);
    ncmp_buf_free(&his);
    return rc;
}

/* The rows of a cursor's block (path, depth, attributes) as rows in
 * memory, in its order (key order). */
static mem_rows *mem_of_block(const PGresult *res)
{
    mem_rows *m = ncmp_xcalloc(1, sizeof(*m));
    int n = PQntuples(res);

    for (int i = 0; i < n; i++)
        mem_add(m, PQgetvalue(res, i, 0), (size_t)PQgetlength(res, i, 0),
                atoi(PQgetvalue(res, i, 1)), PQgetvalue(res, i, 2), (size_t)PQgetlength(res, i, 2));
    mem_sort(m);
    return m;
}

/* delta_open without the one-sided subtrees found first: the source's
 * and the target's cursors (the target's rows from memory for a
 * payload), opened in one round trip. Grouped, when both sides came
 * whole in their first blocks (d->memory_rows or fewer rows each), their
 * rows are kept in memory and compared as a payload's (*in_memory set);
 * otherwise the cursor of the nodes with children only in the source
 * follows. params: the source's, as delta_open makes them. */
static int delta_open_plain(delta *d, const char *read, const char **params, const char *top,
                            int *in_memory, ncmp_err *err)
{
    const char *pt[6], *pr[8];
    cursor_spec specs[DELTA_OPEN_MAX];
    char *removed = NULL;
    size_t k = 0;
    int rc, first = d->grouped && !d->mem && d->memory_rows > 0 ? d->memory_rows + 1 : 0;

    *in_memory = 0;
    memcpy(pt, params, sizeof(pt));
    pt[0] = d->tgt;
    memcpy(pr, params, 6 * sizeof(*pr));
    pr[6] = d->tgt;
    pr[7] = top;
    specs[k++] = (cursor_spec){&d->s, "delta_s", read, 6, params, first};
    if (d->mem)
        mem_cursor_open(&d->t, d->mem, &d->rg, atoi(d->maxdepth));
    else
        specs[k++] = (cursor_spec){&d->t, "delta_t", read, 6, pt, first};
    if (cursors_open(&d->link, specs, k, err) != 0)
        return -1;
    if (first && PQntuples(d->s.next) < first && PQntuples(d->t.next) < first) {
        d->smem = mem_of_block(d->s.next);
        d->mem = mem_of_block(d->t.next);
        log_debug("cps", "delta of anchors %s and %s compared in memory (%zu and %zu rows)", d->src,
                  d->tgt, d->smem->n, d->mem->n);
        cursor_close(NULL, &d->s); /* the transaction's end closes them */
        cursor_close(NULL, &d->t);
        *in_memory = 1;
        return 0;
    }
    ncmp_buf_append_str(&d->pending, d->xml ? "<deltaReports>" : "[");
    if (!d->grouped)
        return 0;
    removed = sql_around(SQL_REMOVED_PARENTS_HEAD, read, SQL_REMOVED_PARENTS_TAIL);
    rc = cursor_open(&d->link, &d->r, "delta_r", removed, 8, pr, err);
    free(removed);
    if (rc != 0)
        return -1;
    return frame_push(d, "", 0, 1, err);
}

/* Open the cursors in d->db's transaction and write the answer's head. */
static int delta_open(delta *d, const char *path, size_t plen, ncmp_err *err)
{
    const char *params[8];
    const char *read;
    char top[16];

    d->top_depth = plen ? cps_path_depth(path, plen) : 1;
    snprintf(d->maxdepth, sizeof(d->maxdepth), "%d",
             d->fetch < 0 ? CPS_DEPTH_ALL : d->top_depth + d->fetch);
    /* a list entry without descendants is its one row: the walk finds it
     * with two probes of the key, and its plan, made at each request,
     * takes less time than that of the scans of the two indexes near the
     * top (0.13-0.19 ms against 0.23-0.45) */
    if (d->fetch == 0 && plen && cps_path_is_list_entry(path, plen))
        read = CPS_SQL_READ_WALK;
    else
        read = cps_sql_read_bounded(atoi(d->maxdepth));
    snprintf(top, sizeof(top), "%d", d->top_depth);
    cps_path_ranges_of(path, plen, &d->rg);
    params[0] = d->src;
    params[1] = d->maxdepth;
    params[2] = d->rg.lo1.data;
    params[3] = d->rg.hi1.data;
    params[4] = d->rg.lo2.data;
    params[5] = d->rg.hi2.data;
    /* grouped, with every descendant: the one-sided subtrees are found
     * first, and the walk reads the rows around them */
    d->ahead = d->grouped && (d->mem || d->fetch < 0);
    if (!d->ahead) {
        int in_memory;
        if (delta_open_plain(d, read, params, top, &in_memory, err) != 0)
            return -1;
        if (!in_memory)
            return 0;
        d->ahead = 1; /* both sides in memory: found ahead there */
    }
    if (roots_find(d, read, params, err) != 0)
        return -1;
    if (d->smem)
        mem_cursor_open(&d->s, d->smem, &d->rg, atoi(d->maxdepth));
    else if (side_open(d, &d->s, "delta_s", read, params, &d->rm, err) != 0)
        return -1;
    if (d->mem) {
        mem_cursor_open(&d->t, d->mem, &d->rg, atoi(d->maxdepth));
    } else {
        params[0] = d->tgt;
        if (side_open(d, &d->t, "delta_t", read, params, &d->ad, err) != 0)
            return -1;
    }
    ncmp_buf_append_str(&d->pending, d->xml ? "<deltaReports>" : "[");
    return frame_push(d, "", 0, 1, err);
}

static ssize_t delta_next(void *arg, char *buf, size_t max)
{
    delta *d = arg;
    size_t out = 0;
    ncmp_err err;

    while (out < max) {
        size_t left = d->pending.len - d->sent;
        if (left) {
            size_t n = left < max - out ? left : max - out;
            memcpy(buf + out, d->pending.data + d->sent, n);
            d->sent += n;
            out += n;
            continue;
        }
        if (d->done) {
            if (d->db) { /* the ROLLBACK is not waited for: the answer's end goes out */
                if (fetch_drain(&d->link, &err) == 0) {
                    rest_pool_put_ending(d->pool, d->db, "ROLLBACK");
                } else {
                    ncmp_db_rollback(d->db);
                    rest_pool_put(d->pool, d->db);
                }
                d->db = NULL;
            }
            break;
        }
        ncmp_buf_reset(&d->pending);
        d->sent = 0;
        while (!d->done && d->pending.len < DELTA_OUT_BLOCK)
            if (delta_step(d, &err) != 0) {
                log_warn("cps", "delta answer cut: %s", err.msg);
                return -1;
            }
    }
    return (ssize_t)out;
}

/* Start streaming the answer of d (taken over). The first block is made
 * before the status is sent, so that what fails early is answered. */
static void delta_respond(ncmp_http_request *req, delta *d, const char *path, size_t plen)
{
    ncmp_err err;

    if (delta_open(d, path, plen, &err) != 0) {
        rest_db_answer_error(req, &err);
        delta_free(d);
        return;
    }
    ncmp_http_respond_stream(req, 200, d->xml ? "application/xml" : "application/json",
                             DELTA_OUT_BLOCK, delta_next, d, delta_free);
}

/* --- the requests --------------------------------------------------------- */

/* Does the client want XML? CPS reads the GET's Content-Type and the
 * POST's Accept; either is taken here. */
static int wants_xml(ncmp_http_request *req, int get)
{
    const char *accept = ncmp_http_header(req, "Accept");
    const char *ctype = ncmp_http_header(req, "Content-Type");

    return (accept && strstr(accept, "xml") && !strstr(accept, "json")) ||
           (get && ctype && strstr(ctype, "xml"));
}

/* The request's xpath as a stored path (NUL-terminated); 400 and -1 when
 * malformed. */
static int xpath_asked(ncmp_http_request *req, ncmp_buf *path)
{
    const char *xpath = ncmp_http_query(req, "xpath");
    ncmp_err err;

    if (cps_path_encode(xpath ? xpath : "/", path, &err) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid xpath", err.msg);
        return -1;
    }
    ncmp_buf_append_char(path, '\0');
    path->len--;
    return 0;
}

static int grouping_asked(ncmp_http_request *req, int *grouped)
{
    if (ncmp_http_query_bool(req, "grouping-enabled", 0, grouped) == 0)
        return 0;
    ncmp_http_respond_error(req, 400, "Invalid request", "grouping-enabled must be true or false");
    return -1;
}

static delta *delta_new(cps_api *api, ncmp_http_request *req, int get)
{
    delta *d = ncmp_xcalloc(1, sizeof(*d));

    d->pool = api->pool;
    d->xml = wants_xml(req, get);
    d->memory_rows = api->cfg->cps_delta_memory_rows;
    return d;
}

/* The delta's cursors are read to the end (planned for their first rows
 * otherwise), and their plans are not JIT-compiled: a range of a large
 * anchor crosses the cost threshold and paid a second of compiling for
 * a query that runs in milliseconds. An anchor's rows lie in the table
 * in key order: REST_DB_KEY_ORDER (rest_db.h), as for the reads of the
 * data API. */
/* One statement, so that it can go in a pipeline (delta_begin). */
#define SQL_SETTINGS                                                                               \
    "SELECT set_config('cursor_tuple_fraction', '1.0', true), set_config('jit', 'off', "           \
    "true), " REST_DB_KEY_ORDER

/* A pooled connection in a transaction of d's, with anchor `src` (and
 * `tgt`, NULL for a payload's delta) of dataspace `ds` resolved into ts
 * (and tt): BEGIN, the settings and the anchors in one round trip.
 * Answers and returns -1 when it cannot. */
static int delta_begin(ncmp_http_request *req, cps_api *api, delta *d, int read_only,
                       const char *ds, const char *src, const char *tgt, cps_target *ts,
                       cps_target *tt)
{
    const char *params[3] = {ds, src, tgt};
    ncmp_db_step steps[3];
    PGresult *res = NULL;
    cps_refusal why = {0};
    ncmp_err err;
    int rc;

    if (rest_pool_get(d->pool, CPS_POOL_WAIT_MS, &d->db, &err) != 0) {
        rest_db_answer_error(req, &err);
        return -1;
    }
    steps[0] =
        (ncmp_db_step){read_only ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN", 0,
                       NULL, NULL, NULL};
    steps[1] = (ncmp_db_step){SQL_SETTINGS, 0, NULL, NULL, NULL};
    cps_store_resolve_step(d->db, params, &res, &steps[2]);
    if (ncmp_db_pipeline(d->db, steps, 3, NULL, &err) != 0) {
        rest_db_answer_error(req, &err);
        return -1;
    }
    d->link.db = d->db;
    rc = cps_store_resolved(d->db, api->schemas, res, 0, ds, src, ts, &why, &err) == 0 &&
                 (!tgt ||
                  cps_store_resolved(d->db, api->schemas, res, 1, ds, tgt, tt, &why, &err) == 0)
             ? 0
             : -1;
    PQclear(res);
    if (rc != 0)
        cps_respond_refusal(req, &why, &err);
    return rc;
}

/* GET /v2/dataspaces/{ds}/anchors/{src}/delta?target-anchor-name=&xpath=
 *     &descendants=&grouping-enabled= */
static void h_delta_anchors(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;
    const char *ds = ncmp_http_param(req, "dataspace"), *src = ncmp_http_param(req, "anchor");
    const char *tgt = ncmp_http_query(req, "target-anchor-name");
    ncmp_buf path = NCMP_BUF_INIT;
    cps_target ts = {0}, tt = {0};
    delta *d = NULL;

    if (cps_name_valid(req, "dataspace-name", ds) != 0 ||
        cps_name_valid(req, "source-anchor-name", src) != 0 ||
        cps_name_valid(req, "target-anchor-name", tgt) != 0)
        return;
    d = delta_new(api, req, 1);
    if (xpath_asked(req, &path) != 0 || cps_descendants_asked(req, 2, &d->fetch) != 0 ||
        grouping_asked(req, &d->grouped) != 0 ||
        delta_begin(req, api, d, 1, ds, src, tgt, &ts, &tt) != 0)
        goto cleanup;
    memcpy(d->src, ts.anchor_id, sizeof(d->src));
    memcpy(d->tgt, tt.anchor_id, sizeof(d->tgt));
    delta_respond(req, d, path.data, path.len);
    d = NULL;
cleanup:
    delta_free(d);
    cps_target_clear(&ts);
    cps_target_clear(&tt);
    ncmp_buf_free(&path);
}

/* A scratch anchor of t's dataspace on schema set `schema_set_id` (NULL:
 * t's), in the caller's transaction: it must be rolled back or deleted
 * before the commit. *id gets its id. */
static int scratch_anchor(ncmp_db *db, const cps_target *t, const char *schema_set_id, char *id,
                          size_t idlen, ncmp_err *err)
{
    static const char sql[] =
        "INSERT INTO anchor (dataspace_id, schema_set_id, name)"
        " SELECT dataspace_id, coalesce($2::bigint, schema_set_id),"
        " 'ncmpd-delta-' || pg_backend_pid() || '-' || txid_current() || '-' || $1::text"
        " FROM anchor WHERE id = $1::bigint RETURNING id";
    const char *params[2] = {t->anchor_id, schema_set_id};
    PGresult *res = NULL;

    if (ncmp_db_query(db, sql, 2, params, &res, err) != 0)
        return -1;
    if (PQntuples(res) != 1) {
        PQclear(res);
        ncmp_err_set(err, NCMP_ERR_FATAL, "anchor %s went away", t->anchor_name);
        return -1;
    }
    snprintf(id, idlen, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    return 0;
}

/* Copy the node at stored path `path` and its ancestors (not their
 * subtrees) from anchor `from` to anchor `to`: a payload under `path`
 * then has its parent there. */
static int copy_ancestors(ncmp_db *db, const char *from, const char *to, const char *path,
                          ncmp_err *err)
{
    static const char sql[] =
        "INSERT INTO fragment (anchor_id, path, depth, name, attributes)"
        " SELECT $2, f.path, f.depth, f.name, f.attributes FROM generate_series(2, $4::int + 1) i,"
        " LATERAL (SELECT array_to_string((string_to_array($3, E'\\x01'))[1:i], E'\\x01') p) x,"
        /* one probe of the key per ancestor (a join on the path read the
         * whole anchor when its statistics expected one row of it) */
        " LATERAL (SELECT * FROM fragment f WHERE f.anchor_id = $1 AND f.path = x.p LIMIT 1) f"
        " ON CONFLICT DO NOTHING";
    char depth[16];
    const char *params[4] = {from, to, path, depth};

    if (!path[0])
        return 0;
    snprintf(depth, sizeof(depth), "%d", cps_path_depth(path, strlen(path)));
    return ncmp_db_query(db, sql, 4, params, NULL, err);
}

/* A schema set made of an uploaded YANG file, in the caller's transaction
 * (rolled back with it): *id its id, *schema its compiled context. */
static int upload_schema(ncmp_db *db, cps_api *api, const cps_target *t,
                         const ncmp_multipart_part *file, char *id, size_t idlen,
                         cps_schema **schema, ncmp_err *err)
{
    static const char sql_ds[] = "SELECT dataspace_id FROM anchor WHERE id = $1";
    static const char sql_id[] = "SELECT id FROM schema_set WHERE dataspace_id = $1 AND name = $2";
    cps_sources src = {0};
    PGresult *res = NULL;
    char ds[24], name[96];
    const char *params[2];
    int created = 0, rc = -1;

    if (cps_sources_from_upload(file->filename, file->data, file->len, &src, err) != 0)
        return -1;
    params[0] = t->anchor_id;
    if (ncmp_db_query(db, sql_ds, 1, params, &res, err) != 0 || PQntuples(res) != 1)
        goto cleanup;
    snprintf(ds, sizeof(ds), "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    res = NULL;
    snprintf(name, sizeof(name), "ncmpd-delta-%s", t->anchor_id);
    if (cps_schema_store(db, ds, name, &src, &created, err) != 0)
        goto cleanup;
    params[0] = ds;
    params[1] = name;
    if (ncmp_db_query(db, sql_id, 2, params, &res, err) != 0 || PQntuples(res) != 1)
        goto cleanup;
    snprintf(id, idlen, "%s", PQgetvalue(res, 0, 0));
    if (cps_schema_get(api->schemas, db, id, schema, err) != 0)
        goto cleanup;
    rc = 0;
cleanup:
    if (rc != 0 && err->msg[0] == '\0')
        ncmp_err_set(err, NCMP_ERR_FATAL, "the uploaded schema set could not be stored");
    PQclear(res);
    cps_sources_free(&src);
    return rc;
}

static int looks_xml(const ncmp_multipart_part *p)
{
    size_t i = 0;

    if (p->filename && strlen(p->filename) > 4 &&
        strcmp(p->filename + strlen(p->filename) - 4, ".xml") == 0)
        return 1;
    while (i < p->len &&
           (p->data[i] == ' ' || p->data[i] == '\n' || p->data[i] == '\r' || p->data[i] == '\t'))
        i++;
    return i < p->len && p->data[i] == '<';
}

/* POST /v2/dataspaces/{ds}/anchors/{src}/delta?xpath=&grouping-enabled=
 * multipart: targetData (JSON or XML), yangResourceFile (optional). */
static void h_delta_payload(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;
    const char *ds = ncmp_http_param(req, "dataspace"), *src = ncmp_http_param(req, "anchor");
    size_t blen = 0, nparts = 0;
    const char *body = ncmp_http_body(req, &blen);
    ncmp_multipart_part *parts = NULL;
    const ncmp_multipart_part *data, *yang;
    ncmp_buf path = NCMP_BUF_INIT, parent = NCMP_BUF_INIT, parent_xpath = NCMP_BUF_INIT;
    cps_target ts = {0}, payload = {0};
    cps_schema *uploaded = NULL;
    cps_refusal why = {0};
    char schema_id[24] = "";
    delta *d = NULL;
    double started;
    ncmp_err err;

    if (cps_name_valid(req, "dataspace-name", ds) != 0 ||
        cps_name_valid(req, "source-anchor-name", src) != 0)
        return;
    d = delta_new(api, req, 0);
    d->fetch = -1; /* CPS compares the payload with every descendant */
    if (xpath_asked(req, &path) != 0 || grouping_asked(req, &d->grouped) != 0)
        goto cleanup;
    if (ncmp_multipart_parse(ncmp_http_header(req, "Content-Type"), body, blen, &parts, &nparts,
                             &err) != 0) {
        ncmp_http_respond_error(req, 400, "Invalid multipart body", err.msg);
        goto cleanup;
    }
    data = ncmp_multipart_find(parts, nparts, "targetData");
    yang = ncmp_multipart_find(parts, nparts, "yangResourceFile");
    if (!data || data->len == 0) {
        ncmp_http_respond_error(req, 400, "Missing request part",
                                "Required part 'targetData' is not present or empty.");
        goto cleanup;
    }
    /* an uploaded model is stored, then rolled back */
    if (delta_begin(req, api, d, yang == NULL, ds, src, NULL, &ts, NULL) != 0)
        goto cleanup;
    memcpy(d->src, ts.anchor_id, sizeof(d->src));
    payload.dataspace = ds;
    payload.anchor_name = "(the payload)";
    memcpy(payload.anchor_id, ts.anchor_id, sizeof(payload.anchor_id));
    if (yang) {
        err.msg[0] = '\0';
        if (upload_schema(d->db, api, &ts, yang, schema_id, sizeof(schema_id), &uploaded, &err) !=
            0) {
            if (err.cls == NCMP_ERR_REJECT)
                ncmp_http_respond_error(req, 400, "Invalid yang resource file", err.msg);
            else
                rest_db_answer_error(req, &err);
            goto cleanup;
        }
    }
    payload.schema = uploaded ? uploaded : ts.schema;
    ncmp_buf_append(&parent, path.data, cps_path_parent_len(path.data, path.len));
    ncmp_buf_append_char(&parent, '\0');
    cps_path_decode(parent.data, strlen(parent.data), &parent_xpath);
    ncmp_buf_append_char(&parent_xpath, '\0');
    if (cps_store_parent_check(d->db, &ts, parent.data, parent_xpath.data, &why, &err) != 0) {
        cps_respond_refusal(req, &why, &err); /* under a node the source has, as a write */
        goto cleanup;
    }
    /* the payload's rows stay in memory, compared with the source's as
     * they are read: nothing is written */
    d->mem = ncmp_xcalloc(1, sizeof(*d->mem));
    started = ncmp_now_ms();
    if (cps_store_payload_rows(&payload, parent_xpath.data, data->data, data->len, looks_xml(data),
                               mem_add, d->mem, NULL, &why, &err) != 0) {
        cps_respond_refusal(req, &why, &err);
        goto cleanup;
    }
    if (mem_sort(d->mem) != 0) {
        ncmp_http_respond_error(req, 409, "Already defined exception",
                                "the payload names one data node twice");
        goto cleanup;
    }
    log_debug("cps", "delta of %s against a payload: %zu nodes parsed and checked in %.1f ms",
              ts.anchor_name, d->mem->n, ncmp_now_ms() - started);
    delta_respond(req, d, path.data, path.len);
    d = NULL;
cleanup:
    delta_free(d); /* rolls an uploaded model back */
    if (uploaded) {
        cps_schema_release(uploaded);
        cps_schema_forget(api->schemas, schema_id);
    }
    cps_target_clear(&ts);
    ncmp_multipart_free(parts, nparts);
    ncmp_buf_free(&path);
    ncmp_buf_free(&parent);
    ncmp_buf_free(&parent_xpath);
}

/* --- applying a report ------------------------------------------------------ */

typedef struct apply {
    ncmp_db *db;
    cps_target t;
    cps_refusal why;
    ncmp_err err;
} apply;

static int reject(apply *a, int status, const char *message, const char *details)
{
    a->why = (cps_refusal){status, message};
    ncmp_err_set(&a->err, NCMP_ERR_REJECT, "%s", details);
    return -1;
}

/* Does the data's top node `name` (a module prefix left off) name the
 * node at `path` itself? Then the data goes under its parent. */
static int names_the_node(const char *path, size_t len, const char *name, size_t nlen)
{
    const char *last, *colon = memchr(name, ':', nlen);
    size_t llen;

    if (colon) {
        nlen -= (size_t)(colon + 1 - name);
        name = colon + 1;
    }
    cps_path_last_name(path, len, &last, &llen);
    return llen && llen == nlen && memcmp(last, name, nlen) == 0;
}

/* The node the data of an entry is under: the xpath's, or its parent's
 * when the data holds the node itself (an entry without grouping, or a
 * group of top-level nodes, reported at the first one's xpath). `data`
 * is {name: ..} with one or more members. */
static void data_parent(const char *path, size_t len, json_object *data, ncmp_buf *out)
{
    size_t plen = len;

    json_object_object_foreach(data, k, v)
    {
        (void)v;
        if (names_the_node(path, len, k, strlen(k)))
            plen = cps_path_parent_len(path, len);
    }
    ncmp_buf_append(out, path, plen);
    ncmp_buf_append_char(out, '\0');
    out->len--;
}

static int write_under(apply *a, const cps_target *t, cps_write_kind kind, const char *parent,
                       json_object *data)
{
    ncmp_buf xpath = NCMP_BUF_INIT;
    const char *text = json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    int rc;

    cps_path_decode(parent, strlen(parent), &xpath);
    ncmp_buf_append_char(&xpath, '\0');
    rc = cps_store_write(a->db, t, kind, xpath.data, text, strlen(text), 0, 0, NULL, &a->why,
                         &a->err);
    ncmp_buf_free(&xpath);
    return rc;
}

static int apply_create(apply *a, const char *path, size_t len, json_object *data)
{
    ncmp_buf parent = NCMP_BUF_INIT;
    int rc;

    data_parent(path, len, data, &parent);
    rc = write_under(a, &a->t, CPS_WRITE_SAVE, parent.data, data);
    ncmp_buf_free(&parent);
    return rc;
}

/* One top node of a remove entry's data: its stored path, NUL-ended. */
static void top_path(void *arg, const char *path, size_t path_len, const char *attributes,
                     size_t attributes_len)
{
    ncmp_buf *paths = arg;

    (void)attributes;
    (void)attributes_len;
    ncmp_buf_append(paths, path, path_len);
    ncmp_buf_append_char(paths, '\0');
}

/* The nodes of `data` (its top nodes, parsed under their parent as a
 * write there would: the paths the data API would give them) are deleted
 * with their subtrees from the anchor. Their parent must be a node of the
 * anchor, as for that write. */
static int apply_remove(apply *a, const char *path, size_t len, json_object *data)
{
    /* one statement per node, its range given as values: joined with the
     * SELECT of the nodes, PostgreSQL planned a scan of the anchor's (or
     * the whole table's) rows per statement, seconds to minutes */
    static const char sql_delete[] =
        "DELETE FROM fragment WHERE anchor_id = $1 AND path >= $2 AND path < $2 || E'\\x02'";
    const char *text = json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    ncmp_buf parent = NCMP_BUF_INIT, xpath = NCMP_BUF_INIT, paths = NCMP_BUF_INIT;
    const char *params[2] = {a->t.anchor_id, NULL};
    int rc = -1;

    data_parent(path, len, data, &parent);
    cps_path_decode(parent.data, parent.len, &xpath);
    ncmp_buf_append_char(&xpath, '\0');
    if (cps_store_parent_check(a->db, &a->t, parent.data, xpath.data, &a->why, &a->err) != 0)
        goto cleanup;
    if (cps_store_update_tops(&a->t, xpath.data, text, strlen(text), top_path, &paths, &a->why,
                              &a->err) != 0)
        goto cleanup;
    for (size_t i = 0; i < paths.len; i += strlen(paths.data + i) + 1) {
        params[1] = paths.data + i;
        if (ncmp_db_query(a->db, sql_delete, 2, params, NULL, &a->err) != 0)
            goto cleanup;
    }
    rc = 0;
cleanup:
    ncmp_buf_free(&parent);
    ncmp_buf_free(&xpath);
    ncmp_buf_free(&paths);
    return rc;
}

/* The leaves object of a replace entry's side ({name: {..}} or {name:
 * [{..}]}), borrowed; NULL when there is none. */
static json_object *side_leaves(json_object *data)
{
    if (!data || !json_object_is_type(data, json_type_object) ||
        json_object_object_length(data) != 1)
        return NULL;
    json_object_object_foreach(data, k, v)
    {
        (void)k;
        if (json_object_is_type(v, json_type_array))
            v = json_object_array_length(v) == 1 ? json_object_array_get_idx(v, 0) : NULL;
        return v && json_object_is_type(v, json_type_object) ? v : NULL;
    }
    return NULL;
}

/* A replace: the target's leaves merged into the node, the leaves only
 * the source has removed from it. */
static int apply_replace(apply *a, const char *path, size_t len, json_object *src, json_object *tgt)
{
    static const char sql_drop[] = "UPDATE fragment SET attributes = attributes - $3::text[]"
                                   " WHERE anchor_id = $1 AND path = $2";
    json_object *sl = side_leaves(src), *tl = side_leaves(tgt), *keys = NULL;
    ncmp_buf parent = NCMP_BUF_INIT, names = NCMP_BUF_INIT, node = NCMP_BUF_INIT;
    const char *params[3];
    PGresult *res = NULL;
    int rc = -1, n = 0;

    if ((src && !sl) || (tgt && !tl) || (!sl && !tl)) {
        rc = reject(a, 400, "Data Validation Failed",
                    "a replace entry needs sourceData or targetData of one node");
        goto cleanup;
    }
    ncmp_buf_append(&parent, path, cps_path_parent_len(path, len));
    ncmp_buf_append_char(&parent, '\0');
    if (tl && write_under(a, &a->t, CPS_WRITE_UPDATE, parent.data, tgt) != 0)
        goto cleanup;
    ncmp_buf_append_char(&names, '{');
    keys = json_object_new_object();
    cps_delta_key_leaves(path, len, keys); /* CPS adds them to both sides: not removed */
    if (sl) {
        json_object_object_foreach(sl, k, v)
        {
            (void)v;
            if ((tl && json_object_object_get_ex(tl, k, NULL)) ||
                json_object_object_get_ex(keys, k, NULL))
                continue;
            if (strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") !=
                strlen(k)) {
                rc = reject(a, 400, "Data Validation Failed", "a leaf name is not one");
                goto cleanup;
            }
            ncmp_buf_appendf(&names, "%s\"%s\"", n++ ? "," : "", k);
        }
    }
    ncmp_buf_append_str(&names, "}");
    if (n == 0) {
        rc = 0;
        goto cleanup;
    }
    ncmp_buf_append(&node, path, len);
    ncmp_buf_append_char(&node, '\0');
    params[0] = a->t.anchor_id;
    params[1] = node.data;
    params[2] = names.data;
    if (ncmp_db_query(a->db, sql_drop, 3, params, &res, &a->err) != 0)
        goto cleanup;
    if (strcmp(PQcmdTuples(res), "1") != 0) {
        ncmp_buf x = NCMP_BUF_INIT;
        cps_path_decode(path, len, &x);
        ncmp_buf_append_char(&x, '\0');
        char details[300];
        snprintf(details, sizeof(details), "DataNode with xpath %.250s was not found.", x.data);
        rc = reject(a, 404, "DataNode not found", details);
        ncmp_buf_free(&x);
        goto cleanup;
    }
    rc = 0;
cleanup:
    PQclear(res);
    json_object_put(keys);
    ncmp_buf_free(&parent);
    ncmp_buf_free(&names);
    ncmp_buf_free(&node);
    return rc;
}

/* A side of an entry: CPS's sourceData, or source-data. */
static json_object *entry_side(json_object *e, const char *camel, const char *dashed)
{
    json_object *v = NULL;

    if (!json_object_object_get_ex(e, camel, &v))
        json_object_object_get_ex(e, dashed, &v);
    return v && json_object_is_type(v, json_type_object) ? v : NULL;
}

static int apply_entry(apply *a, json_object *e)
{
    json_object *jaction = NULL, *jxpath = NULL, *src, *tgt;
    const char *action, *xpath;
    ncmp_buf path = NCMP_BUF_INIT;
    int rc = -1;

    if (!json_object_is_type(e, json_type_object) ||
        !json_object_object_get_ex(e, "action", &jaction) ||
        !json_object_object_get_ex(e, "xpath", &jxpath) ||
        !json_object_is_type(jxpath, json_type_string) ||
        !json_object_is_type(jaction, json_type_string))
        return reject(a, 400, "Data Validation Failed",
                      "every entry of a delta report needs an action and an xpath");
    action = json_object_get_string(jaction);
    xpath = json_object_get_string(jxpath);
    if (cps_path_encode(xpath, &path, &a->err) != 0) {
        char details[300];
        snprintf(details, sizeof(details), "%.200s", a->err.msg);
        reject(a, 400, "Error while parsing xpath expression.", details);
        goto cleanup;
    }
    ncmp_buf_append_char(&path, '\0');
    path.len--;
    src = entry_side(e, "sourceData", "source-data");
    tgt = entry_side(e, "targetData", "target-data");
    if (strcmp(action, "create") == 0) {
        rc = tgt ? apply_create(a, path.data, path.len, tgt)
                 : reject(a, 400, "Data Validation Failed", "a create entry has no targetData");
    } else if (strcmp(action, "remove") == 0) {
        rc = src ? apply_remove(a, path.data, path.len, src)
                 : reject(a, 400, "Data Validation Failed", "a remove entry has no sourceData");
    } else if (strcmp(action, "replace") == 0) {
        rc = apply_replace(a, path.data, path.len, src, tgt);
    } else {
        char details[200];
        snprintf(details, sizeof(details),
                 "Unsupported action '%.40s' at xpath: %.80s. Valid actions are: 'create', "
                 "'remove' or 'replace'.",
                 action, xpath);
        rc = reject(a, 400, "Invalid 'action' in delta report.", details);
    }
cleanup:
    ncmp_buf_free(&path);
    return rc;
}

/* A refusal of the report's XML, with what the scanner or the model said. */
static int reject_xml(apply *a)
{
    char details[NCMP_ERR_MSG_MAX];

    snprintf(details, sizeof(details), "%s", a->err.msg);
    return reject(a, 400, "Data Validation Failed", details);
}

static int local_is(const cps_xml_elem *e, const char *name)
{
    return e->local_len == strlen(name) && memcmp(e->local, name, e->local_len) == 0;
}

/* One side of an XML entry as the JSON of a report in JSON: parsed with
 * the anchor's schema under the node the apply writes it under (the
 * xpath's, or its parent's when the data holds the node itself, as
 * data_parent decides for JSON). *out NULL when the entry's xpath is
 * missing or bad: apply_entry refuses it then, as for JSON. */
static int xml_side(apply *a, json_object *entry, const cps_xml_elem *side, json_object **out)
{
    json_object *jx = NULL;
    ncmp_buf path = NCMP_BUF_INIT, parent = NCMP_BUF_INIT;
    cps_xml_elem top;
    size_t plen, pos = 0;
    int r, rc = -1;

    *out = NULL;
    if (!json_object_object_get_ex(entry, "xpath", &jx) ||
        cps_path_encode(json_object_get_string(jx), &path, &a->err) != 0) {
        ncmp_buf_free(&path);
        return 0;
    }
    plen = path.len;
    while ((r = cps_xml_next(side->content, side->content_len, &pos, &top, &a->err)) == 1)
        if (names_the_node(path.data, path.len, top.name, top.name_len))
            plen = cps_path_parent_len(path.data, path.len);
    if (r < 0) {
        reject_xml(a);
        goto cleanup;
    }
    ncmp_buf_append(&parent, path.data, plen);
    ncmp_buf_append_char(&parent, '\0');
    if (cps_store_xml_to_json(&a->t, parent.data, side->content, side->content_len, out, &a->err) !=
        0) {
        if (a->err.cls == NCMP_ERR_REJECT)
            reject_xml(a);
        goto cleanup;
    }
    rc = 0;
cleanup:
    ncmp_buf_free(&path);
    ncmp_buf_free(&parent);
    return rc;
}

/* CPS's delta report in XML (<deltaReports><deltaReport><action/>
 * <xpath/><sourceData/><targetData/></deltaReport>...</deltaReports>, the
 * sides also as source-data and target-data) as the JSON array a report
 * in JSON is. */
static int xml_report(apply *a, const char *body, size_t len, json_object **out)
{
    static const char shape[] = "a delta report in XML is <deltaReports> holding <deltaReport> "
                                "entries of <action>, <xpath>, <sourceData> and <targetData>";
    json_object *report = json_object_new_array();
    cps_xml_elem root, entry, f, more;
    size_t pos = 0, epos = 0;
    int r, extra = 0;

    r = cps_xml_next(body, len, &pos, &root, &a->err);
    if (r == 1)
        extra = cps_xml_next(body, len, &pos, &more, &a->err); /* one root only */
    if (r < 0 || extra < 0) {
        reject_xml(a);
        goto refused;
    }
    if (r == 0 || extra == 1 || !local_is(&root, "deltaReports")) {
        reject(a, 400, "Data Validation Failed", shape);
        goto refused;
    }
    while ((r = cps_xml_next(root.content, root.content_len, &epos, &entry, &a->err)) == 1) {
        json_object *e = json_object_new_object();
        cps_xml_elem sides[2];
        int have[2] = {0, 0};
        size_t fpos = 0;

        json_object_array_add(report, e);
        if (!local_is(&entry, "deltaReport")) {
            reject(a, 400, "Data Validation Failed", shape);
            goto refused;
        }
        while ((r = cps_xml_next(entry.content, entry.content_len, &fpos, &f, &a->err)) == 1) {
            int k = local_is(&f, "sourceData") || local_is(&f, "source-data")   ? 0
                    : local_is(&f, "targetData") || local_is(&f, "target-data") ? 1
                                                                                : -1;
            if (k >= 0) {
                sides[k] = f;
                have[k] = 1;
            } else if (local_is(&f, "action") || local_is(&f, "xpath")) {
                ncmp_buf v = NCMP_BUF_INIT;
                if (cps_xml_text_of(&f, &v, &a->err) != 0) {
                    ncmp_buf_free(&v);
                    reject_xml(a);
                    goto refused;
                }
                json_object_object_add(e, local_is(&f, "action") ? "action" : "xpath",
                                       json_object_new_string_len(v.len ? v.data : "", (int)v.len));
                ncmp_buf_free(&v);
            } else {
                char details[NCMP_ERR_MSG_MAX];
                snprintf(details, sizeof(details), "<%.*s> has no place in a <deltaReport>: %s",
                         (int)(f.name_len < 64 ? f.name_len : 64), f.name, shape);
                reject(a, 400, "Data Validation Failed", details);
                goto refused;
            }
        }
        if (r < 0) {
            reject_xml(a);
            goto refused;
        }
        for (int k = 0; k < 2; k++) {
            json_object *data = NULL;
            if (!have[k])
                continue;
            if (xml_side(a, e, &sides[k], &data) != 0)
                goto refused;
            if (data)
                json_object_object_add(e, k ? "targetData" : "sourceData", data);
        }
    }
    if (r < 0) {
        reject_xml(a);
        goto refused;
    }
    *out = report;
    return 0;
refused:
    json_object_put(report);
    return -1;
}

/* POST /v2/dataspaces/{ds}/anchors/{a}/applyChangesInDeltaReport */
static void h_apply(ncmp_http_request *req, void *arg)
{
    cps_api *api = arg;
    const char *ds = ncmp_http_param(req, "dataspace"), *name = ncmp_http_param(req, "anchor");
    const char *ctype = ncmp_http_header(req, "Content-Type");
    size_t blen = 0;
    const char *body = ncmp_http_body(req, &blen);
    json_object *report = NULL;
    apply a = {0};
    int xml = ctype && strstr(ctype, "xml");
    rest_pool *pool = api->pool;
    int began = 0;

    if (cps_name_valid(req, "dataspace-name", ds) != 0 ||
        cps_name_valid(req, "anchor-name", name) != 0)
        return;
    if (!xml && (!body || ncmp_json_parse(body, blen, &report, &a.err) != 0 ||
                 !json_object_is_type(report, json_type_array))) {
        ncmp_http_respond_error(req, 400, "Data Validation Failed",
                                "the delta report must be a JSON array of entries");
        goto cleanup;
    }
    if (rest_pool_get(pool, CPS_POOL_WAIT_MS, &a.db, &a.err) != 0 ||
        ncmp_db_exec(a.db, "BEGIN", &a.err) != 0 || ncmp_db_exec(a.db, SQL_SETTINGS, &a.err) != 0) {
        rest_db_answer_error(req, &a.err);
        goto cleanup;
    }
    began = 1;
    if (cps_store_resolve(a.db, api->schemas, ds, name, &a.t, &a.why, &a.err) != 0)
        goto refused;
    if (xml && xml_report(&a, body ? body : "", blen, &report) != 0)
        goto refused;
    for (size_t i = 0; i < json_object_array_length(report); i++)
        if (apply_entry(&a, json_object_array_get_idx(report, i)) != 0)
            goto refused;
    if (ncmp_db_commit(a.db, &a.err) != 0) {
        began = 0;
        goto refused;
    }
    began = 0;
    ncmp_http_respond(req, 201, "application/json", "", 0);
    goto cleanup;
refused:
    cps_respond_refusal(req, &a.why, &a.err);
cleanup:
    if (a.db) {
        if (began)
            ncmp_db_rollback(a.db);
        rest_pool_put(pool, a.db);
    }
    cps_target_clear(&a.t);
    json_object_put(report);
}

void cps_delta_routes_add(cps_api *api, ncmp_http_server *s)
{
#define A "/cps/api/v2/dataspaces/{dataspace}/anchors/{anchor}"
    ncmp_http_route(s, "GET", A "/delta", h_delta_anchors, api);
    ncmp_http_route(s, "POST", A "/delta", h_delta_payload, api);
    ncmp_http_route(s, "POST", A "/applyChangesInDeltaReport", h_apply, api);
#undef A
}

/* --- the delta of a write, for its data-updated events -------------------- */

int cps_delta_snapshot(ncmp_db *db, const cps_target *t, const char *path, char *id, size_t idlen,
                       ncmp_err *err)
{
    static const char sql[] = "INSERT INTO fragment (anchor_id, path, depth, name, attributes)"
                              " SELECT $2, path, depth, name, attributes FROM fragment"
                              " WHERE anchor_id = $1 AND path >= $3 AND path < $6"
                              " AND (path < $4 OR path >= $5)";
    cps_path_ranges rg = {0};
    const char *params[6];
    int rc = -1;

    if (scratch_anchor(db, t, NULL, id, idlen, err) != 0)
        return -1;
    cps_path_ranges_of(path, strlen(path), &rg);
    params[0] = t->anchor_id;
    params[1] = id;
    params[2] = rg.lo1.data;
    params[3] = rg.hi1.data;
    params[4] = rg.lo2.data;
    params[5] = rg.hi2.data;
    /* the subtree, then its ancestors (which skip the node itself) */
    rc = ncmp_db_query(db, sql, 6, params, NULL, err);
    if (rc == 0)
        rc = copy_ancestors(db, t->anchor_id, id, path, err);
    cps_path_ranges_free(&rg);
    return rc;
}

int cps_delta_each(ncmp_db *db, const char *src_id, const char *tgt_id, const char *path,
                   cps_delta_entry_fn fn, void *arg, ncmp_err *err)
{
    delta *d = ncmp_xcalloc(1, sizeof(*d));
    json_object *report = NULL;
    int rc = -1;

    d->db = db;
    d->link.db = db;
    d->grouped = 1;
    d->fetch = -1;
    snprintf(d->src, sizeof(d->src), "%s", src_id);
    snprintf(d->tgt, sizeof(d->tgt), "%s", tgt_id);
    if (ncmp_db_exec(db, SQL_SETTINGS, err) != 0 || delta_open(d, path, strlen(path), err) != 0)
        goto cleanup;
    while (!d->done)
        if (delta_step(d, err) != 0)
            goto cleanup;
    if (ncmp_json_parse(d->pending.data, d->pending.len, &report, err) != 0 ||
        !json_object_is_type(report, json_type_array)) {
        ncmp_err_set(err, NCMP_ERR_FATAL, "a write's delta report is not a JSON array");
        goto cleanup;
    }
    for (size_t i = 0; i < json_object_array_length(report); i++) {
        json_object *e = json_object_array_get_idx(report, i), *a, *x, *s, *g;
        if (!json_object_object_get_ex(e, "action", &a) ||
            !json_object_object_get_ex(e, "xpath", &x))
            continue;
        if (!json_object_object_get_ex(e, "sourceData", &s))
            s = NULL;
        if (!json_object_object_get_ex(e, "targetData", &g))
            g = NULL;
        if (fn(arg, json_object_get_string(a), json_object_get_string(x), s, g, err) != 0)
            goto cleanup;
    }
    rc = 0;
cleanup:
    json_object_put(report);
    cursor_close(&d->link, &d->s);
    cursor_close(&d->link, &d->t);
    cursor_close(&d->link, &d->r);
    cursor_close(&d->link, &d->aux);
    d->db = NULL; /* the caller's */
    delta_free(d);
    return rc;
}
