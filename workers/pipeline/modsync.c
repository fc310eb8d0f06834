/*
 * Module sync (see modsync.h for the design).
 */
#include "modsync.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modsync_queue.h"
#include "ncmp_buf.h"
#include "ncmp_db.h"
#include "ncmp_dmi.h"
#include "ncmp_fault.h"
#include "ncmp_kafka.h"
#include "ncmp_kafka_config.h"
#include "ncmp_lcm.h"
#include "ncmp_log.h"
#include "ncmp_pgarray.h"
#include "ncmp_sha256.h"
#include "ncmp_signal.h"
#include "ncmp_time.h"
#include "ncmp_yang.h"
#include "outbox.h"
#include "ncmp_singleton.h"

/* Storing sets takes this lock shared, the orphan cleanup exclusive: the
 * cleanup never deletes a source a set being stored is about to use. The
 * CPS store's schema sets (workers/cps) share the sources and the lock. */
#define CLEANUP_LOCK "ncmp-module-cleanup"

/* One handle of the batch that needs a sync. */
typedef struct ms_handle {
    const char *id, *tag, *alt, *dpi, *dmi, *props, *lock_reason;
    const char *target; /* the tag to sync to */
    int upgrade;        /* syncing to an upgrade's target tag */
    int refresh;        /* reading its stored set again (MODULE_REFRESH) */
    long long set_id;   /* the set it points at; 0 when none */
    int attempts;       /* failed attempts so far */
    ncmp_handle_state old_state;
    struct ms_group *group;
} ms_handle;

/* The handles of one target set. */
typedef struct ms_group {
    const char *tag;              /* "" for an untagged handle's own set */
    ms_handle *first;             /* its DMI is asked for the modules */
    long long set_id;             /* the stored set; 0 while unknown */
    int refresh;                  /* read set_id again, change it where it differs */
    char error[NCMP_ERR_MSG_MAX]; /* why the sync failed; "" when it did not */
    int busy;                     /* the DMI answered 503: try again soon, no back-off */
    ncmp_dmi_module_list refs;
    ncmp_dmi_module_list sources;
} ms_group;

typedef struct ms_worker {
    const ncmp_config *cfg;
    ncmp_dmi *dmi; /* the process's, shared */
    ncmp_db *db;
    ncmp_outbox outbox;
    ncmp_buf a[6];
    ncmp_buf body;
    modsync_queue tags; /* the tags of a batch's records, for the hand-over barrier */
    ncmp_buf slots;
} ms_worker;

static const char SQL_READ[] =
    "SELECT id, state, COALESCE(lock_reason, ''), module_set_tag,"
    " COALESCE(upgrade_module_set_tag, ''),"
    " CASE WHEN dmi_model_service_name <> '' THEN dmi_model_service_name"
    " ELSE dmi_service_name END,"
    " additional_properties::text, sync_attempts, COALESCE(alternate_id, ''),"
    " data_producer_identifier, COALESCE(module_set_id, 0) "
    "FROM cm_handle WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE";

static const char SQL_SETS[] = "SELECT tag, id FROM module_set WHERE tag = ANY($1::text[])";

static const char SQL_TAG_LOCK[] =
    "SELECT pg_advisory_xact_lock(hashtextextended('ncmp-module-set:' || $1, 0))";

static const char SQL_KNOWN[] =
    "SELECT DISTINCT ON (r.module_name, r.revision) r.module_name, r.revision, r.checksum "
    "FROM yang_resource r JOIN unnest($1::text[], $2::text[]) AS x(n, v)"
    " ON r.module_name = x.n AND r.revision = x.v "
    "ORDER BY r.module_name, r.revision, r.checksum";

static const char SQL_LOAD[] = "SELECT source FROM yang_resource WHERE module_name = $1"
                               " AND ($2::text IS NULL OR revision = $2) "
                               "ORDER BY revision DESC LIMIT 1";

/* New sources go by COPY (several MB per set) into a per-connection
 * staging table, then into yang_resource once each. */
static const char SQL_STAGE_TABLE[] =
    "CREATE TEMP TABLE IF NOT EXISTS ms_source_stage (checksum text, module_name text,"
    " revision text, namespace text, source text) ON COMMIT DELETE ROWS";

static const char SQL_STORE_SOURCES[] =
    "INSERT INTO yang_resource (checksum, module_name, revision, namespace, source) "
    "SELECT DISTINCT ON (checksum) checksum, module_name, revision, namespace, source"
    " FROM ms_source_stage ORDER BY checksum "
    "ON CONFLICT (checksum) DO NOTHING";

static const char SQL_NEW_TAG_SET[] = "INSERT INTO module_set (tag) VALUES ($1) RETURNING id";

static const char SQL_NEW_HANDLE_SET[] =
    "WITH gone AS (DELETE FROM module_set WHERE handle_id = $1) "
    "INSERT INTO module_set (handle_id) VALUES ($1) RETURNING id";

static const char SQL_MEMBERS[] =
    "INSERT INTO module_set_member (module_set_id, checksum, module_name, revision) "
    "SELECT $1, c, n, v FROM unnest($2::text[], $3::text[], $4::text[]) AS x(c, n, v) "
    "ON CONFLICT DO NOTHING";

/* A handle READY waits for no retry: its row in module_sync_retry, if it
 * failed before, goes (an index probe per handle of a table that holds
 * the failed handles alone, usually none: 0.03 ms for 64 handles). The
 * handles are $1 of both statements. */
#define SQL_NO_RETRY "WITH done AS (DELETE FROM module_sync_retry WHERE id = ANY($1::text[])) "

static const char SQL_READY[] = SQL_NO_RETRY
    "UPDATE cm_handle h SET state = 'READY', module_set_id = v.set_id, module_set_tag = v.tag,"
    " lock_reason = NULL, lock_details = NULL, upgrade_module_set_tag = NULL,"
    " sync_attempts = 0, data_sync_enabled = false,"
    " operational_sync_state = 'NONE_REQUESTED', last_update_time = now() "
    "FROM unnest($1::text[], $2::bigint[], $3::text[]) AS v(id, set_id, tag) "
    "WHERE h.id = v.id";

/* A refresh leaves the handle's set and data sync as they are. */
static const char SQL_REFRESHED[] =
    SQL_NO_RETRY "UPDATE cm_handle SET state = 'READY', lock_reason = NULL, lock_details = NULL,"
                 " sync_attempts = 0, last_update_time = now() "
                 "WHERE id = ANY($1::text[])";

