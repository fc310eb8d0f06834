#include "avc_apply.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avc_event.h"
#include "cps_store.h"
#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_pgarray.h"
#include "ncmp_time.h"

/* The batch's handles in one query: whether each is known, its data sync
 * flag, and its cache's anchor and schema set. No row lock on cm_handle
 * (the registration stage owns those rows); the anchor's row is locked by
 * each write, so a cache dropped meanwhile is refused, not written. */
#define SQL_HANDLES                                                                                \
    "SELECT k.id, h.id IS NOT NULL, coalesce(h.data_sync_enabled, false), a.id, a.schema_set_id"   \
    " FROM (SELECT DISTINCT unnest($1::text[]) AS id) k"                                           \
    " LEFT JOIN cm_handle h ON h.id = k.id"                                                        \
    " LEFT JOIN anchor a ON a.name = k.id"                                                         \
    "  AND a.dataspace_id = (SELECT id FROM dataspace WHERE name = $2)"

typedef struct avc_worker {
    const ncmp_config *cfg;
    cps_schema_cache *schemas;
    ncmp_buf ids;
    unsigned long applied, edits, ignored, rejected;
} avc_worker;

/* One handle of the batch, as SQL_HANDLES found it. */
typedef struct avc_handle {
    const char *id; /* into the query's result */
    int known, sync;
    const char *anchor_id, *schema_set_id; /* NULL when there is no cache */
} avc_handle;

/* An event refused in batch mode, dead-lettered only if the batch
 * commits (a batch that fails is applied again one by one, which would
 * dead-letter it a second time). */
typedef struct avc_pending {
    const rd_kafka_message_t *m;
    char *reason;
} avc_pending;

static int avc_init(void *arg, ncmp_stage_ctx *ctx, void **state, ncmp_err *err)
{
    avc_worker *w = ncmp_xcalloc(1, sizeof(*w));

    (void)arg;
    (void)err;
    w->cfg = ctx->cfg;
    w->schemas = cps_schema_cache_new();
    *state = w;
    return 0;
}

static void avc_fini(void *state)
{
    avc_worker *w = state;

    if (!w)
        return;
    log_info(AVC_APPLY_ROLE,
             "worker stopping: %lu events applied (%lu edits), %lu ignored, %lu "
             "dead-lettered",
             w->applied, w->edits, w->ignored, w->rejected);
    cps_schema_cache_destroy(w->schemas);
    ncmp_buf_free(&w->ids);
    free(w);
}

/* --- one record ----------------------------------------------------------- */

int avc_source_is_dmi_plugin(const void *value, size_t len)
{
    static const unsigned char java[] = {0xac, 0xed, 0x00, 0x05, 0x74};
    static const char want[] = AVC_APPLY_SOURCE;
    const unsigned char *v = value;

    if (!v)
        return 0;
    if (len >= sizeof(java) + 2 && memcmp(v, java, sizeof(java)) == 0) {
        v += sizeof(java) + 2;
        len -= sizeof(java) + 2;
    }
    return len == sizeof(want) - 1 && memcmp(v, want, len) == 0;
}

/* Is the record's last ce_source ONAP-DMI-PLUGIN? */
static int from_dmi_plugin(const rd_kafka_message_t *m)
{
    rd_kafka_headers_t *hdrs = NULL;
    const void *value = NULL;
    size_t len = 0;

    if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        rd_kafka_header_get_last(hdrs, "ce_source", &value, &len) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return 0;
    return avc_source_is_dmi_plugin(value, len);
}

/* The record's key as a string (NULL: none, or one holding a NUL). */
static char *key_dup(const rd_kafka_message_t *m)
{
    if (!m->key || m->key_len == 0 || memchr(m->key, '\0', m->key_len))
        return NULL;
    char *id = ncmp_xmalloc(m->key_len + 1);
    memcpy(id, m->key, m->key_len);
    id[m->key_len] = '\0';
    return id;
}

/* How many nodes a value writes at its top: a member that is an object is
 * one, an array as many as it holds. A patch of one node is one UPDATE
 * that either changed it or nothing. */
static size_t value_tops(const char *value)
{
    json_object *o = json_tokener_parse(value);
    size_t n = 0;

    if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, k, v)
        {
            (void)k;
            n += json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
        }
    }
    json_object_put(o);
    return n;
}

