#include "datasync_store.h"

#include <libyang/libyang.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasync.h"
#include "ncmp_buf.h"
#include "ncmp_log.h"
#include "ncmp_pgarray.h"
#include "ncmp_time.h"

/* The module-sync orphan cleanup's lock (workers/pipeline/modsync.c):
 * held shared while a set takes sources, so that the cleanup cannot drop
 * one of them in between. */
#define CLEANUP_LOCK "ncmp-module-cleanup"

typedef struct set_entry {
    char *name;
    datasync_set set;
} set_entry;

struct datasync_store {
    cps_schema_cache *schemas;
    pthread_mutex_t lock; /* over sets */
    set_entry **sets;     /* each entry on the heap: what set_keep returns never moves */
    size_t nsets, cap;
    char dataspace_id[24]; /* "" until known */
};

datasync_store *datasync_store_new(void)
{
    datasync_store *st = ncmp_xcalloc(1, sizeof(*st));

    st->schemas = cps_schema_cache_new();
    pthread_mutex_init(&st->lock, NULL);
    return st;
}

static void set_clear(datasync_set *s)
{
    for (size_t i = 0; i < s->nroots; i++)
        free(s->roots[i]);
    free(s->roots);
}

void datasync_store_destroy(datasync_store *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->nsets; i++) {
        free(st->sets[i]->name);
        set_clear(&st->sets[i]->set);
        free(st->sets[i]);
    }
    free(st->sets);
    pthread_mutex_destroy(&st->lock);
    cps_schema_cache_destroy(st->schemas);
    free(st);
}

/* --- schema sets ------------------------------------------------------------ */

static const datasync_set *set_find(datasync_store *st, const char *name)
{
    const datasync_set *found = NULL;

    pthread_mutex_lock(&st->lock);
    for (size_t i = 0; i < st->nsets && !found; i++)
        if (strcmp(st->sets[i]->name, name) == 0)
            found = &st->sets[i]->set;
    pthread_mutex_unlock(&st->lock);
    return found;
}

/* Keep `s` under `name` (taken over); another thread may have kept the
 * same set meanwhile: then that one is returned and `s` freed. */
static const datasync_set *set_keep(datasync_store *st, const char *name, datasync_set *s)
{
    const datasync_set *kept = NULL;

    pthread_mutex_lock(&st->lock);
    for (size_t i = 0; i < st->nsets && !kept; i++)
        if (strcmp(st->sets[i]->name, name) == 0)
            kept = &st->sets[i]->set;
    if (!kept) {
        set_entry *e = ncmp_xcalloc(1, sizeof(*e));
        if (st->nsets == st->cap) {
            st->cap = st->cap ? st->cap * 2 : 16;
            st->sets = ncmp_xrealloc(st->sets, st->cap * sizeof(*st->sets));
        }
        e->name = ncmp_xstrdup(name);
        e->set = *s;
        st->sets[st->nsets++] = e;
        kept = &e->set;
        s->roots = NULL;
        s->nroots = 0;
    }
    pthread_mutex_unlock(&st->lock);
    set_clear(s);
    return kept;
}

/* Forget every set kept, and the dataspace: one was deleted behind the
 * store's back (CPS's API may delete them). Sets a job still points at
 * stay allocated until the store goes; they are only no longer found. */
static void sets_forget(datasync_store *st)
{
    pthread_mutex_lock(&st->lock);
    for (size_t i = 0; i < st->nsets; i++) {
        st->sets[i]->name[0] = '\0'; /* matches no name */
    }
    st->dataspace_id[0] = '\0';
    pthread_mutex_unlock(&st->lock);
}