/* What a set holds now, for a refresh to compare. */
static const char SQL_SET_MEMBERS[] =
    "SELECT module_name, revision, checksum FROM module_set_member WHERE module_set_id = $1";

static const char SQL_CLEAR_MEMBERS[] = "DELETE FROM module_set_member WHERE module_set_id = $1";

/* A module whose source changed under the same name and revision changed
 * in every set that holds it (as NCMP's shared yang_resource row does). */
static const char SQL_REPLACE_SOURCES[] =
    "UPDATE module_set_member m SET checksum = x.new "
    "FROM unnest($1::text[], $2::text[]) AS x(old, new) WHERE m.checksum = x.old";

/* A failure: the handle LOCKED (no indexed column changes, so the update
 * can stay on its page) and its next attempt due after the back-off in
 * module_sync_retry (migration 0020). */
const char modsync_sql_locked[] =
    "WITH locked AS ("
    " UPDATE cm_handle h SET state = 'LOCKED', lock_reason = v.reason, lock_details = v.details,"
    " sync_attempts = h.sync_attempts + 1, last_update_time = now() "
    " FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])"
    " AS v(id, reason, details, delay_ms) "
    " WHERE h.id = v.id RETURNING h.id, v.delay_ms) "
    "INSERT INTO module_sync_retry (id, due_at)"
    " SELECT id, now() + delay_ms * interval '1 millisecond' FROM locked "
    "ON CONFLICT (id) DO UPDATE SET due_at = EXCLUDED.due_at";

/* --- the role ------------------------------------------------------------ */

static int ms_init(void *arg, ncmp_stage_ctx *ctx, void **state, ncmp_err *err)
{
    ms_worker *w = ncmp_xcalloc(1, sizeof(*w));

    w->cfg = ctx->cfg;
    w->dmi = ((const ncmp_services *)arg)->dmi;
    w->db = ctx->db;
    ncmp_outbox_init(&w->outbox, ctx->db, ctx->cfg);
    *state = w;
    return 0;
}

static void ms_fini(void *state)
{
    ms_worker *w = state;
    if (!w)
        return;
    ncmp_outbox_free(&w->outbox);
    for (size_t i = 0; i < sizeof(w->a) / sizeof(w->a[0]); i++)
        ncmp_buf_free(&w->a[i]);
    ncmp_buf_free(&w->body);
    modsync_queue_free(&w->tags);
    ncmp_buf_free(&w->slots);
    free(w);
}

/* Sort key of a handle's group: its tag, then a sync before a refresh
 * (the tags' locks are taken in this order), or (untagged) its own id. */
static int cmp_group(const void *a, const void *b)
{
    const ms_handle *x = a, *y = b;
    int ux = !*x->target, uy = !*y->target, c;
    if (ux != uy)
        return ux - uy;
    if (ux)
        return strcmp(x->id, y->id);
    c = strcmp(x->target, y->target);
    return c ? c : x->refresh - y->refresh;
}

/* Does the handle in this row need a sync, and to which tag? */
static int wants_sync(ms_handle *h, const char *state, const char *upgrade_tag, int retry)
{
    if (strcmp(state, "ADVISED") == 0) {
        h->target = h->tag;
        return 1;
    }
    if (strcmp(state, "LOCKED") != 0)
        return 0;
    if (strcmp(h->lock_reason, "MODULE_UPGRADE") == 0 ||
        (retry && strcmp(h->lock_reason, "MODULE_UPGRADE_FAILED") == 0)) {
        h->target = upgrade_tag;
        h->upgrade = 1;
        return 1;
    }
    if (retry && strcmp(h->lock_reason, "MODULE_SYNC_FAILED") == 0) {
        h->target = h->tag;
        return 1;
    }
    if (strcmp(h->lock_reason, "MODULE_REFRESH") == 0 ||
        (retry && strcmp(h->lock_reason, "MODULE_REFRESH_FAILED") == 0)) {
        /* a handle without a set (none should be) is simply synced */
        h->target = h->tag;
        h->refresh = h->set_id != 0;
        return 1;
    }
    return 0;
}

/* --- fetching from the DMI plugin --------------------------------------- */

static void group_fail(ms_group *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void group_fail(ms_group *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->error, sizeof(g->error), fmt, ap);
    va_end(ap);
}

/* A DMI answer that is not a 200, said in one line. */
static void describe_failure(ms_group *g, const char *what, const ncmp_dmi_response *r)
{
    g->busy = r->status == 503;
    if (r->status == 0) {
        group_fail(g, "%s: %s", what, r->error);
        return;
    }
    group_fail(g, "%s: DMI plugin answered HTTP %ld%s%.200s", what, r->status,
               r->body.len ? ": " : "", r->body.len ? r->body.data : "");
}

/* The requests and answers of one round of parallel DMI calls. */
static void calls_free(ncmp_dmi_request *rq, ncmp_dmi_response *rs, ncmp_buf *urls,
                       ncmp_buf *bodies, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ncmp_dmi_response_free(&rs[i]);
        ncmp_buf_free(&urls[i]);
        ncmp_buf_free(&bodies[i]);
    }
    free(rq);
    free(rs);
    free(urls);
    free(bodies);
}

/* Ask each group's DMI plugin for its module references, all at once. */
static void fetch_references(ms_worker *w, ms_group **gs, size_t n)
{
    ncmp_dmi_request *rq = ncmp_xcalloc(n, sizeof(*rq));
    ncmp_dmi_response *rs = ncmp_xcalloc(n, sizeof(*rs));
    ncmp_buf *urls = ncmp_xcalloc(n, sizeof(*urls)), *bodies = ncmp_xcalloc(n, sizeof(*bodies));
    ncmp_err err;

    for (size_t i = 0; i < n; i++) {
        ncmp_dmi_url_modules(&urls[i], gs[i]->first->dmi, gs[i]->first->id);
        if (ncmp_dmi_body_modules(&bodies[i], gs[i]->first->props, gs[i]->tag, &err) != 0) {
            group_fail(gs[i], "module references: %s", err.msg);
            ncmp_buf_append_str(&bodies[i], "{}");
        }
        rq[i].method = "POST";
        rq[i].url = urls[i].data;
        rq[i].body = bodies[i].data;
        rq[i].body_len = bodies[i].len;
    }
    if (ncmp_dmi_call_many(w->dmi, rq, n, rs, &err) != 0) {
        for (size_t i = 0; i < n; i++)
            if (!*gs[i]->error)
                group_fail(gs[i], "module references: %s", err.msg);
    } else {
        for (size_t i = 0; i < n; i++) {
            if (*gs[i]->error)
                continue;
            if (rs[i].status != 200)
                describe_failure(gs[i], "module references", &rs[i]);
            else if (ncmp_dmi_parse_module_references(rs[i].body.data, rs[i].body.len, &gs[i]->refs,
                                                      &err) != 0)
                group_fail(gs[i], "%s", err.msg);
        }
    }
    calls_free(rq, rs, urls, bodies, n);
}