typedef enum outcome {
    APPLIED,
    IGNORED,
    REFUSED_CLEAN, /* refused; nothing of it was written: dead-letter in place */
    REFUSED_DIRTY, /* refused after a write, or the transaction failed */
    FAILED,        /* not the event's fault (database, fatal) */
} outcome;

/* The cache of handle `h` as a store target, its schema set loaded:
 * APPLIED; REFUSED_CLEAN (with the reason) when the set does not compile,
 * FAILED when it cannot be read. */
static outcome cache_target(avc_worker *w, ncmp_stage_ctx *ctx, const avc_handle *h, cps_target *t,
                            ncmp_buf *reason, ncmp_err *err)
{
    t->dataspace = CPS_OPERATIONAL_DATASPACE;
    t->anchor_name = h->id;
    snprintf(t->anchor_id, sizeof(t->anchor_id), "%s", h->anchor_id);
    if (cps_schema_get(w->schemas, ctx->db, h->schema_set_id, &t->schema, err) == 0)
        return APPLIED;
    if (err->cls != NCMP_ERR_REJECT)
        return FAILED;
    ncmp_buf_appendf(reason, "the cache's schema set does not compile: %s", err->msg);
    return REFUSED_CLEAN;
}

/* Apply the edits of `ev` to the cache of handle `h`. On a refusal
 * `reason` says why. */
static outcome apply_edits(avc_worker *w, ncmp_stage_ctx *ctx, const avc_handle *h,
                           const avc_event *ev, ncmp_buf *reason, ncmp_err *err)
{
    cps_target t = {0};
    ncmp_buf *xpaths = ncmp_xcalloc(ev->n * 2 + 1, sizeof(*xpaths));
    cps_refusal why = {0};
    outcome out = cache_target(w, ctx, h, &t, reason, err);
    size_t k;

    if (out != APPLIED)
        goto cleanup;
    out = FAILED;
    /* every target first: a bad one refuses the event before any write */
    for (k = 0; k < ev->n; k++)
        if (avc_target_xpath(cps_schema_ctx(t.schema), ev->edits[k].target, &xpaths[2 * k],
                             &xpaths[2 * k + 1], err) != 0) {
            ncmp_buf_appendf(reason, "edit[%zu]: %s", k, err->msg);
            out = REFUSED_CLEAN;
            goto cleanup;
        }
    for (k = 0; k < ev->n; k++) {
        const avc_edit *e = &ev->edits[k];
        const char *xpath = xpaths[2 * k].data, *parent = xpaths[2 * k + 1].data;
        int rc;
        static const cps_write_kind kinds[] = {
            [AVC_OP_CREATE] = CPS_WRITE_SAVE,
            [AVC_OP_UPDATE] = CPS_WRITE_REPLACE,
            [AVC_OP_PATCH] = CPS_WRITE_UPDATE,
        };
        if (e->op == AVC_OP_DELETE)
            rc = cps_store_delete(ctx->db, &t, xpath, &why, err);
        else
            rc = cps_store_write(ctx->db, &t, kinds[e->op], parent, e->value, strlen(e->value), 0,
                                 0, NULL, &why, err);
        if (rc == 0)
            continue;
        if (err->cls != NCMP_ERR_REJECT)
            goto cleanup;
        ncmp_buf_appendf(reason, "edit[%zu] %s %s: %d %s: %s", k, avc_op_name(e->op),
                         e->op == AVC_OP_DELETE ? xpath : parent, why.status,
                         why.message ? why.message : "refused", err->msg);
        /* clean only if nothing of the event was written: the first edit,
         * a transaction still usable, and no patch of several nodes (an
         * UPDATE may have changed some of them) */
        out = k == 0 && PQtransactionStatus(ncmp_db_conn(ctx->db)) != PQTRANS_INERROR &&
                      (e->op != AVC_OP_PATCH || value_tops(e->value) <= 1)
                  ? REFUSED_CLEAN
                  : REFUSED_DIRTY;
        goto cleanup;
    }
    w->edits += ev->n;
    out = APPLIED;
cleanup:
    for (k = 0; k < ev->n * 2; k++)
        ncmp_buf_free(&xpaths[k]);
    free(xpaths);
    cps_target_clear(&t);
    return out;
}

static int handle_cmp(const void *a, const void *b)
{
    return strcmp(((const avc_handle *)a)->id, ((const avc_handle *)b)->id);
}