/* The dataspace's id, made when missing. */
static int dataspace_id(datasync_store *st, ncmp_db *db, char out[24], ncmp_err *err)
{
    static const char sql[] =
        "WITH n AS (INSERT INTO dataspace (name) VALUES ($1) ON CONFLICT (name) DO NOTHING"
        " RETURNING id) SELECT id FROM n UNION ALL SELECT id FROM dataspace WHERE name = $1";
    const char *params[1] = {CPS_OPERATIONAL_DATASPACE};
    PGresult *res = NULL;

    pthread_mutex_lock(&st->lock);
    snprintf(out, 24, "%s", st->dataspace_id);
    pthread_mutex_unlock(&st->lock);
    if (out[0])
        return 0;
    if (ncmp_db_query(db, sql, 1, params, &res, err) != 0)
        return -1;
    if (PQntuples(res) == 0) { /* made and deleted meanwhile: the next attempt makes it */
        PQclear(res);
        return ncmp_err_set(err, NCMP_ERR_RETRY, "dataspace %s vanished",
                            CPS_OPERATIONAL_DATASPACE);
    }
    snprintf(out, 24, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
    pthread_mutex_lock(&st->lock);
    snprintf(st->dataspace_id, sizeof(st->dataspace_id), "%s", out);
    pthread_mutex_unlock(&st->lock);
    return 0;
}

/* Make the set from the module set's members (in a transaction of its
 * own); *id is the set's, whoever made it. */
static int set_make(datasync_store *st, ncmp_db *db, const char *name, const char *module_set_id,
                    char id[24], ncmp_err *err)
{
    static const char sql_set[] =
        "WITH n AS (INSERT INTO schema_set (dataspace_id, name) VALUES ($1, $2)"
        " ON CONFLICT (dataspace_id, name) DO NOTHING RETURNING id)"
        " SELECT id, true FROM n UNION ALL"
        " SELECT id, false FROM schema_set WHERE dataspace_id = $1 AND name = $2";
    static const char sql_members[] =
        "INSERT INTO schema_set_member (schema_set_id, checksum, module_name, revision)"
        " SELECT $1, checksum, module_name, revision FROM module_set_member"
        " WHERE module_set_id = $2 ON CONFLICT DO NOTHING";
    char ds[24];
    const char *params[2];
    PGresult *res = NULL;
    int created;

    if (dataspace_id(st, db, ds, err) != 0 || ncmp_db_begin(db, err) != 0)
        return -1;
    if (ncmp_db_exec(db,
                     "SELECT pg_advisory_xact_lock_shared(hashtextextended('" CLEANUP_LOCK "', 0))",
                     err) != 0)
        goto fail;
    params[0] = ds;
    params[1] = name;
    if (ncmp_db_query(db, sql_set, 2, params, &res, err) != 0)
        goto fail;
    if (PQntuples(res) == 0) {
        /* the dataspace went since it was looked up: look again next time */
        pthread_mutex_lock(&st->lock);
        st->dataspace_id[0] = '\0';
        pthread_mutex_unlock(&st->lock);
        ncmp_err_set(err, NCMP_ERR_RETRY, "schema set %s: no dataspace %s", name,
                     CPS_OPERATIONAL_DATASPACE);
        goto fail;
    }
    snprintf(id, 24, "%s", PQgetvalue(res, 0, 0));
    created = PQgetvalue(res, 0, 1)[0] == 't';
    PQclear(res);
    res = NULL;
    if (created && module_set_id) {
        params[0] = id;
        params[1] = module_set_id;
        if (ncmp_db_query(db, sql_members, 2, params, NULL, err) != 0)
            goto fail;
    }
    if (ncmp_db_commit(db, err) != 0)
        return -1;
    if (created)
        log_info("data-sync", "schema set %s of %s made from module set %s", name,
                 CPS_OPERATIONAL_DATASPACE, module_set_id ? module_set_id : "(none)");
    return 0;
fail:
    PQclear(res);
    ncmp_db_rollback(db);
    return -1;
}

/* Every top-level data node of the implemented modules, as NCMP's
 * getRootNodeReferences names them: "module:name". */
static void set_roots(const struct ly_ctx *ctx, datasync_set *s)
{
    const struct lys_module *mod;
    uint32_t idx = 0;

    while ((mod = ly_ctx_get_module_iter(ctx, &idx))) {
        const struct lysc_node *node = NULL;
        if (!mod->implemented || !mod->compiled)
            continue;
        while ((node = lys_getnext(node, NULL, mod->compiled, 0))) {
            ncmp_buf root = NCMP_BUF_INIT;
            if (!(node->nodetype &
                  (LYS_CONTAINER | LYS_LIST | LYS_LEAF | LYS_LEAFLIST | LYS_ANYDATA)))
                continue;
            ncmp_buf_appendf(&root, "%s:%s", mod->name, node->name);
            s->roots = ncmp_xrealloc(s->roots, (s->nroots + 1) * sizeof(*s->roots));
            s->roots[s->nroots++] = root.data;
        }
    }
}

int datasync_store_set(datasync_store *st, ncmp_db *db, const char *name, const char *module_set_id,
                       const datasync_set **set, ncmp_err *err)
{
    datasync_set s = {{0}, NULL, 0};
    cps_schema *schema = NULL;
    const datasync_set *found = set_find(st, name);

    if (found) {
        *set = found;
        return 0;
    }
    if (set_make(st, db, name, module_set_id, s.id, err) != 0)
        return -1;
    if (cps_schema_get(st->schemas, db, s.id, &schema, err) != 0)
        return ncmp_err_prefix(err, "schema set %s", name);
    set_roots(cps_schema_ctx(schema), &s);
    cps_schema_release(schema);
    *set = set_keep(st, name, &s);
    return 0;
}

/* --- the batch -------------------------------------------------------------- */

/* The handles of the batch that are still READY, enabled and
 * UNSYNCHRONIZED, their rows locked (in id order, as every writer locks
 * them); eligible[i] says which. */
static int lock_eligible(ncmp_db *db, datasync_item *items, size_t n, int *eligible, ncmp_err *err)
{
    static const char sql[] =
        "SELECT id FROM cm_handle WHERE id = ANY($1::text[]) AND state = 'READY'"
        " AND data_sync_enabled AND operational_sync_state = 'UNSYNCHRONIZED'"
        " ORDER BY id FOR UPDATE";
    ncmp_buf ids = NCMP_BUF_INIT;
    const char *params[1];
    PGresult *res = NULL;
    int rc;

    ncmp_pgarray_begin(&ids);
    for (size_t i = 0; i < n; i++)
        ncmp_pgarray_add_text(&ids, items[i].id);
    ncmp_pgarray_end(&ids);
    params[0] = ids.data;
    rc = ncmp_db_query(db, sql, 1, params, &res, err);
    for (int r = 0; rc == 0 && r < PQntuples(res); r++)
        for (size_t i = 0; i < n; i++)
            if (!eligible[i] && strcmp(items[i].id, PQgetvalue(res, r, 0)) == 0) {
                eligible[i] = 1;
                break;
            }
    PQclear(res);
    ncmp_buf_free(&ids);
    return rc;
}

/* Failed reads: queued again after their back-off; reads not sent
 * (busy) after a short pause, as the same attempt. */
static int requeue_failed(ncmp_db *db, datasync_item *items, size_t n, const int *eligible,
                          const datasync_retry *retry, ncmp_err *err)
{
    static const char sql[] = "UPDATE data_sync_work w SET attempts = w.attempts + x.counted,"
                              " next_at = now() + x.ms * interval '1 millisecond'"
                              " FROM unnest($1::text[], $2::bigint[], $3::int[]) x(id, ms, counted)"
                              " WHERE w.handle_id = x.id";
    ncmp_buf ids = NCMP_BUF_INIT, ms = NCMP_BUF_INIT, counted = NCMP_BUF_INIT;
    const char *params[3];
    size_t k = 0;
    int rc = 0;

    ncmp_pgarray_begin(&ids);
    ncmp_pgarray_begin(&ms);
    ncmp_pgarray_begin(&counted);
    for (size_t i = 0; i < n; i++)
        if (eligible[i] && items[i].failed) {
            ncmp_pgarray_add_text(&ids, items[i].id);
            ncmp_pgarray_add_int(&ms, items[i].busy
                                          ? DATASYNC_BUSY_PAUSE_MS
                                          : datasync_backoff_ms(items[i].attempts + 1,
                                                                retry->initial_ms, retry->max_ms));
            ncmp_pgarray_add_int(&counted, items[i].busy ? 0 : 1);
            k++;
        }
    ncmp_pgarray_end(&ids);
    ncmp_pgarray_end(&ms);
    ncmp_pgarray_end(&counted);
    params[0] = ids.data;
    params[1] = ms.data;
    params[2] = counted.data;
    if (k)
        rc = ncmp_db_query(db, sql, 3, params, NULL, err);
    ncmp_buf_free(&ids);
    ncmp_buf_free(&ms);
    ncmp_buf_free(&counted);
    return rc;
}

/* One anchor row (id, name, schema set) of anchors_ready: its handle's
 * anchor id, or the anchor on another schema set to drop, or (not made
 * by this transaction) to empty. */
static void anchor_row(datasync_item *items, const size_t *todo, size_t k, char (*anchor_ids)[24],
                       const PGresult *res, int r, int is_new, ncmp_buf *old, size_t *nold,
                       ncmp_buf *other, size_t *nother)
{
    const char *id = PQgetvalue(res, r, 0);

    for (size_t j = 0; j < k; j++) {
        if (anchor_ids[j][0] || strcmp(items[todo[j]].id, PQgetvalue(res, r, 1)) != 0)
            continue;
        if (strcmp(items[todo[j]].set_id, PQgetvalue(res, r, 2)) != 0) {
            ncmp_pgarray_add_text(other, id);
            (*nother)++;
        } else {
            snprintf(anchor_ids[j], 24, "%s", id);
            if (!is_new) {
                ncmp_pgarray_add_text(old, id);
                (*nold)++;
            }
        }
        return;
    }
}

/* The anchors of the handles to store (index `todo`), on their schema
 * sets: made when missing, emptied when present, locked as a CPS write
 * locks its anchor (in id order); anchor_ids[j] gets each. An anchor on
 * another set (after a module upgrade) is dropped and made again. An
 * anchor this transaction made is not locked: no one else sees it before
 * the commit (a first sync, most of them, locks none).
 *
 * Every statement reaches rows through an index, one probe per handle:
 * an anchor made since the last ANALYZE has no statistics, and
 * `anchor_id = ANY(...)` over 200 of them was planned as a scan of the
 * whole fragment table (half a second at 870,000 rows, growing). */
static int anchors_ready(datasync_store *st, ncmp_db *db, datasync_item *items, const size_t *todo,
                         size_t k, char (*anchor_ids)[24], ncmp_err *err)
{
    static const char sql_make[] =
        "INSERT INTO anchor (dataspace_id, schema_set_id, name)"
        " SELECT $1, x.set_id, x.name FROM unnest($2::text[], $3::bigint[]) x(name, set_id)"
        " ON CONFLICT (dataspace_id, name) DO NOTHING RETURNING id, name, schema_set_id";
    static const char sql_lock[] = "SELECT a.id, a.name, a.schema_set_id FROM anchor a"
                                   " JOIN unnest($2::text[]) x(name) ON a.name = x.name"
                                   " WHERE a.dataspace_id = $1 ORDER BY a.id FOR NO KEY UPDATE";
    static const char sql_drop[] = "DELETE FROM anchor a USING unnest($1::bigint[]) x(id)"
                                   " WHERE a.id = x.id";
    static const char sql_empty[] = "DELETE FROM fragment f USING unnest($1::bigint[]) x(id)"
                                    " WHERE f.anchor_id = x.id";
    ncmp_buf names = NCMP_BUF_INIT, sets = NCMP_BUF_INIT, old = NCMP_BUF_INIT,
             other = NCMP_BUF_INIT, present = NCMP_BUF_INIT;
    const char *params[3];
    char ds[24];
    PGresult *made = NULL, *res = NULL;
    size_t nold = 0, nother = 0, npresent = 0;
    int rc = -1;

    if (dataspace_id(st, db, ds, err) != 0)
        return -1;
    ncmp_pgarray_begin(&names);
    ncmp_pgarray_begin(&sets);
    for (size_t j = 0; j < k; j++) {
        ncmp_pgarray_add_text(&names, items[todo[j]].id);
        ncmp_pgarray_add_text(&sets, items[todo[j]].set_id);
    }
    ncmp_pgarray_end(&names);
    ncmp_pgarray_end(&sets);
    for (int round = 0; round < 2; round++) {
        PQclear(made);
        PQclear(res);
        made = res = NULL;
        params[0] = ds;
        params[1] = names.data;
        params[2] = sets.data;
        if (ncmp_db_query(db, sql_make, 3, params, &made, err) != 0) {
            if (strstr(err->msg, "(SQLSTATE 23503)")) { /* a set deleted through CPS's API */
                sets_forget(st);
                err->cls = NCMP_ERR_RETRY;
            }
            goto cleanup;
        }
        /* the anchors that were there already: locked */
        ncmp_buf_reset(&present);
        ncmp_pgarray_begin(&present);
        npresent = 0;
        for (size_t j = 0; j < k; j++) {
            int is_new = 0;
            for (int m = 0; m < PQntuples(made) && !is_new; m++)
                is_new = strcmp(PQgetvalue(made, m, 1), items[todo[j]].id) == 0;
            if (!is_new) {
                ncmp_pgarray_add_text(&present, items[todo[j]].id);
                npresent++;
            }
        }
        ncmp_pgarray_end(&present);
        params[1] = present.data;
        if (npresent && ncmp_db_query(db, sql_lock, 2, params, &res, err) != 0)
            goto cleanup;
        for (size_t j = 0; j < k; j++)
            anchor_ids[j][0] = '\0';
        ncmp_buf_reset(&old);
        ncmp_buf_reset(&other);
        ncmp_pgarray_begin(&old);
        ncmp_pgarray_begin(&other);
        nold = nother = 0;
        for (int r = 0; r < PQntuples(made); r++)
            anchor_row(items, todo, k, anchor_ids, made, r, 1, &old, &nold, &other, &nother);
        for (int r = 0; res && r < PQntuples(res); r++)
            anchor_row(items, todo, k, anchor_ids, res, r, 0, &old, &nold, &other, &nother);
        ncmp_pgarray_end(&old);
        ncmp_pgarray_end(&other);
        if (nother == 0 || round == 1)
            break;
        /* on another schema set: dropped (its fragments with it), made again */
        params[0] = other.data;
        if (ncmp_db_query(db, sql_drop, 1, params, NULL, err) != 0)
            goto cleanup;
    }
    params[0] = old.data;
    if (nold && ncmp_db_query(db, sql_empty, 1, params, NULL, err) != 0)
        goto cleanup;
    rc = 0;
cleanup:
    PQclear(made);
    PQclear(res);
    ncmp_buf_free(&names);
    ncmp_buf_free(&sets);
    ncmp_buf_free(&old);
    ncmp_buf_free(&other);
    ncmp_buf_free(&present);
    return rc;
}

/* The rows of each root's answer, for anchor `anchor_id`, appended to
 * `copy`. A refusal of the data (the schema set's) leaves that root out,
 * as NCMP does; -1 for anything else. */
static int item_rows(datasync_store *st, ncmp_db *db, datasync_item *it, const char *anchor_id,
                     ncmp_buf *copy, ncmp_err *err)
{
    cps_target t = {0};
    ncmp_buf scratch = NCMP_BUF_INIT;
    int rc = -1;

    t.dataspace = CPS_OPERATIONAL_DATASPACE;
    t.anchor_name = it->id;
    snprintf(t.anchor_id, sizeof(t.anchor_id), "%s", anchor_id);
    if (cps_schema_get(st->schemas, db, it->set_id, &t.schema, err) != 0)
        goto cleanup;
    for (size_t r = 0; r < it->nbodies; r++) {
        const char *text = NULL;
        size_t len = 0, nodes = 0;
        cps_refusal why = {0, NULL};
        int got;
        if (!it->bodies[r])
            continue;
        ncmp_buf_reset(&scratch);
        got = datasync_first_member(it->bodies[r], it->lens[r], &scratch, &text, &len, err);
        if (got == 0)
            continue;
        if (got < 0 || cps_store_rows(&t, text, len, copy, &nodes, &why, err) != 0) {
            if (err->cls != NCMP_ERR_REJECT)
                goto cleanup;
            log_warn("data-sync", "%s: root %zu of the DMI's answer not stored: %s", it->id, r,
                     err->msg);
            continue;
        }
        it->nodes += nodes;
    }
    rc = 0;
cleanup:
    cps_target_clear(&t);
    ncmp_buf_free(&scratch);
    return rc;
}

#define SQL_COPY "COPY fragment (anchor_id, path, depth, name, attributes) FROM STDIN"

/* A cache filled is CPS's save of its data at the root: its data-updated
 * event when its anchor is subscribed. The batch is written without the
 * store's writes, so it asks once whether anything of the dataspace may be
 * subscribed, and only then resolves each anchor to announce it. */
static int announce(datasync_store *st, ncmp_db *db, const datasync_item *items, const size_t *todo,
                    size_t k, ncmp_err *err)
{
    int watched = 0;

    if (cps_store_dataspace_watched(db, CPS_OPERATIONAL_DATASPACE, &watched, err) != 0)
        return -1;
    for (size_t j = 0; watched && j < k; j++) {
        cps_target t = {0};
        cps_refusal why = {0, NULL};
        int rc = cps_store_resolve(db, st->schemas, CPS_OPERATIONAL_DATASPACE, items[todo[j]].id,
                                   &t, &why, err);
        if (rc == 0)
            rc = cps_store_announce(db, &t, "create", "/", err);
        cps_target_clear(&t);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* The stored handles SYNCHRONIZED, their queue rows gone; the queue rows
 * of handles no longer eligible gone too (unless eligible again). */
static int mark_synced(ncmp_db *db, datasync_item *items, size_t n, const int *eligible,
                       ncmp_err *err)
{
    static const char sql_synced[] =
        "WITH s AS (UPDATE cm_handle SET operational_sync_state = 'SYNCHRONIZED',"
        " operational_last_sync_time = now(), last_update_time = now()"
        " WHERE id = ANY($1::text[]) RETURNING id)"
        " DELETE FROM data_sync_work w USING s WHERE w.handle_id = s.id";
    static const char sql_gone[] =
        "DELETE FROM data_sync_work w WHERE w.handle_id = ANY($1::text[]) AND NOT EXISTS"
        " (SELECT 1 FROM cm_handle h WHERE h.id = w.handle_id AND h.state = 'READY'"
        " AND h.data_sync_enabled AND h.operational_sync_state = 'UNSYNCHRONIZED')";
    ncmp_buf synced = NCMP_BUF_INIT, gone = NCMP_BUF_INIT;
    const char *params[1];
    size_t ns = 0, ng = 0;
    int rc = 0;

    ncmp_pgarray_begin(&synced);
    ncmp_pgarray_begin(&gone);
    for (size_t i = 0; i < n; i++) {
        if (items[i].synced) {
            ncmp_pgarray_add_text(&synced, items[i].id);
            ns++;
        } else if (!eligible[i]) {
            ncmp_pgarray_add_text(&gone, items[i].id);
            ng++;
        }
    }
    ncmp_pgarray_end(&synced);
    ncmp_pgarray_end(&gone);
    params[0] = synced.data;
    if (ns)
        rc = ncmp_db_query(db, sql_synced, 1, params, NULL, err);
    params[0] = gone.data;
    if (rc == 0 && ng)
        rc = ncmp_db_query(db, sql_gone, 1, params, NULL, err);
    ncmp_buf_free(&synced);
    ncmp_buf_free(&gone);
    return rc;
}

int datasync_store_write(datasync_store *st, ncmp_db *db, datasync_item *items, size_t n,
                         const datasync_retry *retry, ncmp_err *err)
{
    int *eligible = ncmp_xcalloc(n ? n : 1, sizeof(*eligible));
    size_t *todo = ncmp_xcalloc(n ? n : 1, sizeof(*todo));
    char(*anchor_ids)[24] = ncmp_xcalloc(n ? n : 1, sizeof(*anchor_ids));
    ncmp_buf copy = NCMP_BUF_INIT;
    size_t k = 0;
    double t0 = ncmp_now_ms(), tl = t0, t1 = t0, t2 = t0, t3 = t0;
    int rc = -1;

    for (size_t i = 0; i < n; i++) {
        items[i].synced = 0;
        items[i].nodes = 0;
    }
    if (ncmp_db_begin(db, err) != 0)
        goto cleanup;
    if (lock_eligible(db, items, n, eligible, err) != 0 ||
        requeue_failed(db, items, n, eligible, retry, err) != 0)
        goto fail;
    tl = ncmp_now_ms();
    for (size_t i = 0; i < n; i++)
        if (eligible[i] && !items[i].failed) {
            if (items[i].set_id)
                todo[k++] = i;
            else
                items[i].synced = 1; /* no module set, no roots: nothing to store */
        }
    if (k && anchors_ready(st, db, items, todo, k, anchor_ids, err) != 0)
        goto fail;
    t1 = ncmp_now_ms();
    /* every handle's rows in one COPY: the anchors are locked and empty */
    for (size_t j = 0; j < k; j++) {
        datasync_item *it = &items[todo[j]];
        if (!anchor_ids[j][0]) {
            ncmp_err_set(err, NCMP_ERR_RETRY, "%s: its anchor was not made", it->id);
            goto fail;
        }
        if (item_rows(st, db, it, anchor_ids[j], &copy, err) != 0)
            goto fail;
        it->synced = 1;
    }
    t2 = ncmp_now_ms();
    if (copy.len && ncmp_db_copy(db, SQL_COPY, copy.data, copy.len, err) != 0)
        goto fail;
    t3 = ncmp_now_ms();
    if (k && announce(st, db, items, todo, k, err) != 0)
        goto fail;
    if (mark_synced(db, items, n, eligible, err) != 0 || ncmp_db_commit(db, err) != 0)
        goto fail;
    log_debug("data-sync",
              "batch of %zu: lock %.1f ms, anchors %.1f ms, rows %.1f ms, COPY %.1f ms,"
              " mark and commit %.1f ms",
              n, tl - t0, t1 - tl, t2 - t1, t3 - t2, ncmp_now_ms() - t3);
    rc = 0;
    goto cleanup;
fail:
    ncmp_db_rollback(db);
    for (size_t i = 0; i < n; i++)
        items[i].synced = 0;
cleanup:
    free(eligible);
    free(todo);
    free(anchor_ids);
    ncmp_buf_free(&copy);
    return rc;
}