/* Which references are stored already: their checksums (NULL for new). */
static int known_checksums(ms_worker *w, const ncmp_dmi_module_list *refs, char ***sums,
                           ncmp_err *err)
{
    PGresult *res = NULL;
    const char *params[2];

    *sums = ncmp_xcalloc(refs->len + 1, sizeof(**sums));
    ncmp_pgarray_begin(&w->a[0]);
    ncmp_pgarray_begin(&w->a[1]);
    for (size_t i = 0; i < refs->len; i++) {
        ncmp_pgarray_add_text(&w->a[0], refs->items[i].name);
        ncmp_pgarray_add_text(&w->a[1], refs->items[i].revision);
    }
    ncmp_pgarray_end(&w->a[0]);
    ncmp_pgarray_end(&w->a[1]);
    params[0] = w->a[0].data;
    params[1] = w->a[1].data;
    if (ncmp_db_run(w->db, "ms_known", 2, params, &res, err) != 0)
        return -1;
    for (int r = 0; r < PQntuples(res); r++)
        for (size_t i = 0; i < refs->len; i++)
            if (!(*sums)[i] && strcmp(refs->items[i].name, PQgetvalue(res, r, 0)) == 0 &&
                strcmp(refs->items[i].revision, PQgetvalue(res, r, 1)) == 0)
                (*sums)[i] = ncmp_xstrdup(PQgetvalue(res, r, 2));
    PQclear(res);
    return 0;
}

static void free_sums(char **sums, size_t n)
{
    if (!sums)
        return;
    for (size_t i = 0; i < n; i++)
        free(sums[i]);
    free(sums);
}

/* Ask for the sources of the references not stored yet, all groups at
 * once. `sums[g]` says which are stored. */
static void fetch_sources(ms_worker *w, ms_group **gs, size_t n, char ***sums)
{
    ncmp_dmi_request *rq = ncmp_xcalloc(n, sizeof(*rq));
    ncmp_dmi_response *rs = ncmp_xcalloc(n, sizeof(*rs));
    ncmp_buf *urls = ncmp_xcalloc(n, sizeof(*urls)), *bodies = ncmp_xcalloc(n, sizeof(*bodies));
    ms_group **ask = ncmp_xcalloc(n, sizeof(*ask));
    size_t nask = 0;
    ncmp_err err;

    for (size_t i = 0; i < n; i++) {
        ms_group *g = gs[i];
        ncmp_dmi_module *missing = ncmp_xcalloc(g->refs.len + 1, sizeof(*missing));
        size_t nmissing = 0;
        if (*g->error)
            goto next;
        for (size_t k = 0; k < g->refs.len; k++)
            if (!sums[i][k])
                missing[nmissing++] = g->refs.items[k];
        if (!nmissing)
            goto next;
        ncmp_dmi_url_module_resources(&urls[nask], g->first->dmi, g->first->id);
        if (ncmp_dmi_body_module_resources(&bodies[nask], g->first->props, g->tag, missing,
                                           nmissing, &err) != 0) {
            group_fail(g, "module resources: %s", err.msg);
            goto next;
        }
        rq[nask].method = "POST";
        rq[nask].url = urls[nask].data;
        rq[nask].body = bodies[nask].data;
        rq[nask].body_len = bodies[nask].len;
        ask[nask++] = g;
    next:
        free(missing);
    }
    if (nask && ncmp_dmi_call_many(w->dmi, rq, nask, rs, &err) != 0) {
        for (size_t i = 0; i < nask; i++)
            group_fail(ask[i], "module resources: %s", err.msg);
    } else {
        for (size_t i = 0; i < nask; i++) {
            if (rs[i].status != 200)
                describe_failure(ask[i], "module resources", &rs[i]);
            else if (ncmp_dmi_parse_module_resources(rs[i].body.data, rs[i].body.len,
                                                     &ask[i]->sources, &err) != 0)
                group_fail(ask[i], "%s", err.msg);
        }
    }
    calls_free(rq, rs, urls, bodies, n);
    free(ask);
}

static char *load_stored(const char *name, const char *revision, void *arg)
{
    ms_worker *w = arg;
    PGresult *res = NULL;
    const char *params[2] = {name, revision};
    ncmp_err err;
    char *src = NULL;

    if (ncmp_db_run(w->db, "ms_load", 2, params, &res, &err) == 0 && PQntuples(res) == 1)
        src = ncmp_xstrdup(PQgetvalue(res, 0, 0));
    PQclear(res);
    return src;
}

/* The checksum of the group's reference k: stored before (sums[k]) or
 * one of the new sources. */
static const char *ref_checksum(const ms_group *g, char **sums, const ncmp_yang_source *src,
                                char (*hex)[65], size_t nsrc, size_t k)
{
    const char *sum = sums[k];
    for (size_t s = 0; s < nsrc && !sum; s++)
        if (strcmp(src[s].name, g->refs.items[k].name) == 0 &&
            strcmp(src[s].revision, g->refs.items[k].revision) == 0)
            sum = hex[s];
    return sum;
}

/* A refresh: compare what the DMI answered (every source read again:
 * sums[] are all NULL) with the stored set. Sets
 * *changed; the sources replaced under the same name and revision go to
 * w->a[3] (old checksums) and w->a[4] (new), counted in *nreplaced.
 * Every difference is logged with the handle and the tag. */