/* hs is sorted by id in byte order (handles_load) */
static const avc_handle *handle_find(const avc_handle *hs, size_t n, const char *id)
{
    avc_handle key = {.id = id};
    return n ? bsearch(&key, hs, n, sizeof(*hs), handle_cmp) : NULL;
}

/* The record's handle and event (*ev filled, the caller clears it) when
 * it is to be applied (APPLIED); IGNORED or REFUSED_CLEAN, with the
 * reason, otherwise. */
static outcome event_of(const rd_kafka_message_t *m, const avc_handle *hs, size_t nh,
                        const avc_handle **hp, avc_event *ev, ncmp_buf *reason, ncmp_err *err)
{
    char *id = NULL;
    const avc_handle *h;
    outcome out = REFUSED_CLEAN;

    if (!from_dmi_plugin(m))
        return IGNORED;
    id = key_dup(m);
    if (!id) {
        ncmp_buf_append_str(reason, "no key: an AVC event's key is the CM handle id");
        return REFUSED_CLEAN;
    }
    /* every refusal below names the handle first */
    ncmp_buf_appendf(reason, "CM handle '%.200s': ", id);
    h = handle_find(hs, nh, id);
    if (!h || !h->known)
        ncmp_buf_append_str(reason, "unknown CM handle");
    else if (!h->sync)
        out = IGNORED;
    else if (!h->anchor_id)
        ncmp_buf_append_str(reason,
                            "data sync is on but there is no operational cache (no "
                            "anchor of that name in dataspace " CPS_OPERATIONAL_DATASPACE ")");
    else if (avc_event_parse(m->payload ? m->payload : "", m->payload ? m->len : 0, ev, err) != 0)
        ncmp_buf_appendf(reason, "not an AVC event: %s", err->msg);
    else {
        *hp = h;
        out = APPLIED;
    }
    free(id);
    return out;
}

/* One record: what became of it, with the reason of a refusal. */
static outcome apply_one(avc_worker *w, ncmp_stage_ctx *ctx, const rd_kafka_message_t *m,
                         const avc_handle *hs, size_t nh, ncmp_buf *reason, ncmp_err *err)
{
    const avc_handle *h = NULL;
    avc_event ev = {0};
    outcome out = event_of(m, hs, nh, &h, &ev, reason, err);

    if (out == APPLIED)
        out = apply_edits(w, ctx, h, &ev, reason, err);
    avc_event_clear(&ev);
    return out;
}

/* --- a batch of patches as one statement ------------------------------------ */

/* A node one patch of the batch merges leaves into. */
typedef struct avc_top {
    const char *anchor_id; /* into the handles' result */
    char *path, *attrs;
    size_t path_len, seq;
} avc_top;

typedef struct avc_tops {
    avc_top *v;
    size_t n, cap, seq;
    const char *anchor_id; /* of the patch being collected */
} avc_tops;

static void tops_truncate(avc_tops *t, size_t n)
{
    while (t->n > n) {
        t->n--;
        free(t->v[t->n].path);
        free(t->v[t->n].attrs);
    }
}

static void tops_free(avc_tops *t)
{
    tops_truncate(t, 0);
    free(t->v);
}

static void top_add(void *arg, const char *path, size_t path_len, const char *attrs,
                    size_t attrs_len)
{
    avc_tops *t = arg;
    avc_top *e;

    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->v = ncmp_xrealloc(t->v, t->cap * sizeof(*t->v));
    }
    e = &t->v[t->n++];
    e->anchor_id = t->anchor_id;
    e->path = ncmp_xmalloc(path_len + 1);
    memcpy(e->path, path, path_len);
    e->path[path_len] = '\0';
    e->path_len = path_len;
    e->attrs = ncmp_xmalloc(attrs_len + 1);
    memcpy(e->attrs, attrs, attrs_len);
    e->attrs[attrs_len] = '\0';
    e->seq = t->seq++;
}

/* By anchor (decimal ids: shorter is smaller), then path. */
static int node_cmp(const avc_top *x, const avc_top *y)
{
    size_t xl = strlen(x->anchor_id), yl = strlen(y->anchor_id), n;
    int c;

    if (xl != yl)
        return xl < yl ? -1 : 1;
    if ((c = strcmp(x->anchor_id, y->anchor_id)))
        return c;
    n = x->path_len < y->path_len ? x->path_len : y->path_len;
    if ((c = memcmp(x->path, y->path, n)))
        return c;
    return x->path_len < y->path_len ? -1 : x->path_len > y->path_len;
}