static int refresh_compare(ms_worker *w, ms_group *g, char **sums, const ncmp_yang_source *src,
                           char (*hex)[65], size_t nsrc, int *changed, size_t *nreplaced,
                           ncmp_err *err)
{
    PGresult *res = NULL;
    char id[32];
    const char *params[1] = {id};
    const char *who = g->first->id, *alt = g->first->alt, *tag = *g->tag ? g->tag : "(none)";
    int nold;

    snprintf(id, sizeof(id), "%lld", g->set_id);
    if (ncmp_db_run(w->db, "ms_set_members", 1, params, &res, err) != 0)
        return -1;
    nold = PQntuples(res);
    *changed = (size_t)nold != g->refs.len;
    *nreplaced = 0;
    ncmp_pgarray_begin(&w->a[3]);
    ncmp_pgarray_begin(&w->a[4]);
    for (size_t k = 0; k < g->refs.len; k++) {
        const char *sum = ref_checksum(g, sums, src, hex, nsrc, k);
        int row = -1;
        for (int r = 0; r < nold && row < 0; r++)
            if (strcmp(PQgetvalue(res, r, 0), g->refs.items[k].name) == 0 &&
                strcmp(PQgetvalue(res, r, 1), g->refs.items[k].revision) == 0)
                row = r;
        if (row < 0) {
            *changed = 1;
            log_info("module-sync",
                     "module refresh of %s (alternate id '%s'), ModuleSetTag %s: module %s"
                     " revision %s added",
                     who, alt, tag, g->refs.items[k].name, g->refs.items[k].revision);
        } else if (strcmp(PQgetvalue(res, row, 2), sum) != 0) {
            *changed = 1;
            ncmp_pgarray_add_text(&w->a[3], PQgetvalue(res, row, 2));
            ncmp_pgarray_add_text(&w->a[4], sum);
            (*nreplaced)++;
            log_info("module-sync",
                     "module refresh of %s (alternate id '%s'), ModuleSetTag %s: module %s"
                     " revision %s changed content",
                     who, alt, tag, g->refs.items[k].name, g->refs.items[k].revision);
        }
    }
    for (int r = 0; r < nold; r++) {
        int found = 0;
        for (size_t k = 0; k < g->refs.len && !found; k++)
            found = strcmp(PQgetvalue(res, r, 0), g->refs.items[k].name) == 0 &&
                    strcmp(PQgetvalue(res, r, 1), g->refs.items[k].revision) == 0;
        if (!found)
            log_info("module-sync",
                     "module refresh of %s (alternate id '%s'), ModuleSetTag %s: module %s"
                     " revision %s removed",
                     who, alt, tag, PQgetvalue(res, r, 0), PQgetvalue(res, r, 1));
    }
    ncmp_pgarray_end(&w->a[3]);
    ncmp_pgarray_end(&w->a[4]);
    if (!*changed)
        log_info("module-sync",
                 "module refresh of %s (alternate id '%s'), ModuleSetTag %s: no change in %zu"
                 " modules",
                 who, alt, tag, g->refs.len);
    PQclear(res);
    return 0;
}

/* Check the new sources of a group and store them and its set. A bad
 * source fails the group (its handles get LOCKED); a database error fails
 * the batch. */
static int store_group(ms_worker *w, ms_group *g, char **sums, ncmp_err *err)
{
    ncmp_yang_source *src;
    PGresult *res = NULL;
    const char *params[5];
    size_t nsrc = g->sources.len;
    char(*hex)[65];
    char id[32];
    ncmp_err yerr;
    double t0, t1;
    size_t nreplaced = 0;
    int rc = -1;

    /* the DMI must answer every reference it was asked for */
    for (size_t k = 0; k < g->refs.len; k++) {
        int found = sums[k] != NULL;
        for (size_t s = 0; s < nsrc && !found; s++)
            found = strcmp(g->sources.items[s].name, g->refs.items[k].name) == 0 &&
                    strcmp(g->sources.items[s].revision, g->refs.items[k].revision) == 0;
        if (!found) {
            group_fail(g, "module resources: no source for module %s revision %s",
                       g->refs.items[k].name,
                       *g->refs.items[k].revision ? g->refs.items[k].revision : "(none)");
            return 0;
        }
    }
    src = ncmp_xcalloc(nsrc + 1, sizeof(*src));
    hex = ncmp_xcalloc(nsrc + 1, sizeof(*hex));
    for (size_t s = 0; s < nsrc; s++) {
        src[s].name = g->sources.items[s].name;
        src[s].revision = g->sources.items[s].revision;
        src[s].source = g->sources.items[s].source;
    }
    t0 = ncmp_now_ms();
    if (ncmp_yang_check_set_with(src, nsrc, load_stored, w, &yerr) != 0) {
        group_fail(g, "%s", yerr.msg);
        rc = 0;
        goto done;
    }
    t1 = ncmp_now_ms();
    for (size_t s = 0; s < nsrc; s++) {
        size_t len = strlen(src[s].source);
        ncmp_sha256_hex(src[s].source, len, hex[s]);
    }
    if (g->refresh) {
        int changed;
        if (refresh_compare(w, g, sums, src, hex, nsrc, &changed, &nreplaced, err) != 0)
            goto done;
        if (!changed) {
            rc = 0;
            goto done;
        }
    }
    if (nsrc) {
        ncmp_buf_reset(&w->body);
        for (size_t s = 0; s < nsrc; s++) {
            const char *f[5] = {hex[s], src[s].name, src[s].revision, src[s].namespace_,
                                src[s].source};
            for (int i = 0; i < 5; i++) {
                ncmp_buf_append_copy_field(&w->body, f[i], strlen(f[i]));
                ncmp_buf_append_char(&w->body, i < 4 ? '\t' : '\n');
            }
        }
        if (ncmp_db_exec(w->db, SQL_STAGE_TABLE, err) != 0 ||
            ncmp_db_exec(w->db, "TRUNCATE ms_source_stage", err) != 0 ||
            ncmp_db_copy(w->db,
                         "COPY ms_source_stage (checksum, module_name, revision, namespace,"
                         " source) FROM STDIN",
                         w->body.data, w->body.len, err) != 0 ||
            ncmp_db_run(w->db, "ms_store_sources", 0, NULL, NULL, err) != 0)
            goto done;
    }
    log_debug("module-sync", "set %s: %zu new sources checked in %.0f ms, stored in %.0f ms",
              *g->tag ? g->tag : g->first->id, nsrc, t1 - t0, ncmp_now_ms() - t1);
    if (g->refresh) {
        /* the same set, its members as the DMI answers now */
        snprintf(id, sizeof(id), "%lld", g->set_id);
        params[0] = id;
        params[1] = w->a[3].data;
        params[2] = w->a[4].data;
        if (ncmp_db_run(w->db, "ms_clear_members", 1, params, NULL, err) != 0 ||
            (nreplaced && ncmp_db_run(w->db, "ms_replace_sources", 2, params + 1, NULL, err) != 0))
            goto done;
    } else {
        params[0] = *g->tag ? g->tag : g->first->id;
        if (ncmp_db_run(w->db, *g->tag ? "ms_new_tag_set" : "ms_new_handle_set", 1, params, &res,
                        err) != 0)
            goto done;
        g->set_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
        PQclear(res);
        res = NULL;
    }
    /* members: every reference, stored before or now */
    ncmp_pgarray_begin(&w->a[0]);
    ncmp_pgarray_begin(&w->a[1]);
    ncmp_pgarray_begin(&w->a[2]);
    for (size_t k = 0; k < g->refs.len; k++) {
        ncmp_pgarray_add_text(&w->a[0], ref_checksum(g, sums, src, hex, nsrc, k));
        ncmp_pgarray_add_text(&w->a[1], g->refs.items[k].name);
        ncmp_pgarray_add_text(&w->a[2], g->refs.items[k].revision);
    }
    ncmp_pgarray_end(&w->a[0]);
    ncmp_pgarray_end(&w->a[1]);
    ncmp_pgarray_end(&w->a[2]);
    snprintf(id, sizeof(id), "%lld", g->set_id);
    params[0] = id;
    params[1] = w->a[0].data;
    params[2] = w->a[1].data;
    params[3] = w->a[2].data;
    if (ncmp_db_run(w->db, "ms_members", 4, params, NULL, err) != 0)
        goto done;
    rc = 0;
done:
    PQclear(res);
    ncmp_yang_sources_clear(src, nsrc);
    free(src);
    free(hex);
    return rc;
}

/* Fetch and store the sets of the groups that have none. */
static int sync_groups(ms_worker *w, ms_group **gs, size_t n, ncmp_err *err)
{
    char ***sums;
    double t0, t1, t2, t3;
    int rc = 0;

    if (!n)
        return 0;
    if (ncmp_db_exec(w->db,
                     "SELECT pg_advisory_xact_lock_shared(hashtextextended('" CLEANUP_LOCK "', 0))",
                     err) != 0)
        return -1;
    t0 = ncmp_now_ms();
    fetch_references(w, gs, n);
    t1 = ncmp_now_ms();
    sums = ncmp_xcalloc(n, sizeof(*sums));
    /* a refresh reads every source again */
    for (size_t i = 0; i < n && rc == 0; i++)
        if (!*gs[i]->error && !gs[i]->refresh)
            rc = known_checksums(w, &gs[i]->refs, &sums[i], err);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            if (!sums[i]) /* none known: all asked for */
                sums[i] = ncmp_xcalloc(gs[i]->refs.len + 1, sizeof(**sums));
        t2 = ncmp_now_ms();
        fetch_sources(w, gs, n, sums);
        t3 = ncmp_now_ms();
        for (size_t i = 0; i < n && rc == 0; i++)
            if (!*gs[i]->error)
                rc = store_group(w, gs[i], sums[i], err);
        log_debug("module-sync",
                  "%zu new sets: references %.0f ms, lookup %.0f ms, sources %.0f ms, check and "
                  "store %.0f ms",
                  n, t1 - t0, t2 - t1, t3 - t2, ncmp_now_ms() - t3);
    }
    for (size_t i = 0; i < n; i++)
        free_sums(sums[i], gs[i]->refs.len);
    free(sums);
    return rc;
}

/* --- applying a batch ---------------------------------------------------- */

static void event_ready(ms_worker *w, const ms_handle *h)
{
    ncmp_lcm_event ev = {0};
    ev.cm_handle_id = h->id;
    ev.alternate_id = h->alt;
    ev.module_set_tag = h->target;
    ev.data_producer_identifier = h->dpi;
    ev.old_values.state = h->old_state;
    ev.old_values.data_sync_enabled = -1;
    ev.new_values.state = NCMP_STATE_READY;
    ev.new_values.data_sync_enabled = 0;
    ev.old_module_set_tag = h->tag; /* an upgrade changes it: v2 names the change */
    ncmp_outbox_add(&w->outbox, &ev);
}

/* The state alone changes: LOCKED, or READY again after a refresh. */
static void event_state(ms_worker *w, const ms_handle *h, ncmp_handle_state state)
{
    ncmp_outbox_add_state(&w->outbox, h->id, h->alt, h->tag, h->dpi, h->old_state, state);
}

static long long backoff_ms(const ncmp_config *cfg, int attempts)
{
    long long d = cfg->module_sync_retry_initial_ms;
    for (int i = 0; i < attempts && d < cfg->module_sync_retry_max_ms; i++)
        d *= 2;
    return d < cfg->module_sync_retry_max_ms ? d : cfg->module_sync_retry_max_ms;
}

/* Write the outcome of every handle: READY, or LOCKED with the reason. */
static int write_outcome(ms_worker *w, ms_handle *hs, size_t n, ncmp_err *err)
{
    const char *params[4];
    size_t nready = 0, nrefreshed = 0, nlocked = 0;
    char num[32], details[NCMP_ERR_MSG_MAX + 128];

    /* a refresh: READY again on the same set, data sync unchanged */
    ncmp_pgarray_begin(&w->a[0]);
    for (size_t i = 0; i < n; i++) {
        if (*hs[i].group->error || !hs[i].refresh)
            continue;
        ncmp_pgarray_add_text(&w->a[0], hs[i].id);
        event_state(w, &hs[i], NCMP_STATE_READY);
        nrefreshed++;
    }
    ncmp_pgarray_end(&w->a[0]);
    params[0] = w->a[0].data;
    if (nrefreshed && ncmp_db_run(w->db, "ms_refreshed", 1, params, NULL, err) != 0)
        return -1;
    for (int i = 0; i < 4; i++)
        ncmp_pgarray_begin(&w->a[i]);
    for (size_t i = 0; i < n; i++) {
        if (*hs[i].group->error || hs[i].refresh)
            continue;
        snprintf(num, sizeof(num), "%lld", hs[i].group->set_id);
        ncmp_pgarray_add_text(&w->a[0], hs[i].id);
        ncmp_pgarray_add_text(&w->a[1], num);
        ncmp_pgarray_add_text(&w->a[2], hs[i].target);
        event_ready(w, &hs[i]);
        nready++;
    }
    for (int i = 0; i < 3; i++) {
        ncmp_pgarray_end(&w->a[i]);
        params[i] = w->a[i].data;
    }
    if (nready && ncmp_db_run(w->db, "ms_ready", 3, params, NULL, err) != 0)
        return -1;
    for (int i = 0; i < 4; i++)
        ncmp_pgarray_begin(&w->a[i]);
    for (size_t i = 0; i < n; i++) {
        const ms_handle *h = &hs[i];
        if (!*h->group->error)
            continue;
        if (h->upgrade)
            snprintf(details, sizeof(details), "Upgrade to ModuleSetTag: %s Attempt #%d failed: %s",
                     h->target, h->attempts + 1, h->group->error);
        else
            snprintf(details, sizeof(details), "Attempt #%d failed: %s", h->attempts + 1,
                     h->group->error);
        /* a busy DMI (503) asks to come back later, not to back off */
        snprintf(num, sizeof(num), "%lld",
                 h->group->busy ? (long long)w->cfg->module_sync_retry_initial_ms
                                : backoff_ms(w->cfg, h->attempts));
        ncmp_pgarray_add_text(&w->a[0], h->id);
        ncmp_pgarray_add_text(&w->a[1], h->upgrade   ? "MODULE_UPGRADE_FAILED"
                                        : h->refresh ? "MODULE_REFRESH_FAILED"
                                                     : "MODULE_SYNC_FAILED");
        ncmp_pgarray_add_text(&w->a[2], details);
        ncmp_pgarray_add_text(&w->a[3], num);
        if (h->old_state != NCMP_STATE_LOCKED)
            event_state(w, h, NCMP_STATE_LOCKED);
        nlocked++;
    }
    for (int i = 0; i < 4; i++) {
        ncmp_pgarray_end(&w->a[i]);
        params[i] = w->a[i].data;
    }
    if (nlocked && ncmp_db_run(w->db, "ms_locked", 4, params, NULL, err) != 0)
        return -1;
    if (nready || nrefreshed || nlocked)
        log_debug("module-sync", "%zu handles READY, %zu refreshed, %zu LOCKED", nready, nrefreshed,
                  nlocked);
    return 0;
}