/* By node, then patch order. */
static int top_cmp(const void *a, const void *b)
{
    const avc_top *x = a, *y = b;
    int c = node_cmp(x, y);

    return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* What the record would do, as apply_one decides, its patches' nodes
 * collected in `tops` instead of written; *other_op set (and nothing
 * collected) when an edit is not a patch. */
static outcome collect_one(avc_worker *w, ncmp_stage_ctx *ctx, const rd_kafka_message_t *m,
                           const avc_handle *hs, size_t nh, avc_tops *tops, int *other_op,
                           ncmp_buf *reason, ncmp_err *err)
{
    const avc_handle *h = NULL;
    avc_event ev = {0};
    cps_target t = {0};
    cps_refusal why = {0};
    ncmp_buf xpath = NCMP_BUF_INIT, parent = NCMP_BUF_INIT;
    size_t mark = tops->n;
    outcome out = event_of(m, hs, nh, &h, &ev, reason, err);

    if (out != APPLIED)
        goto cleanup;
    out = FAILED;
    for (size_t k = 0; k < ev.n; k++)
        if (ev.edits[k].op != AVC_OP_PATCH) {
            *other_op = 1;
            goto cleanup;
        }
    if ((out = cache_target(w, ctx, h, &t, reason, err)) != APPLIED)
        goto cleanup;
    out = FAILED;
    tops->anchor_id = h->anchor_id;
    for (size_t k = 0; k < ev.n; k++) {
        const avc_edit *e = &ev.edits[k];
        ncmp_buf_reset(&xpath);
        ncmp_buf_reset(&parent);
        if (avc_target_xpath(cps_schema_ctx(t.schema), e->target, &xpath, &parent, err) != 0) {
            ncmp_buf_appendf(reason, "edit[%zu]: %s", k, err->msg);
            out = REFUSED_CLEAN;
            goto cleanup;
        }
        if (cps_store_update_tops(&t, parent.data, e->value, strlen(e->value), top_add, tops, &why,
                                  err) != 0) {
            if (err->cls != NCMP_ERR_REJECT)
                goto cleanup;
            ncmp_buf_appendf(reason, "edit[%zu] patch %s: %d %s: %s", k, parent.data, why.status,
                             why.message ? why.message : "refused", err->msg);
            out = REFUSED_CLEAN;
            goto cleanup;
        }
    }
    out = APPLIED;
cleanup:
    if (out != APPLIED)
        tops_truncate(tops, mark);
    avc_event_clear(&ev);
    cps_target_clear(&t);
    ncmp_buf_free(&xpath);
    ncmp_buf_free(&parent);
    return out;
}

/* Lock the anchors of `tops` and merge every patch into its node with one
 * UPDATE, a node patched twice in the batch merged in order first. A node
 * that does not exist is REJECT: the stage then applies the batch one
 * event at a time, and only the culprit is dead-lettered. */
static int tops_write(ncmp_stage_ctx *ctx, avc_tops *tops, ncmp_err *err)
{
    static const char sql_lock[] =
        "SELECT count(*) FROM (SELECT id FROM anchor WHERE id = ANY($1::bigint[])"
        " ORDER BY id FOR NO KEY UPDATE) l";
    static const char sql_update[] =
        "UPDATE fragment f SET attributes = f.attributes || u.a"
        " FROM unnest($1::bigint[], $2::text[], $3::jsonb[]) u(anchor_id, path, a)"
        " WHERE f.anchor_id = u.anchor_id AND f.path = u.path";
    ncmp_buf anchors = NCMP_BUF_INIT, ids = NCMP_BUF_INIT, paths = NCMP_BUF_INIT,
             attrs = NCMP_BUF_INIT;
    const char *params[3];
    PGresult *res = NULL;
    size_t nodes = 0, nanchors = 0;
    long got;
    int rc = -1;

    if (!tops->n)
        return 0;
    qsort(tops->v, tops->n, sizeof(*tops->v), top_cmp);
    ncmp_pgarray_begin(&anchors);
    ncmp_pgarray_begin(&ids);
    ncmp_pgarray_begin(&paths);
    ncmp_pgarray_begin(&attrs);
    for (size_t i = 0; i < tops->n;) {
        const avc_top *a = &tops->v[i];
        size_t j = i + 1;
        while (j < tops->n && node_cmp(a, &tops->v[j]) == 0)
            j++;
        if (i == 0 || strcmp(tops->v[i - 1].anchor_id, a->anchor_id) != 0) {
            ncmp_pgarray_add_text(&anchors, a->anchor_id);
            nanchors++;
        }
        ncmp_pgarray_add_text(&ids, a->anchor_id);
        ncmp_pgarray_add_text(&paths, a->path);
        if (j == i + 1) {
            ncmp_pgarray_add_text(&attrs, a->attrs);
        } else { /* patched again: later leaves win, as one after the other */
            json_object *merged = json_tokener_parse(a->attrs);
            for (size_t k = i + 1; k < j; k++) {
                json_object *o = json_tokener_parse(tops->v[k].attrs);
                json_object_object_foreach(o, key, v)
                    json_object_object_add(merged, key, json_object_get(v));
                json_object_put(o);
            }
            ncmp_pgarray_add_text(&attrs,
                                  json_object_to_json_string_ext(merged, JSON_C_TO_STRING_PLAIN));
            json_object_put(merged);
        }
        nodes++;
        i = j;
    }
    ncmp_pgarray_end(&anchors);
    ncmp_pgarray_end(&ids);
    ncmp_pgarray_end(&paths);
    ncmp_pgarray_end(&attrs);
    params[0] = anchors.data;
    if (ncmp_db_query(ctx->db, sql_lock, 1, params, &res, err) != 0)
        goto cleanup;
    got = atol(PQgetvalue(res, 0, 0));
    PQclear(res);
    res = NULL;
    if ((size_t)got != nanchors) {
        ncmp_err_set(err, NCMP_ERR_REJECT, "%zu of the batch's caches went away meanwhile",
                     nanchors - (size_t)got);
        goto cleanup;
    }
    params[0] = ids.data;
    params[1] = paths.data;
    params[2] = attrs.data;
    if (ncmp_db_query(ctx->db, sql_update, 3, params, &res, err) != 0)
        goto cleanup;
    got = atol(PQcmdTuples(res));
    if ((size_t)got != nodes) {
        ncmp_err_set(err, NCMP_ERR_REJECT,
                     "%zu of the %zu nodes the batch's patches name are not in their caches",
                     nodes - (size_t)got, nodes);
        goto cleanup;
    }
    rc = 0;
cleanup:
    PQclear(res);
    ncmp_buf_free(&anchors);
    ncmp_buf_free(&ids);
    ncmp_buf_free(&paths);
    ncmp_buf_free(&attrs);
    return rc;
}

/* --- the batch ------------------------------------------------------------ */

/* SQL_HANDLES over the distinct keys of the records from a DMI plugin. */
static int handles_load(avc_worker *w, ncmp_stage_ctx *ctx, rd_kafka_message_t **msgs, size_t n,
                        PGresult **res, avc_handle **hs, size_t *nh, ncmp_err *err)
{
    const char *params[2];
    size_t count = 0;

    ncmp_pgarray_begin(&w->ids);
    for (size_t i = 0; i < n; i++) {
        char *id;
        if (!from_dmi_plugin(msgs[i]) || !(id = key_dup(msgs[i])))
            continue;
        ncmp_pgarray_add_text(&w->ids, id);
        free(id);
        count++;
    }
    ncmp_pgarray_end(&w->ids);
    *hs = NULL;
    *nh = 0;
    if (!count)
        return 0;
    params[0] = w->ids.data;
    params[1] = CPS_OPERATIONAL_DATASPACE;
    if (ncmp_db_run(ctx->db, "avc_handles", 2, params, res, err) != 0)
        return -1;
    *nh = (size_t)PQntuples(*res);
    *hs = ncmp_xcalloc(*nh + 1, sizeof(**hs));
    for (size_t r = 0; r < *nh; r++) {
        avc_handle *h = &(*hs)[r];
        h->id = PQgetvalue(*res, (int)r, 0);
        h->known = PQgetvalue(*res, (int)r, 1)[0] == 't';
        h->sync = PQgetvalue(*res, (int)r, 2)[0] == 't';
        h->anchor_id = PQgetisnull(*res, (int)r, 3) ? NULL : PQgetvalue(*res, (int)r, 3);
        h->schema_set_id = PQgetisnull(*res, (int)r, 4) ? NULL : PQgetvalue(*res, (int)r, 4);
    }
    qsort(*hs, *nh, sizeof(**hs), handle_cmp);
    return 0;
}

static int avc_apply(void *state, ncmp_stage_ctx *ctx, rd_kafka_message_t **msgs, size_t n,
                     ncmp_err *err)
{
    avc_worker *w = state;
    PGresult *res = NULL;
    avc_handle *hs = NULL;
    avc_pending *pending = ncmp_xcalloc(n + 1, sizeof(*pending));
    size_t nh = 0, npending = 0, applied = 0, ignored = 0;
    ncmp_buf reason = NCMP_BUF_INIT;
    double t0 = ncmp_now_ms();
    int rc = -1;

    if (handles_load(w, ctx, msgs, n, &res, &hs, &nh, err) != 0)
        goto cleanup;
    if (n > 1) {
        /* patches only, and no event of the store to write: every node of
         * the batch merged with one statement */
        int watched = 1, other_op = 0;
        avc_tops tops = {0};
        if (cps_store_dataspace_watched(ctx->db, CPS_OPERATIONAL_DATASPACE, &watched, err) != 0)
            goto cleanup;
        for (size_t i = 0; !watched && !other_op && i < n; i++) {
            outcome out;
            ncmp_buf_reset(&reason);
            out = collect_one(w, ctx, msgs[i], hs, nh, &tops, &other_op, &reason, err);
            ncmp_buf_append_char(&reason, '\0');
            if (other_op)
                break;
            if (out == FAILED) {
                tops_free(&tops);
                goto cleanup;
            }
            if (out == APPLIED)
                applied++;
            else if (out == IGNORED)
                ignored++;
            else {
                pending[npending].m = msgs[i];
                pending[npending++].reason = ncmp_xstrdup(reason.data);
            }
        }
        if (!watched && !other_op) {
            rc = tops_write(ctx, &tops, err);
            tops_free(&tops);
            if (rc != 0)
                goto cleanup;
            rc = -1;
            goto done;
        }
        /* one by one after all */
        tops_free(&tops);
        for (size_t i = 0; i < npending; i++)
            free(pending[i].reason);
        npending = applied = ignored = 0;
    }
    for (size_t i = 0; i < n; i++) {
        outcome out;
        ncmp_buf_reset(&reason);
        out = apply_one(w, ctx, msgs[i], hs, nh, &reason, err);
        ncmp_buf_append_char(&reason, '\0');
        switch (out) {
        case APPLIED:
            applied++;
            break;
        case IGNORED:
            ignored++;
            break;
        case REFUSED_CLEAN:
            log_debug(AVC_APPLY_ROLE, "partition=%d offset=%lld dead-lettered: %s",
                      msgs[i]->partition, (long long)msgs[i]->offset, reason.data);
            pending[npending].m = msgs[i];
            pending[npending++].reason = ncmp_xstrdup(reason.data);
            break;
        case REFUSED_DIRTY:
            /* n == 1: the stage rolls back and dead-letters it with this
             * reason; otherwise it applies the batch again one by one */
            ncmp_err_set(err, NCMP_ERR_REJECT, "%s", reason.data);
            goto cleanup;
        case FAILED:
            goto cleanup;
        }
    }
done:
    for (size_t i = 0; i < npending; i++)
        if (ncmp_stage_reject(ctx, pending[i].m, pending[i].reason, err) != 0)
            goto cleanup;
    w->applied += applied;
    w->ignored += ignored;
    w->rejected += npending;
    log_debug(AVC_APPLY_ROLE, "batch of %zu: %zu applied, %zu ignored, %zu dead-lettered, %.1f ms",
              n, applied, ignored, npending, ncmp_now_ms() - t0);
    rc = 0;
cleanup:
    for (size_t i = 0; i < npending; i++)
        free(pending[i].reason);
    free(pending);
    free(hs);
    PQclear(res);
    ncmp_buf_free(&reason);
    return rc;
}

static const ncmp_db_stmt avc_statements[] = {{"avc_handles", SQL_HANDLES}, {NULL, NULL}};

const ncmp_stage_ops avc_apply_stage = {avc_statements, avc_init, avc_apply, avc_fini};