/* Find the stored set of every tag group; fetch those that have none. */
static int resolve_groups(ms_worker *w, ms_group *groups, size_t ngroups, ncmp_err *err)
{
    PGresult *res = NULL;
    const char *params[1];
    ms_group **fetch = ncmp_xcalloc(ngroups + 1, sizeof(*fetch));
    size_t nfetch = 0, ntags = 0;
    int rc = -1;

    for (int pass = 0; pass < 2; pass++) {
        ncmp_pgarray_begin(&w->a[0]);
        ntags = 0;
        for (size_t i = 0; i < ngroups; i++)
            if (*groups[i].tag && !groups[i].set_id) {
                ncmp_pgarray_add_text(&w->a[0], groups[i].tag);
                ntags++;
            }
        ncmp_pgarray_end(&w->a[0]);
        if (ntags) {
            params[0] = w->a[0].data;
            if (ncmp_db_run(w->db, "ms_sets", 1, params, &res, err) != 0)
                goto done;
            for (int r = 0; r < PQntuples(res); r++)
                for (size_t i = 0; i < ngroups; i++)
                    if (*groups[i].tag && !groups[i].refresh &&
                        strcmp(groups[i].tag, PQgetvalue(res, r, 0)) == 0)
                        groups[i].set_id = strtoll(PQgetvalue(res, r, 1), NULL, 10);
            PQclear(res);
            res = NULL;
        }
        if (pass == 1)
            break;
        /* one fetch per tag across workers and processes: take the tags'
         * locks (groups are sorted by tag, so always in the same order),
         * then look again: a set stored meanwhile needs no fetch. A
         * refresh changes its tag's set under the same lock. */
        for (size_t i = 0; i < ngroups; i++) {
            if (!*groups[i].tag || (groups[i].set_id && !groups[i].refresh))
                continue;
            params[0] = groups[i].tag;
            if (ncmp_db_run(w->db, "ms_tag_lock", 1, params, NULL, err) != 0)
                goto done;
        }
    }
    for (size_t i = 0; i < ngroups; i++)
        if (!groups[i].set_id || groups[i].refresh)
            fetch[nfetch++] = &groups[i];
    rc = sync_groups(w, fetch, nfetch, err);
done:
    PQclear(res);
    free(fetch);
    return rc;
}

static int ms_apply(void *state, ncmp_stage_ctx *ctx, rd_kafka_message_t **msgs, size_t n,
                    ncmp_err *err)
{
    ms_worker *w = state;
    const char **ids = NULL;
    size_t nids = 0, cap = 0, nh = 0, ngroups = 0;
    int *retry_of = NULL, any_retry = 0;
    json_object **roots = ncmp_xcalloc(n + 1, sizeof(*roots));
    PGresult *res = NULL;
    ms_handle *hs = NULL;
    ms_group *groups = NULL;
    const char *params[1];
    double t0 = ncmp_now_ms();
    int rc = -1;

    ncmp_outbox_reset(&w->outbox);
    modsync_queue_reset(&w->tags);
    for (size_t i = 0; i < n; i++) {
        const char *tag, **rids;
        size_t nr;
        int retry;
        ncmp_err perr;
        if (modsync_record_decode(msgs[i]->payload, msgs[i]->len, &roots[i], &tag, &rids, &nr,
                                  &retry, &perr) != 0) {
            if (ncmp_stage_reject(ctx, msgs[i], perr.msg, err) != 0)
                goto done;
            continue;
        }
        if (nids + nr > cap) {
            cap = (nids + nr) * 2;
            ids = ncmp_xrealloc(ids, cap * sizeof(*ids));
            retry_of = ncmp_xrealloc(retry_of, cap * sizeof(*retry_of));
        }
        for (size_t k = 0; k < nr; k++) {
            retry_of[nids] = retry;
            ids[nids++] = rids[k];
        }
        any_retry |= retry;
        modsync_queue_add(&w->tags, tag, "");
        free(rids);
    }
    modsync_queue_slots(&w->tags, &w->slots);
    if (!nids) {
        rc = 0;
        goto done;
    }
    /* wait until the transactions that handed these handles over ended */
    params[0] = w->slots.data;
    if (ncmp_db_run(w->db, "ms_handover_barrier", 1, params, NULL, err) != 0)
        goto done;
    ncmp_pgarray_begin(&w->a[0]);
    for (size_t i = 0; i < nids; i++)
        ncmp_pgarray_add_text(&w->a[0], ids[i]);
    ncmp_pgarray_end(&w->a[0]);
    params[0] = w->a[0].data;
    if (ncmp_db_run(w->db, "ms_read", 1, params, &res, err) != 0)
        goto done;
    hs = ncmp_xcalloc((size_t)PQntuples(res) + 1, sizeof(*hs));
    for (int r = 0; r < PQntuples(res); r++) {
        ms_handle *h = &hs[nh];
        int retry = 0;
        if (any_retry)
            for (size_t i = 0; i < nids && !retry; i++)
                retry = retry_of[i] && strcmp(ids[i], PQgetvalue(res, r, 0)) == 0;
        h->id = PQgetvalue(res, r, 0);
        h->lock_reason = PQgetvalue(res, r, 2);
        h->tag = PQgetvalue(res, r, 3);
        h->dmi = PQgetvalue(res, r, 5);
        h->props = PQgetvalue(res, r, 6);
        h->attempts = atoi(PQgetvalue(res, r, 7));
        h->alt = PQgetvalue(res, r, 8);
        h->dpi = PQgetvalue(res, r, 9);
        h->old_state = ncmp_state_parse(PQgetvalue(res, r, 1));
        h->set_id = strtoll(PQgetvalue(res, r, 10), NULL, 10);
        if (wants_sync(h, PQgetvalue(res, r, 1), PQgetvalue(res, r, 4), retry))
            nh++;
    }
    if (!nh) {
        rc = 0;
        goto done;
    }
    qsort(hs, nh, sizeof(*hs), cmp_group);
    groups = ncmp_xcalloc(nh, sizeof(*groups));
    for (size_t i = 0; i < nh; i++) {
        if (!ngroups || cmp_group(&hs[i], groups[ngroups - 1].first) != 0) {
            groups[ngroups].tag = hs[i].target;
            groups[ngroups].first = &hs[i];
            groups[ngroups].refresh = hs[i].refresh;
            groups[ngroups].set_id = hs[i].refresh ? hs[i].set_id : 0;
            ngroups++;
        }
        hs[i].group = &groups[ngroups - 1];
    }
    if (resolve_groups(w, groups, ngroups, err) != 0 || write_outcome(w, hs, nh, err) != 0 ||
        ncmp_outbox_flush(&w->outbox, err) != 0)
        goto done;
    log_debug("module-sync", "batch of %zu records: %zu handles in %zu sets, %.0f ms", n, nh,
              ngroups, ncmp_now_ms() - t0);
    rc = 0;
done:
    for (size_t i = 0; i < ngroups; i++) {
        ncmp_dmi_module_list_free(&groups[i].refs);
        ncmp_dmi_module_list_free(&groups[i].sources);
    }
    free(groups);
    free(hs);
    PQclear(res);
    for (size_t i = 0; i < n; i++)
        json_object_put(roots[i]);
    free(roots);
    free(ids);
    free(retry_of);
    return rc;
}

static const ncmp_db_stmt ms_statements[] = {{"ms_read", SQL_READ},
                                             {"ms_handover_barrier", MODSYNC_SQL_HANDOVER_BARRIER},
                                             {"ms_sets", SQL_SETS},
                                             {"ms_tag_lock", SQL_TAG_LOCK},
                                             {"ms_known", SQL_KNOWN},
                                             {"ms_load", SQL_LOAD},
                                             {"ms_store_sources", SQL_STORE_SOURCES},
                                             {"ms_new_tag_set", SQL_NEW_TAG_SET},
                                             {"ms_new_handle_set", SQL_NEW_HANDLE_SET},
                                             {"ms_members", SQL_MEMBERS},
                                             {"ms_ready", SQL_READY},
                                             {"ms_locked", modsync_sql_locked},
                                             {"ms_refreshed", SQL_REFRESHED},
                                             {"ms_set_members", SQL_SET_MEMBERS},
                                             {"ms_clear_members", SQL_CLEAR_MEMBERS},
                                             {"ms_replace_sources", SQL_REPLACE_SOURCES},
                                             {NULL, NULL}};

const ncmp_stage_ops modsync_stage = {ms_statements, ms_init, ms_apply, ms_fini};

/* --- the sweep ------------------------------------------------------------ */

struct modsync_sweep {
    const ncmp_config *cfg;
    ncmp_producer *producer; /* the process's, shared */
    double next_cleanup;     /* ncmp_now_ms() of the next orphan cleanup */
    double next_missed;      /* ncmp_now_ms() of the next look for lost hand-overs */
};

/* Handles due: failed ones whose back-off is over (a retry), and handles
 * left ADVISED, MODULE_UPGRADE or MODULE_REFRESH past the grace period
 * (missed). The retries are found through the index of module_sync_retry
 * (migration 0020), each joined to its handle, which must still be one
 * whose module sync failed; the missed ones have no index to be found by
 * (one on the state would make every state change of module sync update
 * every index, migration 0006) and take a scan of the table, 24 ms at
 * 50,000 handles and a second or more at 1,000,000: so every sweep looks
 * for retries, and for both only every half grace period
 * (modsync_missed_interval_ms). */
#define SQL_DUE_COLUMNS                                                                            \
    "SELECT CASE WHEN h.lock_reason IN ('MODULE_UPGRADE', 'MODULE_UPGRADE_FAILED')"                \
    " THEN COALESCE(h.upgrade_module_set_tag, '') ELSE h.module_set_tag END, h.id,"                \
    " h.state = 'LOCKED' AND h.lock_reason NOT IN ('MODULE_UPGRADE', 'MODULE_REFRESH') "
#define SQL_DUE_RETRIES                                                                            \
    SQL_DUE_COLUMNS "FROM module_sync_retry r JOIN cm_handle h ON h.id = r.id "                    \
                    "WHERE r.due_at <= now() AND h.state = 'LOCKED' AND h.lock_reason IN"          \
                    " ('MODULE_SYNC_FAILED', 'MODULE_UPGRADE_FAILED', 'MODULE_REFRESH_FAILED')"
const char modsync_sql_due_retries[] = SQL_DUE_RETRIES " ORDER BY 1, 2 LIMIT 50000";
const char modsync_sql_due_all[] =
    SQL_DUE_RETRIES " UNION ALL " SQL_DUE_COLUMNS "FROM cm_handle h "
                    "WHERE (h.state = 'ADVISED' OR (h.state = 'LOCKED' AND h.lock_reason IN"
                    " ('MODULE_UPGRADE', 'MODULE_REFRESH')))"
                    " AND h.last_update_time < now() - $1::bigint * interval '1 millisecond' "
                    "ORDER BY 1, 2 LIMIT 50000";

double modsync_missed_interval_ms(int sweep_interval_ms, int advised_grace_ms)
{
    return advised_grace_ms / 2 > sweep_interval_ms ? advised_grace_ms / 2.0 : sweep_interval_ms;
}

/* Handed over again: not due again before the grace period (a row of
 * module_sync_retry alone: cm_handle is not written). */
const char modsync_sql_claim[] =
    "UPDATE module_sync_retry SET due_at = now() + $2::bigint * interval '1 millisecond' "
    "WHERE id = ANY($1::text[])";

/* Rows of module_sync_retry whose handle has gone (deregistered while it
 * waited for a retry), deleted with the cleanup. In a transaction of its
 * own at REPEATABLE READ: a handle registered again with the same id and
 * failed meanwhile writes its row again, and that row must not be deleted
 * on the strength of a snapshot from before it (at READ COMMITTED the
 * DELETE would recheck the row, not the NOT EXISTS); the concurrent write
 * makes this DELETE fail instead, and the next cleanup does it. */
static const char SQL_FORGET_GONE[] =
    "DELETE FROM module_sync_retry r"
    " WHERE NOT EXISTS (SELECT 1 FROM cm_handle h WHERE h.id = r.id)";

static const char SQL_CLEANUP[] =
    "SELECT pg_advisory_xact_lock(hashtextextended('" CLEANUP_LOCK "', 0));"
    "DELETE FROM module_set s"
    " WHERE NOT EXISTS (SELECT 1 FROM cm_handle h WHERE h.module_set_id = s.id);"
    "DELETE FROM yang_resource r"
    " WHERE NOT EXISTS (SELECT 1 FROM module_set_member m WHERE m.checksum = r.checksum)"
    " AND NOT EXISTS (SELECT 1 FROM schema_set_member c WHERE c.checksum = r.checksum);";

static int sweep_once(modsync_sweep *s, ncmp_db *db, ncmp_producer *p, ncmp_err *err)
{
    PGresult *res = NULL;
    modsync_queue q = {0}, qr = {0};
    ncmp_delivery d;
    ncmp_buf ids = NCMP_BUF_INIT;
    char grace[32];
    const char *params[2] = {grace, NULL};
    int missed = ncmp_now_ms() >= s->next_missed; /* a look for lost hand-overs too */
    int rc = -1;

    snprintf(grace, sizeof(grace), "%d", s->cfg->module_sync_advised_grace_ms);
    if (ncmp_db_query(db, missed ? modsync_sql_due_all : modsync_sql_due_retries, missed ? 1 : 0,
                      params, &res, err) != 0)
        return -1;
    if (missed)
        s->next_missed =
            ncmp_now_ms() + modsync_missed_interval_ms(s->cfg->module_sync_sweep_interval_ms,
                                                       s->cfg->module_sync_advised_grace_ms);
    if (PQntuples(res) == 0) {
        PQclear(res);
        return 0;
    }
    ncmp_delivery_init(&d);
    qr.retry = 1;
    ncmp_pgarray_begin(&ids);
    for (int r = 0; r < PQntuples(res); r++) {
        int retry = strcmp(PQgetvalue(res, r, 2), "t") == 0;
        modsync_queue_add(retry ? &qr : &q, PQgetvalue(res, r, 0), PQgetvalue(res, r, 1));
        if (retry)
            ncmp_pgarray_add_text(&ids, PQgetvalue(res, r, 1));
    }
    ncmp_pgarray_end(&ids);
    log_info("module-sync", "sweep: %zu handles due for a retry, %zu handed over again", qr.n, q.n);
    params[0] = ids.data;
    params[1] = grace;
    if (ncmp_db_begin(db, err) != 0)
        goto done;
    if (ncmp_db_query(db, modsync_sql_claim, 2, params, NULL, err) != 0 ||
        modsync_queue_send(&q, p, &d, s->cfg->module_sync_topic, err) != 0 ||
        modsync_queue_send(&qr, p, &d, s->cfg->module_sync_topic, err) != 0 ||
        ncmp_producer_wait(p, &d, 30000, err) != 0) {
        ncmp_db_rollback(db);
        goto done;
    }
    rc = ncmp_db_commit(db, err);
done:
    modsync_queue_free(&q);
    modsync_queue_free(&qr);
    ncmp_buf_free(&ids);
    PQclear(res);
    return rc;
}

static int cleanup_once(ncmp_db *db, ncmp_err *err)
{
    if (ncmp_db_begin(db, err) != 0)
        return -1;
    if (ncmp_db_exec(db, SQL_CLEANUP, err) != 0) {
        ncmp_db_rollback(db);
        return -1;
    }
    if (ncmp_db_commit(db, err) != 0)
        return -1;
    if (ncmp_db_exec(db, "BEGIN ISOLATION LEVEL REPEATABLE READ", err) != 0)
        return -1;
    if (ncmp_db_exec(db, SQL_FORGET_GONE, err) != 0 || ncmp_db_commit(db, err) != 0) {
        ncmp_db_rollback(db);
        if (err->cls != NCMP_ERR_RETRY)
            return -1;
        log_info("module-sync", "retry rows of deregistered handles left for the next cleanup: %s",
                 err->msg);
    }
    return 0;
}

/* One round of the process that sweeps. */
static int sweep_round(void *arg, ncmp_db *db, ncmp_err *err)
{
    modsync_sweep *s = arg;

    if (sweep_once(s, db, s->producer, err) != 0)
        return -1;
    if (ncmp_now_ms() >= s->next_cleanup) {
        if (cleanup_once(db, err) != 0)
            return -1;
        s->next_cleanup = ncmp_now_ms() + s->cfg->module_sync_cleanup_interval_s * 1000.0;
    }
    return 0;
}

int modsync_sweep_task(const ncmp_services *svc, ncmp_singleton_task *task, ncmp_err *err)
{
    modsync_sweep *s = ncmp_xcalloc(1, sizeof(*s));

    s->cfg = svc->cfg;
    s->producer = svc->producer;
    s->next_cleanup = ncmp_now_ms() + s->cfg->module_sync_cleanup_interval_s * 1000.0;
    *task = (ncmp_singleton_task){.component = "module-sync",
                                  .what = "sweep",
                                  .lock = "ncmp-module-sweep",
                                  .leader_msg = "this process sweeps for module sync",
                                  .idle_ms = s->cfg->module_sync_sweep_interval_ms,
                                  .round = sweep_round,
                                  .arg = s};
    return 0;
}

void modsync_sweep_free(void *arg)
{
    free(arg);
}
